"""How many bytes a write will take: the estimate the writer's byte limits count.

Exact sizes do not matter, proportion does: a span whose attributes hold 15 MB must count 15 MB,
and a plain 1 KB span about 1 KB. For decoder batches the estimate sums the lengths of the text
columns (one C-level ``len`` per value, well under a microsecond per span) plus a fixed part per
row for ids, times and names; an Arrow table reports its buffers' size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ROW_OVERHEAD_BYTES = 160
"""Ids, times, kind, status and the like of one row, roughly as Arrow holds them."""

_TEXT_COLUMNS = (
    "attributes",
    "resource_attributes",
    "events",
    "links",
    "body",
    "name",
    "status_message",
)


def batch_bytes(batch: Any, rows: int) -> int:
    """The estimated size of a span/log batch (``SpanBatch``, Arrow table, columns or rows)."""
    table = getattr(batch, "arrow_table", None)
    if table is None and hasattr(batch, "nbytes") and hasattr(batch, "num_rows"):
        table = batch
    if table is not None:
        return int(table.nbytes)
    columns = getattr(batch, "columns", batch)
    total = rows * ROW_OVERHEAD_BYTES
    if isinstance(columns, Mapping):
        for name in _TEXT_COLUMNS:
            values = columns.get(name)
            if values:
                total += sum(map(len, filter(None, values)))  # None (NULL) and "" count 0
        return total
    for row in columns:
        for name in _TEXT_COLUMNS:
            value = row.get(name) if isinstance(row, Mapping) else None
            if isinstance(value, str):
                total += len(value)
            elif value is not None:
                total += ROW_OVERHEAD_BYTES
    return total


__all__ = ["ROW_OVERHEAD_BYTES", "batch_bytes"]
