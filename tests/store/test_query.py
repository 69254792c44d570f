"""The guarded SQL surface: Store.query (tracescore.store)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ingest.otlp_payloads import traces_request

from tracescore.ingest import decode_traces_protobuf
from tracescore.store import InvalidSql, QueryTimeout, Store


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One store with five spans, shared by this module's tests (they only read)."""
    path = tmp_path_factory.mktemp("query") / "q.duckdb"
    with Store(path, sql_timeout_s=10) as store:
        store.write_spans_sync(decode_traces_protobuf(traces_request(5).SerializeToString()))
        yield store


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM spans", "read-only"),
        ("INSERT INTO scores (score_id) VALUES ('x')", "read-only"),
        ("UPDATE spans SET name = 'x'", "read-only"),
        ("DROP TABLE spans", "read-only"),
        ("CREATE TABLE t AS SELECT 1", "read-only"),
        ("SELECT * FROM read_csv('/etc/passwd')", "cannot read or write files"),
        ("SELECT * FROM read_text('/etc/hostname')", "cannot read or write files"),
        ("SELECT * FROM glob('/etc/*')", "cannot read or write files"),
        ("SELECT * FROM '/etc/passwd'", "does not exist"),
        ("COPY spans TO '/tmp/spans.csv'", "COPY cannot run here"),
        ("ATTACH '/tmp/other.duckdb' AS other", "ATTACH cannot run here"),
        ("INSTALL httpfs", "INSTALL and LOAD"),
        ("LOAD httpfs", "INSTALL and LOAD"),
        ("SET threads = 1", "SET cannot run here"),
        ("PRAGMA table_info('spans')", "PRAGMA cannot run here"),
        ("SELECT 1; SELECT 2", "exactly one statement"),
        ("SELECT 1; DELETE FROM spans", "exactly one statement"),
        ("", "empty"),
        ("SELEC 1", "does not parse"),
        ("SELECT * FROM query('DELETE FROM spans')", "SELECT"),
    ],
)
def test_refused(filled: Store, sql: str, message: str) -> None:
    with pytest.raises(InvalidSql, match=message):
        filled.query(sql)
    assert filled.query("SELECT count(*) FROM spans").rows == [[5]]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM spans",
        "FROM spans SELECT count(*)",
        "WITH s AS (SELECT * FROM spans) SELECT count(*) FROM s",
        "-- a comment\nSELECT count(*) FROM spans",
    ],
)
def test_read_forms_are_allowed(filled: Store, sql: str) -> None:
    assert filled.query(sql).rows == [[5]]


def test_describe_and_show(filled: Store) -> None:
    assert "trace_id" in [row[0] for row in filled.query("DESCRIBE spans").rows]
    assert ["spans"] in filled.query("SHOW TABLES").rows


def test_row_cap_and_params(filled: Store) -> None:
    result = filled.query("SELECT name FROM spans ORDER BY name", row_limit=3)
    assert result.columns == ["name"]
    assert result.rows == [["span-0"], ["span-1"], ["span-2"]]
    assert result.truncated is True
    whole = filled.query("SELECT name FROM spans WHERE name = ?", ["span-4"])
    assert (whole.rows, whole.truncated) == ([["span-4"]], False)


def test_values_are_json_safe(filled: Store) -> None:
    result = filled.query(
        "SELECT start_time, attributes, duration_ms, 'nan'::DOUBLE AS n, "
        "INTERVAL 2 SECOND AS i, 1.5::DECIMAL(4,2) AS d FROM spans ORDER BY start_time LIMIT 1"
    )
    start, attributes, duration, nan, interval, decimal = result.rows[0]
    assert start == "2023-11-14T22:13:20"
    assert attributes.startswith("{")
    assert duration == 500.0
    assert (nan, interval, decimal) == (None, 2.0, 1.5)


def test_a_query_that_runs_forever_is_stopped(filled: Store) -> None:
    with pytest.raises(QueryTimeout, match="stopped"):
        filled.query(
            "SELECT count(*) FROM range(100000000) a, range(100000000) b "
            "WHERE a.range * b.range = -1",
            timeout_s=0.5,
        )
    assert filled.query("SELECT count(*) FROM spans").rows == [[5]]
