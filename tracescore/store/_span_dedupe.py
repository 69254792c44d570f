"""Exact duplicate suppression for spans without a primary-key index on ``spans``.

A key index over ``(trace_id, span_id)`` costs memory in proportion to the whole table: at
10 M stored spans DuckDB held ~550 MB of it after a minute of ingest (random trace ids touch
every part of the index), and every insert paid ~60–100 µs a span to maintain it. So ``spans``
has no key (schema version 5) and a batch is checked against what could hold its keys:

- a stored span of trace T arrived at or after T's ``traces.first_received_at`` (the
  maintained table is updated in the same transaction as every span insert, and it keeps the
  earliest arrival of the trace's spans);
- the traces fold that runs first in the transaction (``TracesMaintainer``) reports the
  earliest ``first_received_at`` among the batch's traces that were already stored;
- so the batch is inserted with an anti-join against the spans received since that moment,
  which DuckDB reads by skipping every older row group on its ``received_at`` range. A batch
  whose traces are all new (the usual case) needs no anti-join at all.

Spans sharing a key inside one batch are kept once. The result is the same rows the primary
key's ``INSERT OR IGNORE`` kept, at a cost that follows recent traffic, not the table's size
(a late span of a trace that started long ago makes its commit read the spans since then).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

_IN_BATCH_FIRST = "QUALIFY row_number() OVER (PARTITION BY trace_id, span_id) = 1"


def has_repeated_keys(table: Any) -> bool:
    """True when two rows of the Arrow span batch share ``(trace_id, span_id)``."""
    import pyarrow.compute as pc

    if table.num_rows < 2:
        return False
    keys = pc.binary_join_element_wise(table["trace_id"], table["span_id"], "/")
    return bool(pc.count_distinct(keys).as_py() < table.num_rows)


def insert_new_spans_sql(
    view: str, columns: str, select: str, *, stored_since: datetime | None, repeated: bool
) -> str:
    """The INSERT of the rows of ``view`` whose key is not stored (parameter 1: received_at).

    ``stored_since``: the earliest arrival a stored span of the batch's traces can have (None:
    none of its traces is stored). ``repeated``: the batch holds a key more than once.
    """
    source = view
    if repeated:
        source = f"(SELECT * FROM {view} {_IN_BATCH_FIRST})"
    where = ""
    if stored_since is not None:
        since = stored_since.isoformat(sep=" ")
        # A literal, not a parameter: DuckDB prunes row groups by it when planning.
        where = (
            " WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.received_at >= "
            f"TIMESTAMP '{since}' AND s.trace_id = b.trace_id AND s.span_id = b.span_id)"
        )
    return f"INSERT INTO spans ({columns}) SELECT {select}, ? FROM {source} AS b{where}"


__all__ = ["has_repeated_keys", "insert_new_spans_sql"]
