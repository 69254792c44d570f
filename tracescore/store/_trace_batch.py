"""A span batch aggregated by trace in Arrow, for the writer's ``traces`` fold.

The fold runs inside every span commit, so its cost is paid per commit whatever the batch
holds. DuckDB plans and runs the aggregate of ``_traces_table._AGGREGATE`` in ~3.6-3.7 ms from
16 spans to 512; the same aggregate in Arrow compute takes ~0.44-0.55 ms
(``tests/bench/bench_commit.py``, 2026-12-06, duckdb 2.0.1). The rule is the SQL one, column
for column (a test compares the two on batches with and without roots, nulls and errors):

- the root is a span with no parent id (null or empty); ``project``, ``service_name``,
  ``root_span_id`` and ``root_span_name`` come from the earliest root holding a value, then
  (``project``, ``service_name``) from the earliest span holding one;
- ``start_time`` the earliest start, ``end_time`` the latest end, ``span_count`` and
  ``error_count`` (status ``ERROR``) counted, ``has_root`` and ``root_ended`` (a root with an
  end) any of the batch's spans;
- ``first_received_at`` and ``last_received_at`` the commit's arrival time.

``duration_ms`` is left to the statement that stores the row (it folds start and end anyway).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

_FIRSTS = (
    ("root_project", "project"),
    ("root_service", "service_name"),
    ("root_span_id", "span_id"),
    ("root_span_name", "name"),
)
"""Root-only copies of span columns: (name in the batch, span column)."""

def aggregate_by_trace(spans: Any, received_at: datetime) -> Any:
    """One row per trace of the Arrow span batch ``spans``, received at ``received_at`` (naive
    UTC): ``trace_id`` and the span-derived columns of ``traces`` but ``duration_ms``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parent = spans["parent_span_id"]
    is_root = pc.fill_null(pc.or_kleene(pc.is_null(parent), pc.equal(parent, "")), True)
    null_text = pa.scalar(None, pa.string())
    columns: dict[str, Any] = {
        "trace_id": spans["trace_id"],
        "start_time": spans["start_time"],
        "end_time": spans["end_time"],
        "project": spans["project"],
        "service_name": spans["service_name"],
        "is_error": pc.fill_null(pc.equal(spans["status_code"], "ERROR"), False),
        "is_root": is_root,
        "root_ended": pc.and_(is_root, pc.is_valid(spans["end_time"])),
    }
    for name, column in _FIRSTS:
        columns[name] = pc.if_else(is_root, spans[column], null_text)
    ordered = pa.table(columns).sort_by("start_time")
    # "first" skips nulls and follows row order (one thread): the earliest span holding a value
    grouped = ordered.group_by("trace_id", use_threads=False).aggregate([
        *((name, "first") for name, _ in _FIRSTS),
        ("project", "first"),
        ("service_name", "first"),
        ("start_time", "min"),
        ("end_time", "max"),
        ("trace_id", "count"),
        ("is_error", "sum"),
        ("is_root", "any"),
        ("root_ended", "any"),
    ])
    rows = grouped.num_rows
    arrived = pa.array([received_at] * rows, pa.timestamp("us"))
    return pa.table({
        "trace_id": grouped["trace_id"],
        "project": pc.coalesce(grouped["root_project_first"], grouped["project_first"]),
        "service_name": pc.coalesce(grouped["root_service_first"],
                                    grouped["service_name_first"]),
        "root_span_id": grouped["root_span_id_first"],
        "root_span_name": grouped["root_span_name_first"],
        "start_time": grouped["start_time_min"],
        "end_time": grouped["end_time_max"],
        "span_count": grouped["trace_id_count"],
        "error_count": pc.cast(grouped["is_error_sum"], pa.int64()),
        "has_root": grouped["is_root_any"],
        "root_ended": grouped["root_ended_any"],
        "first_received_at": arrived,
        "last_received_at": arrived,
    })


__all__ = ["aggregate_by_trace"]
