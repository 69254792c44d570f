"""The database schema: tables (``traces`` is maintained, ``_traces_table.py``) and numbered
migrations.

``TABLES`` is the one description of every stored column (name, DuckDB type); migrations create
tables from it and the Arrow writer takes column types from it. A new column or table is a new
entry at the end of ``MIGRATIONS``; applied versions are recorded in ``schema_version``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ._datasets_schema import (
    DATASET_PRIMARY_KEYS,
    DATASET_TABLES,
    dataset_statements,
    keyed_results_statements,
)
from ._labels_schema import (
    JUDGE_EXECUTION_ADDITIONS,
    LABEL_PRIMARY_KEYS,
    LABEL_TABLES,
    MONITOR_EVENT_ADDITIONS,
    label_statements,
)
from ._traces_table import TRACES, fill_from_spans_sql

log = logging.getLogger(__name__)

SPANS: tuple[tuple[str, str], ...] = (
    ("trace_id", "VARCHAR NOT NULL"),
    ("span_id", "VARCHAR NOT NULL"),
    ("parent_span_id", "VARCHAR"),
    ("project", "VARCHAR NOT NULL"),
    ("service_name", "VARCHAR"),
    ("name", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("start_time", "TIMESTAMP_NS"),
    ("end_time", "TIMESTAMP_NS"),
    ("duration_ms", "DOUBLE"),
    ("status_code", "VARCHAR"),
    ("status_message", "VARCHAR"),
    ("attributes", "JSON"),
    ("resource_attributes", "JSON"),
    ("events", "JSON"),
    ("links", "JSON"),
    ("scope_name", "VARCHAR"),
    ("scope_version", "VARCHAR"),
    ("received_at", "TIMESTAMP"),
)

LOGS: tuple[tuple[str, str], ...] = (
    ("log_id", "VARCHAR NOT NULL"),
    ("trace_id", "VARCHAR"),
    ("span_id", "VARCHAR"),
    ("log_time", "TIMESTAMP_NS"),
    ("observed_time", "TIMESTAMP_NS"),
    ("severity_number", "INTEGER"),
    ("severity_text", "VARCHAR"),
    ("event_name", "VARCHAR"),
    ("body", "JSON"),
    ("attributes", "JSON"),
    ("resource_attributes", "JSON"),
    ("scope_name", "VARCHAR"),
    ("scope_version", "VARCHAR"),
    ("project", "VARCHAR NOT NULL"),
    ("service_name", "VARCHAR"),
    ("received_at", "TIMESTAMP"),
)

SCORES: tuple[tuple[str, str], ...] = (
    ("score_id", "VARCHAR NOT NULL"),
    ("trace_id", "VARCHAR"),
    ("span_id", "VARCHAR"),
    ("project", "VARCHAR"),
    ("scorer_id", "VARCHAR"),
    ("scorer_name", "VARCHAR"),
    ("scorer_version", "VARCHAR"),
    ("source", "VARCHAR"),
    ("eval_run_id", "VARCHAR"),
    ("status", "VARCHAR"),
    ("score", "DOUBLE"),
    ("reason", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    ("duration_ms", "DOUBLE"),
    ("preprocess_step_result", "JSON"),
    ("analyze_step_result", "JSON"),
    ("preprocess_prompt", "VARCHAR"),
    ("analyze_prompt", "VARCHAR"),
    ("generate_score_prompt", "VARCHAR"),
    ("generate_reason_prompt", "VARCHAR"),
    ("input", "JSON"),
    ("output", "JSON"),
    ("ground_truth", "JSON"),
    ("error", "JSON"),
    ("metadata", "JSON"),
    ("judge_input_tokens", "BIGINT"),
    ("judge_output_tokens", "BIGINT"),
    ("judge_total_tokens", "BIGINT"),
    ("judge_reasoning_tokens", "BIGINT"),
    ("judge_cached_input_tokens", "BIGINT"),
    ("judge_cost", "DOUBLE"),
    ("session_id", "VARCHAR"),
    ("experiment_id", "VARCHAR"),
    # migration 9
    ("cost_source", "VARCHAR"),
    ("decided_by", "VARCHAR"),
)

JUDGE_EXECUTIONS: tuple[tuple[str, str], ...] = (
    ("execution_id", "VARCHAR NOT NULL"),
    ("score_id", "VARCHAR"),
    ("trace_id", "VARCHAR"),
    ("scorer_id", "VARCHAR"),
    ("step", "VARCHAR"),
    ("status", "VARCHAR"),
    ("prompt", "VARCHAR"),
    ("judge_model_id", "VARCHAR"),
    ("judge_provider", "VARCHAR"),
    ("attempt_count", "INTEGER"),
    ("model_call_count", "INTEGER"),
    ("duration_ms", "DOUBLE"),
    ("output", "JSON"),
    ("raw_output", "VARCHAR"),
    ("finish_reason", "VARCHAR"),
    ("input_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"),
    ("total_tokens", "BIGINT"),
    ("reasoning_tokens", "BIGINT"),
    ("cached_input_tokens", "BIGINT"),
    ("cache_creation_input_tokens", "BIGINT"),
    ("cost_amount", "DOUBLE"),
    ("cost_unit", "VARCHAR"),
    ("cost_source", "VARCHAR"),
    ("error_name", "VARCHAR"),
    ("error_message", "VARCHAR"),
    ("error_code", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    *JUDGE_EXECUTION_ADDITIONS,
    # migration 9
    ("cached", "BOOLEAN"),
    ("saved_cost", "DOUBLE"),
)

SCORING_DECISIONS: tuple[tuple[str, str], ...] = (
    ("trace_id", "VARCHAR NOT NULL"),
    ("span_id", "VARCHAR NOT NULL"),
    ("scorer_id", "VARCHAR NOT NULL"),
    ("scorer_version", "VARCHAR NOT NULL"),
    ("decision", "VARCHAR NOT NULL"),
    ("attempts", "INTEGER"),
    ("last_error", "VARCHAR"),
    ("next_attempt_at", "TIMESTAMP"),
    ("score_id", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    ("updated_at", "TIMESTAMP"),
    ("session_id", "VARCHAR"),
)

MODEL_CALLS: tuple[tuple[str, str], ...] = (
    ("trace_id", "VARCHAR NOT NULL"),
    ("span_id", "VARCHAR NOT NULL"),
    ("project", "VARCHAR"),
    ("service_name", "VARCHAR"),
    ("agent_name", "VARCHAR"),
    ("model", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("started_at", "TIMESTAMP_NS"),
    ("duration_ms", "DOUBLE"),
    ("time_to_first_token_ms", "DOUBLE"),
    ("input_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"),
    ("total_tokens", "BIGINT"),
    ("cached_input_tokens", "BIGINT"),
    ("cache_creation_input_tokens", "BIGINT"),
    ("reasoning_tokens", "BIGINT"),
    ("cost_usd", "DOUBLE"),
    ("cost_source", "VARCHAR"),
    ("finish_reason", "VARCHAR"),
    ("status", "VARCHAR"),
    ("error", "VARCHAR"),
)
"""Columns of ``model_calls`` (documented in docs/server.md)."""

MONITOR_EVENTS: tuple[tuple[str, str], ...] = (
    ("event_id", "VARCHAR NOT NULL"),
    ("monitor_id", "VARCHAR NOT NULL"),
    ("scorer_id", "VARCHAR"),
    ("state", "VARCHAR NOT NULL"),
    ("value", "DOUBLE"),
    ("threshold", "DOUBLE"),
    ("window_start", "TIMESTAMP"),
    ("window_end", "TIMESTAMP"),
    ("samples", "BIGINT"),
    ("notified_at", "TIMESTAMP"),
    ("error", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    *MONITOR_EVENT_ADDITIONS,
)
"""Columns of ``monitor_events``: one row per breach or recovery (documented in
docs/server.md)."""

JUDGE_CACHE: tuple[tuple[str, str], ...] = (
    ("key", "VARCHAR NOT NULL"),
    ("model", "VARCHAR"),
    ("answer", "JSON"),
    ("cost", "DOUBLE"),
    ("bytes", "BIGINT"),
    ("created_at", "TIMESTAMP"),
)
"""Columns of ``judge_cache``: one cached judge answer per key (``tracescore.scoring``'s
``cache_key``), bounded by ``[live] judge_cache_max_bytes`` and ``judge_cache_max_age_seconds``."""

DECISION_HISTORY: tuple[tuple[str, str], ...] = (
    *((name, sql_type.replace(" NOT NULL", "")) for name, sql_type in SCORING_DECISIONS),
    ("archived_at", "TIMESTAMP"),
    ("archived_by", "VARCHAR"),
)
"""Columns of ``scoring_decision_history``: decisions a rescore replaced, as they were."""
CLUSTER_FLUSHES: tuple[tuple[str, str], ...] = (
    ("node_id", "VARCHAR NOT NULL"),
    ("flush_no", "BIGINT NOT NULL"),
    ("span_mark", "TIMESTAMP"),
    ("calls_mark", "TIMESTAMP"),
    ("spans", "BIGINT"),
    ("logs", "BIGINT"),
    ("model_calls", "BIGINT"),
    ("traces", "BIGINT"),
    ("flushed_at", "TIMESTAMP"),
)
"""Columns of ``cluster_flushes``: a cluster node's note of each flush to the lake (empty on a
single node; documented in docs/cluster.md). The lake's ``flushes`` table has the same."""
SESSION_TURNS: tuple[tuple[str, str], ...] = (
    ("trace_id", "VARCHAR NOT NULL"),
    ("session_id", "VARCHAR NOT NULL"),
    ("input", "JSON"),
    ("output", "JSON"),
    ("computed_at", "TIMESTAMP"),
)
"""Columns of ``session_turns``: each session trace read as a turn by the totals maintainer
(migration 11; documented in docs/server.md)."""

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "spans": SPANS,
    "logs": LOGS,
    "scores": SCORES,
    "judge_executions": JUDGE_EXECUTIONS,
    "scoring_decisions": SCORING_DECISIONS,
    "traces": TRACES,
    "model_calls": MODEL_CALLS,
    "monitor_events": MONITOR_EVENTS,
    **DATASET_TABLES,
    "judge_cache": JUDGE_CACHE,
    "scoring_decision_history": DECISION_HISTORY,
    "cluster_flushes": CLUSTER_FLUSHES,
    **LABEL_TABLES,
    "session_turns": SESSION_TURNS,
}
"""Every stored table: column name → DuckDB type (constraints included)."""

PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "spans": ("trace_id", "span_id"),  # no index since schema 5: the writer keeps it unique
    "logs": ("log_id",),
    "scores": ("score_id",),
    "judge_executions": ("execution_id",),
    "scoring_decisions": ("trace_id", "span_id", "scorer_id", "scorer_version"),
    "traces": ("trace_id",),  # no index since schema 6: the writer keeps it unique
    "model_calls": ("trace_id", "span_id"),
    "monitor_events": ("event_id",),
    **DATASET_PRIMARY_KEYS,
    "judge_cache": ("key",),
    "scoring_decision_history": (),
    "cluster_flushes": ("node_id", "flush_no"),
    **LABEL_PRIMARY_KEYS,
    "session_turns": ("trace_id",),  # no index: the totals maintainer keeps it unique
}

TRACES_VIEW = """
CREATE OR REPLACE VIEW traces AS
SELECT
    trace_id,
    coalesce(arg_min(project, start_time) FILTER (WHERE parent_span_id IS NULL),
             any_value(project)) AS project,
    coalesce(arg_min(service_name, start_time) FILTER (WHERE parent_span_id IS NULL),
             arg_min(service_name, start_time)) AS service_name,
    arg_min(span_id, start_time) FILTER (WHERE parent_span_id IS NULL) AS root_span_id,
    arg_min(name, start_time) FILTER (WHERE parent_span_id IS NULL) AS root_span_name,
    min(start_time) AS start_time,
    max(end_time) AS end_time,
    date_diff('microsecond', min(start_time), max(end_time)) / 1000.0 AS duration_ms,
    count(*) AS span_count,
    count(*) FILTER (WHERE status_code = 'ERROR') AS error_count,
    bool_or(parent_span_id IS NULL) AS has_root,
    bool_or(parent_span_id IS NULL AND end_time IS NOT NULL) AS root_ended,
    max(received_at) AS last_received_at
FROM spans
GROUP BY trace_id
"""


SESSIONS_VIEW = """
CREATE OR REPLACE VIEW sessions AS
SELECT
    session_id,
    arg_min(project, start_time) AS project,
    arg_min(service_name, start_time) AS service_name,
    min(start_time) AS first_trace_at,
    max(start_time) AS last_trace_at,
    count(*) AS trace_count,
    count(*) FILTER (WHERE model_call_count > 0) AS turn_count,
    sum(total_tokens) AS total_tokens,
    sum(cost_usd) AS cost_usd,
    sum(error_count) AS error_count,
    arg_max(user_id, start_time) FILTER (WHERE user_id IS NOT NULL) AS user_id,
    arg_max(trace_id, (start_time, first_received_at, trace_id)) AS last_trace_id,
    max(last_received_at) AS last_received_at
FROM traces
WHERE session_id IS NOT NULL
GROUP BY session_id
"""
"""One row per conversation, over the maintained ``traces`` table (a trace joins its session
once the totals maintainer has read its session id). ``turn_count`` counts the traces with a
model call, ``trace_count`` every trace; the last trace is the latest started (ties: the
latest received), the order ``tracescore.traces.load_session`` reads turns in."""


_FIRST_TABLES = ("spans", "logs", "scores", "judge_executions", "scoring_decisions")


def _create_table(name: str, *, keyed: bool = True, as_name: str | None = None) -> str:
    columns = ",\n    ".join(f"{column} {sql_type}" for column, sql_type in TABLES[name])
    key = ", ".join(PRIMARY_KEYS[name])
    constraint = f",\n    PRIMARY KEY ({key})" if keyed and key else ""
    return f"CREATE TABLE IF NOT EXISTS {as_name or name} (\n    {columns}{constraint}\n)"


def _unkey_spans() -> list[str]:
    """Migration 5: ``spans`` rebuilt without its primary-key index (the writer checks keys
    itself, ``_span_dedupe.py``), rows kept in arrival order so row groups stay narrow in
    ``received_at``. On a large database this rewrites the table once (about a minute for
    10 M spans)."""
    return [
        _create_table("spans", keyed=False, as_name="spans_v5"),
        "INSERT INTO spans_v5 SELECT * FROM spans ORDER BY received_at",
        "DROP TABLE spans",
        "ALTER TABLE spans_v5 RENAME TO spans",
    ]


def _unkey_traces() -> list[str]:
    """Migration 6: ``traces`` rebuilt without its primary-key index (the writer keeps one row
    per trace with its own index, ``_trace_index.py``), rows in arrival order so row groups
    stay narrow in ``first_received_at``."""
    return [
        _create_table("traces", keyed=False, as_name="traces_v6"),
        "INSERT INTO traces_v6 SELECT * FROM traces ORDER BY first_received_at",
        "DROP TABLE traces",
        "ALTER TABLE traces_v6 RENAME TO traces",
    ]


def _judge_runs() -> list[str]:
    """Migration 9: cached judge answers (``judge_cache``; ``judge_executions.cached`` and
    ``saved_cost``), judge prices (``scores.cost_source``), cascades (``scores.decided_by``) and
    rescores (``scoring_decision_history``)."""
    return [
        "ALTER TABLE judge_executions ADD COLUMN IF NOT EXISTS cached BOOLEAN",
        "ALTER TABLE judge_executions ADD COLUMN IF NOT EXISTS saved_cost DOUBLE",
        "ALTER TABLE scores ADD COLUMN IF NOT EXISTS cost_source VARCHAR",
        "ALTER TABLE scores ADD COLUMN IF NOT EXISTS decided_by VARCHAR",
        _create_table("judge_cache"),
        _create_table("scoring_decision_history"),
    ]


Migration = tuple[int, str, Callable[[], Sequence[str]]]

MIGRATIONS: list[Migration] = [
    (
        1,
        "spans, logs, scores, judge_executions, scoring_decisions, traces view",
        lambda: [
            *(_create_table(name) for name in _FIRST_TABLES),
            TRACES_VIEW,
        ],
    ),
    (
        2,
        "traces becomes a maintained table (span columns filled from spans, totals pending "
        "for the maintainer to backfill); model_calls",
        lambda: [
            "DROP VIEW IF EXISTS traces",
            _create_table("traces"),
            _create_table("model_calls"),
            fill_from_spans_sql(),
        ],
    ),
    (
        3,
        "sessions view; session_id on scores and scoring_decisions; monitor_events",
        lambda: [
            "ALTER TABLE scores ADD COLUMN IF NOT EXISTS session_id VARCHAR",
            "ALTER TABLE scoring_decisions ADD COLUMN IF NOT EXISTS session_id VARCHAR",
            _create_table("monitor_events"),
            SESSIONS_VIEW,
        ],
    ),
    (4, "datasets, dataset_items, experiments, experiment_results, scores.experiment_id",
     dataset_statements),
    (5, "spans without a primary-key index (the writer checks keys against recent arrivals)",
     _unkey_spans),
    (6, "traces without a primary-key index (the writer keeps one row per trace)",
     _unkey_traces),
    (7, "experiment_results.repetition: results keyed by (experiment, item, scorer, "
        "repetition)", keyed_results_statements),
    (8, "label_schemas, labels, current_labels, review queues, judge_agreement, "
        "annotator_agreement, scorer_versions, canary_runs; judge_executions.response_model and "
        "system_fingerprint; monitor_events.kind and detail", label_statements),
    (9, "judge_cache; judge_executions.cached and saved_cost; scores.cost_source and "
        "decided_by; scoring_decision_history", _judge_runs),
    (10, "cluster_flushes: a cluster node's note of its flushes to the lake",
     lambda: [_create_table("cluster_flushes")]),
    (11, "session_turns: each session trace read as a turn (the session page's source)",
     lambda: [_create_table("session_turns", keyed=False)]),
]
"""(version, description, statements) in order; append new ones, never edit applied ones."""

SCHEMA_VERSION = MIGRATIONS[-1][0]


def migrate(conn: Any) -> int:
    """Apply every migration newer than the database's version; return the resulting version."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version "
        "(version INTEGER PRIMARY KEY, description VARCHAR, applied_at TIMESTAMP)"
    )
    current = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
    for version, description, statements in MIGRATIONS:
        if version <= current:
            continue
        conn.execute("BEGIN TRANSACTION")
        try:
            for statement in statements():
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                [version, description, datetime.now(UTC).replace(tzinfo=None)],
            )
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
        log.info("applied schema migration %d: %s", version, description)
        current = version
    return int(current)


def column_names(table: str) -> tuple[str, ...]:
    """The stored column names of ``table`` in order."""
    return tuple(name for name, _ in TABLES[table])


__all__ = ["MIGRATIONS", "PRIMARY_KEYS", "SCHEMA_VERSION", "TABLES", "column_names", "migrate"]
