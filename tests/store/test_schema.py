"""Schema and migrations (tracescore.store._schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracescore.store import MIGRATIONS, SCHEMA_VERSION, Store

SCORES = (
    "score_id trace_id span_id project scorer_id scorer_name scorer_version source eval_run_id "
    "status score reason run_id created_at duration_ms preprocess_step_result "
    "analyze_step_result preprocess_prompt analyze_prompt generate_score_prompt "
    "generate_reason_prompt input output ground_truth error metadata judge_input_tokens "
    "judge_output_tokens judge_total_tokens judge_reasoning_tokens judge_cached_input_tokens "
    "judge_cost session_id experiment_id cost_source decided_by"
).split()
JUDGE_EXECUTIONS = (
    "execution_id score_id trace_id scorer_id step status prompt judge_model_id judge_provider "
    "attempt_count model_call_count duration_ms output raw_output finish_reason input_tokens "
    "output_tokens total_tokens reasoning_tokens cached_input_tokens "
    "cache_creation_input_tokens cost_amount cost_unit cost_source error_name error_message "
    "error_code created_at response_model system_fingerprint cached saved_cost"
).split()
SCORING_DECISIONS = (
    "trace_id span_id scorer_id scorer_version decision attempts last_error next_attempt_at "
    "score_id created_at updated_at session_id"
).split()
SPANS = (
    "trace_id span_id parent_span_id project service_name name kind start_time end_time "
    "duration_ms status_code status_message attributes resource_attributes events links "
    "scope_name scope_version received_at"
).split()


def _columns(store: Store, table: str) -> list[str]:
    rows = store.read(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position",
        [table],
    )
    return [row["column_name"] for row in rows]


def test_tables_have_the_agreed_columns(store: Store) -> None:
    assert _columns(store, "scores") == SCORES
    assert _columns(store, "judge_executions") == JUDGE_EXECUTIONS
    assert _columns(store, "scoring_decisions") == SCORING_DECISIONS
    assert _columns(store, "spans") == SPANS
    assert "event_name" in _columns(store, "logs")
    traces = _columns(store, "traces")
    for column in ("trace_id", "project", "service_name", "root_span_id", "start_time",
                   "end_time", "span_count", "error_count"):
        assert column in traces
    assert _columns(store, "sessions") == (
        "session_id project service_name first_trace_at last_trace_at trace_count turn_count "
        "total_tokens cost_usd error_count user_id last_trace_id last_received_at").split()
    assert _columns(store, "monitor_events") == (
        "event_id monitor_id scorer_id state value threshold window_start window_end samples "
        "notified_at error created_at kind detail").split()


def test_span_times_are_timestamp_ns(store: Store) -> None:
    types = {
        row["column_name"]: row["data_type"]
        for row in store.read(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'spans'"
        )
    }
    assert types["start_time"] == "TIMESTAMP_NS"
    assert types["attributes"] == "JSON"


def test_migrations_are_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "x.duckdb"

    with Store(path) as first:
        first_rows = first.read("SELECT version FROM schema_version ORDER BY version")
    with Store(path) as second:
        second_rows = second.read("SELECT version FROM schema_version")
    applied = [{"version": version} for version, _, _ in MIGRATIONS]  # numbers may have gaps
    assert first_rows == second_rows == applied


def test_a_version_2_database_gains_the_dataset_tables_and_scores_experiment_id(
    tmp_path: Path,
) -> None:
    """A database written before migrations 3 and 4 (its scores without session_id and
    experiment_id) upgrades in place: the four dataset tables appear and score rows with an
    experiment id write and read back."""
    import duckdb


    path = tmp_path / "old.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                 "description VARCHAR, applied_at TIMESTAMP)")
    for version, description, statements in MIGRATIONS[:2]:
        for statement in statements():
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, now())", [version, description])
    # as migration 1 made scores then (the later migrations add these at the end, in order)
    for column in ("experiment_id", "session_id", "cost_source", "decided_by"):
        conn.execute(f"ALTER TABLE scores DROP COLUMN {column}")
    conn.execute("ALTER TABLE scoring_decisions DROP COLUMN session_id")
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == MIGRATIONS[-1][0] >= 11
        assert "experiment_id" in _columns(store, "scores")
        for table in ("datasets", "dataset_items", "experiments", "experiment_results"):
            assert _columns(store, table)
        store.write_scores_sync([{"score_id": "s1", "scorer_id": "x", "score": 0.5,
                                  "experiment_id": "e1"}])
        assert store.read("SELECT experiment_id FROM scores") == [{"experiment_id": "e1"}]


def _keyed_as_before(path: Path, table: str, create: str, *, version: int) -> None:
    """Make ``path`` look as it did before migration ``version``: ``table`` rebuilt with
    ``create`` (its old statement, with the primary key) and the later versions unrecorded."""
    import duckdb

    conn = duckdb.connect(str(path))
    conn.execute("DELETE FROM schema_version WHERE version >= ?", [version])
    conn.execute(f"CREATE TABLE {table}_old AS SELECT * FROM {table}")
    conn.execute(f"DROP TABLE {table}")
    conn.execute(create)
    conn.execute(f"INSERT INTO {table} SELECT * FROM {table}_old")
    conn.execute(f"DROP TABLE {table}_old")
    assert _primary_keys(conn, table) == 1
    conn.close()


def _primary_keys(conn: Any, table: str) -> int:
    return int(conn.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? "
                            "AND constraint_type = 'PRIMARY KEY'", [table]).fetchone()[0])


def test_a_version_4_database_loses_the_spans_key_index_and_keeps_spans_unique(
    tmp_path: Path,
) -> None:
    """Migration 5 rebuilds ``spans`` without its primary-key index, keeping every row; the
    writer then keeps keys unique itself (a resend of a stored span adds nothing)."""
    import duckdb
    from ingest.otlp_payloads import traces_request

    from tracescore.ingest import decode_traces_protobuf

    path = tmp_path / "v4.duckdb"
    with Store(path) as store:  # a database of today's schema, with three spans
        body = traces_request(3, trace_id=b"\x05" * 16).SerializeToString()
        store.write_spans_sync(decode_traces_protobuf(body))
    _keyed_as_before(path, "spans", MIGRATIONS[0][2]()[0], version=5)  # migration 1's table
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.read("SELECT count(*) AS n FROM spans") == [{"n": 3}]
        store.write_spans_sync(decode_traces_protobuf(body))
        assert store.read("SELECT count(*) AS n FROM spans") == [{"n": 3}]
    conn = duckdb.connect(str(path))
    assert _primary_keys(conn, "spans") == 0
    conn.close()


def test_a_version_5_database_loses_the_traces_key_index_and_keeps_one_row_per_trace(
    tmp_path: Path,
) -> None:
    """Migration 6 rebuilds ``traces`` without its primary-key index, keeping every row; the
    writer's trace index, read from the table, then folds a late span of a stored trace into
    its row (no second row) and a resend adds nothing."""
    import duckdb
    from ingest.otlp_payloads import traces_request

    from tracescore.ingest import decode_traces_protobuf

    path = tmp_path / "v5.duckdb"
    first = traces_request(3, trace_id=b"\x06" * 16).SerializeToString()
    other = traces_request(2, trace_id=b"\x07" * 16).SerializeToString()
    with Store(path) as store:
        store.write_spans_sync(decode_traces_protobuf(first))
        store.write_spans_sync(decode_traces_protobuf(other))
    _keyed_as_before(path, "traces", MIGRATIONS[1][2]()[1], version=6)  # migration 2's table
    late = traces_request(1, trace_id=b"\x06" * 16).SerializeToString()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        store.write_spans_sync(decode_traces_protobuf(first))  # a resend
        store.write_spans_sync(decode_traces_protobuf(late))  # a late span of a stored trace
        assert store.read("SELECT trace_id, count(*) AS n FROM traces GROUP BY 1 ORDER BY 1") == [
            {"trace_id": "06" * 16, "n": 1}, {"trace_id": "07" * 16, "n": 1}]
        assert store.read("SELECT count(*) AS n FROM spans") == [{"n": 6}]
        assert store.stats().traces_exact_retries == 0
    conn = duckdb.connect(str(path))
    assert _primary_keys(conn, "traces") == 0
    conn.close()


def test_a_version_6_database_numbers_its_experiment_results(tmp_path: Path) -> None:
    """Migration 7 adds ``experiment_results.repetition`` and numbers the rows stored before
    (a body posted twice stored its results twice): no row is lost, the key then holds, and
    writing the same results again replaces them."""
    import duckdb

    from tracescore.store import experiment_writer

    path = tmp_path / "v6.duckdb"
    Store(path).open().close()
    conn = duckdb.connect(str(path))
    conn.execute("ALTER TABLE experiment_results DROP COLUMN repetition")
    conn.execute("DELETE FROM schema_version WHERE version >= 7")
    for score in (0.1, 0.2, 0.3):  # the same result posted three times, and another one
        conn.execute("INSERT INTO experiment_results (experiment_id, item_id, scorer_id, score) "
                     "VALUES ('e', 'a', 's', ?)", [score])
    conn.execute("INSERT INTO experiment_results (experiment_id, item_id, scorer_id, score) "
                 "VALUES ('e', 'b', 's', 0.9)")
    conn.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        order = "ORDER BY item_id, repetition"
        rows = store.read(f"SELECT item_id, repetition, score FROM experiment_results {order}")
        assert [tuple(r.values()) for r in rows] == [
            ("a", 0, 0.1), ("a", 1, 0.2), ("a", 2, 0.3), ("b", 0, 0.9)]
        write = experiment_writer({"experiment_id": "e", "name": "e"},
                                  [{"item_id": "a", "scorer_id": "s", "score": 1.0}])
        store.write_sync(write)
        store.write_sync(write)
        rows = store.read(f"SELECT item_id, repetition, score FROM experiment_results {order}")
        assert [tuple(r.values()) for r in rows] == [
            ("a", 0, 1.0), ("a", 1, 0.2), ("a", 2, 0.3), ("b", 0, 0.9)]


def test_a_version_6_database_gains_the_label_tables_and_judge_reports(tmp_path: Path) -> None:
    """Migration 8 adds the label tables and appends ``response_model``/``system_fingerprint``
    to ``judge_executions`` and ``kind``/``detail`` to ``monitor_events``; an event stored
    before it is of kind ``monitor``."""
    import duckdb

    from tracescore.store import MIGRATIONS

    path = tmp_path / "v6.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                 "description VARCHAR, applied_at TIMESTAMP)")
    for version, description, statements in [m for m in MIGRATIONS if m[0] <= 6]:
        for statement in statements():
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, now())", [version, description])
    later = (("judge_executions", ("response_model", "system_fingerprint", "cached",
                                   "saved_cost")),
             ("monitor_events", ("kind", "detail")),
             ("scores", ("cost_source", "decided_by")),
             ("experiment_results", ("repetition",)))
    for table, columns in later:
        for column in columns:  # as migrations 1 to 4 made them then (later ones add these)
            conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("INSERT INTO monitor_events (event_id, monitor_id, state, created_at) "
                 "VALUES ('e1', 'm1', 'breached', now())")
    conn.close()
    with Store(path) as store:
        assert _columns(store, "judge_executions")[-4:] == [
            "response_model", "system_fingerprint", "cached", "saved_cost"]  # 8, then 9
        assert _columns(store, "monitor_events")[-2:] == ["kind", "detail"]
        assert store.read("SELECT kind FROM monitor_events") == [{"kind": "monitor"}]
        for table in ("label_schemas", "labels", "current_labels", "review_queues",
                      "review_items", "review_claims", "judge_agreement",
                      "annotator_agreement", "scorer_versions", "canary_runs"):
            assert _columns(store, table), table
        store.write_scores_sync([{"score_id": "s1", "score": 1.0}], [
            {"execution_id": "x1", "score_id": "s1", "response_model": "gpt-4o-mini-2024-07-18"}])
        assert store.read("SELECT response_model FROM judge_executions") == [
            {"response_model": "gpt-4o-mini-2024-07-18"}]
