"""Arrow tables read by name (``arrow_view``): the writer's views registered once per connection,
lent to its statements, surviving rollbacks, invisible to readers (tracescore.store)."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa
import pytest
from ingest.otlp_payloads import traces_request

from tracescore.store import InvalidSql, Store, arrow_view, insert_arrow

_VIEWS = "SELECT view_name FROM duckdb_views() WHERE view_name LIKE '__tracescore_%'"


def _numbers(start: int, count: int) -> Any:
    return pa.table({"n": list(range(start, start + count))})


def test_off_the_writer_a_view_lives_for_its_block_only() -> None:
    conn = duckdb.connect(":memory:")
    with arrow_view(conn, _numbers(0, 3)) as view:
        assert conn.execute(f"SELECT sum(n) FROM {view}").fetchone() == (3,)
        assert [name for (name,) in conn.execute(_VIEWS).fetchall()] == [view]
    assert conn.execute(_VIEWS).fetchall() == []


def test_write_functions_read_more_tables_at_once_than_the_writer_has_views(
    store: Store,
) -> None:
    """Eight tables held at once (the writer registers four views): each statement reads its
    own table, whether a pooled view or one registered for it."""

    def write(conn: Any) -> list[int]:
        conn.execute("CREATE TABLE numbers (n BIGINT)")
        sums: list[int] = []

        def nest(depth: int) -> None:
            if depth == 8:
                return
            with arrow_view(conn, _numbers(depth * 10, 3)) as view:
                nest(depth + 1)
                conn.execute(f"INSERT INTO numbers SELECT n FROM {view}")
                sums.append(conn.execute(f"SELECT sum(n) FROM {view}").fetchone()[0])

        nest(0)
        return sums

    sums = store.write_sync(write)
    assert sums == [3 * d * 10 + 3 for d in reversed(range(8))]
    assert store.read("SELECT count(*) AS n, sum(n) AS total FROM numbers") == [
        {"n": 24, "total": sum(sums)}
    ]


def test_the_writer_views_survive_a_rolled_back_write(store: Store) -> None:
    """A write that fails after reading a view rolls back; the views were registered outside
    any transaction, so the next commits (spans, the traces fold, a write function) read theirs."""

    store.write_sync(lambda conn: conn.execute("CREATE TABLE numbers (n BIGINT)"))

    def fail(conn: Any) -> None:
        insert_arrow(conn, "numbers", _numbers(0, 2))
        raise RuntimeError("rolled back on purpose")

    with pytest.raises(RuntimeError, match="on purpose"):
        store.write_sync(fail)
    store.write_spans_sync([dict(row) for row in _spans(3)])
    store.write_sync(lambda conn: insert_arrow(conn, "numbers", _numbers(5, 2)))
    assert store.read("SELECT n FROM numbers ORDER BY n") == [{"n": 5}, {"n": 6}]
    assert store.read("SELECT count(*) AS n FROM spans") == [{"n": 3}]
    assert store.read("SELECT sum(span_count) AS n FROM traces") == [{"n": 3}]


def test_readers_cannot_see_the_writer_views(store: Store) -> None:
    """The batch a commit holds is never readable by user SQL: views are per connection."""
    store.write_spans_sync([dict(row) for row in _spans(2)])
    names = [row["view_name"] for row in store.read(_VIEWS)]
    assert names == []
    with pytest.raises(InvalidSql, match="__tracescore_arrow_0"):
        store.query("SELECT * FROM __tracescore_arrow_0")


def _spans(traces: int) -> list[dict[str, Any]]:
    from tracescore.ingest import span_dicts_from_otlp

    return span_dicts_from_otlp(traces_request(traces).SerializeToString())
