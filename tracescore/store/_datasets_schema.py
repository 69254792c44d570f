"""The tables of datasets and experiments (migration 4), kept apart from the trace tables.

``datasets`` and ``dataset_items`` hold versioned eval data: items are appended with the version
that added them and, when removed, get the version that removed them; nothing is deleted, so any
past version reads back exactly. ``experiments`` and ``experiment_results`` hold ``run_evals``
runs recorded with ``experiment=``; ``scores.experiment_id`` links their score rows.
"""

from __future__ import annotations

DATASETS: tuple[tuple[str, str], ...] = (
    ("dataset_id", "VARCHAR NOT NULL"),
    ("project", "VARCHAR NOT NULL"),
    ("name", "VARCHAR NOT NULL"),
    ("description", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    ("current_version", "INTEGER NOT NULL"),
)

DATASET_ITEMS: tuple[tuple[str, str], ...] = (
    ("dataset_id", "VARCHAR NOT NULL"),
    ("item_id", "VARCHAR NOT NULL"),
    ("version_added", "INTEGER NOT NULL"),
    ("version_removed", "INTEGER"),
    ("input", "JSON"),
    ("ground_truth", "JSON"),
    ("expected_trajectory", "JSON"),
    ("request_context", "JSON"),
    ("metadata", "JSON"),
    ("source_trace_id", "VARCHAR"),
    ("source_span_id", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
)

EXPERIMENTS: tuple[tuple[str, str], ...] = (
    ("experiment_id", "VARCHAR NOT NULL"),
    ("name", "VARCHAR NOT NULL"),
    ("dataset_id", "VARCHAR"),
    ("dataset_version", "INTEGER"),
    ("created_at", "TIMESTAMP"),
    ("finished_at", "TIMESTAMP"),
    ("status", "VARCHAR"),
    ("target_name", "VARCHAR"),
    ("metadata", "JSON"),
    ("item_count", "INTEGER"),
    ("error_count", "INTEGER"),
    ("verdict", "VARCHAR"),
)

EXPERIMENT_RESULTS: tuple[tuple[str, str], ...] = (
    ("experiment_id", "VARCHAR NOT NULL"),
    ("item_id", "VARCHAR NOT NULL"),
    ("scorer_id", "VARCHAR NOT NULL"),
    ("score", "DOUBLE"),
    ("reason", "VARCHAR"),
    ("error", "VARCHAR"),
    ("not_scorable", "BOOLEAN"),
    ("output", "JSON"),
    ("trace_id", "VARCHAR"),
    ("span_id", "VARCHAR"),
    ("duration_ms", "DOUBLE"),
    ("judge_cost_usd", "DOUBLE"),
    ("agent_cost_usd", "DOUBLE"),
    ("repetition", "INTEGER DEFAULT 0"),
)

DATASET_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "datasets": DATASETS,
    "dataset_items": DATASET_ITEMS,
    "experiments": EXPERIMENTS,
    "experiment_results": EXPERIMENT_RESULTS,
}
"""The dataset and experiment tables: column name → DuckDB type."""

DATASET_PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "datasets": ("dataset_id",),
    "dataset_items": ("dataset_id", "item_id"),
    "experiments": ("experiment_id",),
}
"""Keys of the tables that have one. ``experiment_results`` is keyed by ``RESULT_KEY`` without
an index: its writer replaces the rows of the keys it writes (``experiment_writer``)."""

RESULT_KEY = ("experiment_id", "item_id", "scorer_id", "repetition")
"""What identifies one experiment result: re-posting it replaces it (migration 7)."""

_UNIQUE: dict[str, tuple[str, ...]] = {"datasets": ("project", "name")}


def _create(name: str) -> str:
    parts = [f"{column} {sql_type}" for column, sql_type in DATASET_TABLES[name]]
    if name in DATASET_PRIMARY_KEYS:
        parts.append(f"PRIMARY KEY ({', '.join(DATASET_PRIMARY_KEYS[name])})")
    if name in _UNIQUE:
        parts.append(f"UNIQUE ({', '.join(_UNIQUE[name])})")
    body = ",\n    ".join(parts)
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    {body}\n)"


def dataset_statements() -> list[str]:
    """Migration 4: the four tables and ``scores.experiment_id``."""
    return [
        *(_create(name) for name in DATASET_TABLES),
        "ALTER TABLE scores ADD COLUMN IF NOT EXISTS experiment_id VARCHAR",
    ]


def keyed_results_statements() -> list[str]:
    """Migration 7: ``experiment_results.repetition``, numbering the rows stored before it
    (0, 1, ... per experiment, item and scorer in insertion order, so no row is lost and the
    key holds)."""
    return [
        "ALTER TABLE experiment_results ADD COLUMN IF NOT EXISTS repetition INTEGER DEFAULT 0",
        "UPDATE experiment_results SET repetition = numbered.n FROM (SELECT rowid AS r, "
        "row_number() OVER (PARTITION BY experiment_id, item_id, scorer_id ORDER BY rowid) - 1 "
        "AS n FROM experiment_results) AS numbered WHERE experiment_results.rowid = numbered.r",
    ]


__all__ = ["DATASET_PRIMARY_KEYS", "DATASET_TABLES", "RESULT_KEY", "dataset_statements",
           "keyed_results_statements"]
