"""Span rows for cluster tests (the store's span input columns)."""

from __future__ import annotations

from typing import Any

BASE_NS = 1_750_000_000_000_000_000


def trace_id(n: int) -> str:
    """A trace id (32 hex digits)."""
    return f"{n:032x}"


def span_rows(trace: int, count: int = 3, *, offset: int = 0) -> list[dict[str, Any]]:
    """``count`` spans of trace ``trace``: a root and children (ids from ``offset``)."""
    rows = []
    for i in range(offset, offset + count):
        rows.append({
            "trace_id": trace_id(trace),
            "span_id": f"{trace:08x}{i:08x}",
            "parent_span_id": None if i == 0 else f"{trace:08x}{0:08x}",
            "project": "cluster-test",
            "service_name": "agent",
            "name": "root" if i == 0 else f"step-{i}",
            "kind": "INTERNAL",
            "start_time_ns": BASE_NS + trace * 1_000_000 + i,
            "end_time_ns": BASE_NS + trace * 1_000_000 + 1_000 + i,
            "status_code": "OK",
            "attributes": {"i": i, "trace": trace},
        })
    return rows
