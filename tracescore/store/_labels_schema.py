"""The tables of human labels, review queues and judge agreement (migration 8), kept apart from
the trace tables.

``labels`` is append-only: a new label of the same target, schema and annotator supersedes the
earlier one (the view ``current_labels`` shows the newest of each), so every earlier label is
kept. ``judge_agreement`` and ``annotator_agreement`` are maintained by
``tracescore.labels.refresh_agreement``; ``review_claims`` holds the leases of queue items;
``scorer_versions`` the judge versions ``tracescore align`` fitted; ``canary_runs`` each
re-scoring of a judge's canary set. Migration 8 also records what the provider reports on
``judge_executions`` (``response_model``, ``system_fingerprint``) and gives ``monitor_events`` a
``kind`` (``monitor`` or ``judge_drift``) with a ``detail`` object.
"""

from __future__ import annotations

LABEL_SCHEMAS: tuple[tuple[str, str], ...] = (
    ("name", "VARCHAR NOT NULL"),
    ("kind", "VARCHAR NOT NULL"),
    ("values", "JSON"),
    ("min_value", "DOUBLE"),
    ("max_value", "DOUBLE"),
    ("rubric", "VARCHAR"),
    ("scorer_id", "VARCHAR"),
    ("threshold", "DOUBLE"),
    ("created_at", "TIMESTAMP"),
)

LABELS: tuple[tuple[str, str], ...] = (
    ("label_id", "VARCHAR NOT NULL"),
    ("target_type", "VARCHAR NOT NULL"),
    ("trace_id", "VARCHAR"),
    ("span_id", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("item_id", "VARCHAR"),
    ("schema_name", "VARCHAR NOT NULL"),
    ("value", "VARCHAR"),
    ("annotator", "VARCHAR"),
    ("comment", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    ("numeric_value", "DOUBLE"),
    ("queue_name", "VARCHAR"),
)

REVIEW_QUEUES: tuple[tuple[str, str], ...] = (
    ("name", "VARCHAR NOT NULL"),
    ("schemas", "JSON"),
    ("target_type", "VARCHAR NOT NULL"),
    ("selection", "VARCHAR"),
    ("dataset", "VARCHAR"),
    ("size", "INTEGER"),
    ("annotators_per_item", "INTEGER"),
    ("scorer_id", "VARCHAR"),
    ("hide_judge", "BOOLEAN"),
    ("lease_seconds", "DOUBLE"),
    ("seed", "INTEGER"),
    ("description", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
)

REVIEW_ITEMS: tuple[tuple[str, str], ...] = (
    ("queue_name", "VARCHAR NOT NULL"),
    ("item_key", "VARCHAR NOT NULL"),
    ("position", "INTEGER NOT NULL"),
    ("target_type", "VARCHAR NOT NULL"),
    ("trace_id", "VARCHAR"),
    ("span_id", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("item_id", "VARCHAR"),
    ("added_at", "TIMESTAMP"),
)

REVIEW_CLAIMS: tuple[tuple[str, str], ...] = (
    ("queue_name", "VARCHAR NOT NULL"),
    ("item_key", "VARCHAR NOT NULL"),
    ("annotator", "VARCHAR NOT NULL"),
    ("status", "VARCHAR NOT NULL"),
    ("claimed_at", "TIMESTAMP"),
    ("expires_at", "TIMESTAMP"),
    ("updated_at", "TIMESTAMP"),
)

JUDGE_AGREEMENT: tuple[tuple[str, str], ...] = (
    ("scorer_id", "VARCHAR NOT NULL"),
    ("scorer_version", "VARCHAR NOT NULL"),
    ("schema_name", "VARCHAR NOT NULL"),
    ("n", "BIGINT"),
    ("kappa", "DOUBLE"),
    ("kappa_low", "DOUBLE"),
    ("kappa_high", "DOUBLE"),
    ("spearman", "DOUBLE"),
    ("mae", "DOUBLE"),
    ("tpr", "DOUBLE"),
    ("tnr", "DOUBLE"),
    ("threshold", "DOUBLE"),
    ("updated_at", "TIMESTAMP"),
    ("spearman_low", "DOUBLE"),
    ("spearman_high", "DOUBLE"),
    ("mae_low", "DOUBLE"),
    ("mae_high", "DOUBLE"),
    ("tpr_low", "DOUBLE"),
    ("tpr_high", "DOUBLE"),
    ("tnr_low", "DOUBLE"),
    ("tnr_high", "DOUBLE"),
    ("schema_kind", "VARCHAR"),
    ("labels_count", "BIGINT"),
    ("labels_through", "TIMESTAMP"),
    ("scores_through", "TIMESTAMP"),
)

ANNOTATOR_AGREEMENT: tuple[tuple[str, str], ...] = (
    ("schema_name", "VARCHAR NOT NULL"),
    ("metric", "VARCHAR"),
    ("annotators", "INTEGER"),
    ("n", "BIGINT"),
    ("value", "DOUBLE"),
    ("value_low", "DOUBLE"),
    ("value_high", "DOUBLE"),
    ("updated_at", "TIMESTAMP"),
    ("labels_count", "BIGINT"),
    ("labels_through", "TIMESTAMP"),
)

SCORER_VERSIONS: tuple[tuple[str, str], ...] = (
    ("scorer_id", "VARCHAR NOT NULL"),
    ("version", "VARCHAR NOT NULL"),
    ("parent_version", "VARCHAR"),
    ("schema_name", "VARCHAR"),
    ("method", "VARCHAR"),
    ("instructions", "VARCHAR"),
    ("examples", "JSON"),
    ("label_set", "VARCHAR"),
    ("label_count", "INTEGER"),
    ("holdout_count", "INTEGER"),
    ("seed", "BIGINT"),
    ("before", "JSON"),
    ("after", "JSON"),
    ("candidates", "JSON"),
    ("created_at", "TIMESTAMP"),
)

CANARY_RUNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR NOT NULL"),
    ("scorer_id", "VARCHAR NOT NULL"),
    ("scorer_version", "VARCHAR"),
    ("dataset", "VARCHAR"),
    ("schema_name", "VARCHAR"),
    ("n", "BIGINT"),
    ("kappa", "DOUBLE"),
    ("kappa_low", "DOUBLE"),
    ("kappa_high", "DOUBLE"),
    ("baseline_low", "DOUBLE"),
    ("baseline_high", "DOUBLE"),
    ("response_models", "JSON"),
    ("system_fingerprints", "JSON"),
    ("cost_usd", "DOUBLE"),
    ("drift", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
)

LABEL_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "label_schemas": LABEL_SCHEMAS,
    "labels": LABELS,
    "review_queues": REVIEW_QUEUES,
    "review_items": REVIEW_ITEMS,
    "review_claims": REVIEW_CLAIMS,
    "judge_agreement": JUDGE_AGREEMENT,
    "annotator_agreement": ANNOTATOR_AGREEMENT,
    "scorer_versions": SCORER_VERSIONS,
    "canary_runs": CANARY_RUNS,
}
"""The label tables: column name → DuckDB type."""

LABEL_PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "label_schemas": ("name",),
    "labels": ("label_id",),
    "review_queues": ("name",),
    "review_items": ("queue_name", "item_key"),
    "review_claims": ("queue_name", "item_key", "annotator"),
    "judge_agreement": ("scorer_id", "scorer_version", "schema_name"),
    "annotator_agreement": ("schema_name",),
    "scorer_versions": ("scorer_id", "version"),
    "canary_runs": ("run_id",),
}

JUDGE_EXECUTION_ADDITIONS: tuple[tuple[str, str], ...] = (
    ("response_model", "VARCHAR"),
    ("system_fingerprint", "VARCHAR"),
)
"""Columns migration 8 appends to ``judge_executions``: what the provider reported."""

MONITOR_EVENT_ADDITIONS: tuple[tuple[str, str], ...] = (
    ("kind", "VARCHAR"),
    ("detail", "JSON"),
)
"""Columns migration 8 appends to ``monitor_events``: ``monitor`` or ``judge_drift``, and why."""

CURRENT_LABELS_VIEW = """
CREATE OR REPLACE VIEW current_labels AS
SELECT * FROM labels
QUALIFY row_number() OVER (
    PARTITION BY target_type, coalesce(trace_id, ''), coalesce(span_id, ''),
                 coalesce(session_id, ''), coalesce(item_id, ''), schema_name,
                 coalesce(annotator, '')
    ORDER BY created_at DESC, label_id DESC) = 1
"""
"""The newest label of each target × schema × annotator (earlier ones stay in ``labels``)."""


def _create(name: str) -> str:
    parts = [f'"{column}" {sql_type}' for column, sql_type in LABEL_TABLES[name]]
    parts.append(f"PRIMARY KEY ({', '.join(LABEL_PRIMARY_KEYS[name])})")
    body = ",\n    ".join(parts)
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    {body}\n)"


def label_statements() -> list[str]:
    """Migration 8: the label tables, the ``current_labels`` view, and the columns added to
    ``judge_executions`` and ``monitor_events``."""
    added = [
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {sql_type}"
        for table, columns in (("judge_executions", JUDGE_EXECUTION_ADDITIONS),
                               ("monitor_events", MONITOR_EVENT_ADDITIONS))
        for column, sql_type in columns
    ]
    return [
        *(_create(name) for name in LABEL_TABLES),
        CURRENT_LABELS_VIEW,
        *added,
        "UPDATE monitor_events SET kind = 'monitor' WHERE kind IS NULL",
    ]


__all__ = [
    "JUDGE_EXECUTION_ADDITIONS",
    "LABEL_PRIMARY_KEYS",
    "LABEL_TABLES",
    "MONITOR_EVENT_ADDITIONS",
    "label_statements",
]
