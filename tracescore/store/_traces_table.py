"""The maintained ``traces`` table: one row per trace, span-derived columns kept by the writer,
the agent's totals (model calls, tokens, cost, session) filled when the trace is ready.

Two writers keep it, both on the single writer thread:

- ``TracesMaintainer`` runs inside every span commit (the writer's hook): it aggregates the
  committed batch by trace (cost: the batch, never the ``spans`` table) and folds the
  span-derived columns (start, end, span and error counts, root span, arrival times) into
  ``traces``, so a new trace shows up at once; the writer's index of stored traces
  (``_trace_index.py``, in place of a key index) keeps that cost flat as the table grows. A
  re-sent span is counted again here until the next recompute.
- ``tracescore.live``'s totals maintainer, when a trace is ready (root ended and quiet, or
  waited long enough), recomputes the trace from its spans: exact span-derived columns, the
  totals, and its ``model_calls`` rows (``_model_calls.py``). Its ``totals_received_at`` is the
  last arrival the totals include; a span arriving later moves ``last_received_at`` past it, so
  the trace is recomputed once it settles again.

``STALE_PREDICATE`` is the one definition of "totals pending" (the maintainer's queue).
"""

from __future__ import annotations

from typing import Any

from ._trace_batch import aggregate_by_trace
from ._trace_index import NOT_STORED, TraceIndex, from_micros, to_micros, trace_hashes
from ._views import arrow_view

TRACES: tuple[tuple[str, str], ...] = (
    ("trace_id", "VARCHAR NOT NULL"),
    ("project", "VARCHAR"),
    ("service_name", "VARCHAR"),
    ("root_span_id", "VARCHAR"),
    ("root_span_name", "VARCHAR"),
    ("start_time", "TIMESTAMP_NS"),
    ("end_time", "TIMESTAMP_NS"),
    ("duration_ms", "DOUBLE"),
    ("span_count", "BIGINT"),
    ("error_count", "BIGINT"),
    ("has_root", "BOOLEAN"),
    ("root_ended", "BOOLEAN"),
    ("first_received_at", "TIMESTAMP"),
    ("last_received_at", "TIMESTAMP"),
    ("model_call_count", "BIGINT"),
    ("tool_call_count", "BIGINT"),
    ("input_tokens", "BIGINT"),
    ("output_tokens", "BIGINT"),
    ("total_tokens", "BIGINT"),
    ("cost_usd", "DOUBLE"),
    ("unpriced_call_count", "BIGINT"),
    ("models", "VARCHAR[]"),
    ("agent_name", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("user_id", "VARCHAR"),
    ("totals_received_at", "TIMESTAMP"),
)
"""Columns of ``traces`` (documented in docs/server.md)."""

SPAN_DERIVED = (
    "project", "service_name", "root_span_id", "root_span_name", "start_time", "end_time",
    "duration_ms", "span_count", "error_count", "has_root", "root_ended", "first_received_at",
    "last_received_at",
)
"""The columns computed from spans alone (kept at every commit)."""

TOTALS = (
    "model_call_count", "tool_call_count", "input_tokens", "output_tokens", "total_tokens",
    "cost_usd", "unpriced_call_count", "models", "agent_name", "session_id", "user_id",
    "totals_received_at",
)
"""The columns the totals maintainer fills when a trace is ready."""

STALE_PREDICATE = "(totals_received_at IS NULL OR last_received_at > totals_received_at)"
"""True for a trace whose totals are missing or older than its last span."""

_AGGREGATE = """
SELECT trace_id,
       coalesce(arg_min(project, start_time) FILTER (WHERE is_root), any_value(project))
           AS project,
       coalesce(arg_min(service_name, start_time) FILTER (WHERE is_root),
                arg_min(service_name, start_time)) AS service_name,
       arg_min(span_id, start_time) FILTER (WHERE is_root) AS root_span_id,
       arg_min(name, start_time) FILTER (WHERE is_root) AS root_span_name,
       min(start_time) AS start_time,
       max(end_time) AS end_time,
       date_diff('microsecond', min(start_time), max(end_time)) / 1000.0 AS duration_ms,
       count(*) AS span_count,
       count(*) FILTER (WHERE status_code = 'ERROR') AS error_count,
       bool_or(is_root) AS has_root,
       bool_or(is_root AND end_time IS NOT NULL) AS root_ended,
       {first} AS first_received_at,
       {last} AS last_received_at
FROM (SELECT *, (parent_span_id IS NULL OR parent_span_id = '') AS is_root FROM {source})
GROUP BY trace_id
"""

_COLUMNS = ", ".join(("trace_id", *SPAN_DERIVED))

_FOLD = """
    project = CASE WHEN NOT traces.has_root AND {new}.has_root THEN {new}.project
                   ELSE coalesce(traces.project, {new}.project) END,
    service_name = CASE WHEN NOT traces.has_root AND {new}.has_root
                        THEN {new}.service_name
                        ELSE coalesce(traces.service_name, {new}.service_name) END,
    root_span_id = coalesce(traces.root_span_id, {new}.root_span_id),
    root_span_name = coalesce(traces.root_span_name, {new}.root_span_name),
    start_time = least(traces.start_time, {new}.start_time),
    end_time = greatest(traces.end_time, {new}.end_time),
    duration_ms = date_diff('microsecond', least(traces.start_time, {new}.start_time),
                            greatest(traces.end_time, {new}.end_time)) / 1000.0,
    span_count = traces.span_count + {new}.span_count,
    error_count = traces.error_count + {new}.error_count,
    has_root = traces.has_root OR {new}.has_root,
    root_ended = traces.root_ended OR {new}.root_ended,
    last_received_at = greatest(traces.last_received_at, {new}.last_received_at)
"""
"""How a batch's aggregate (``{new}``) folds into a stored ``traces`` row."""

_NEW_ROWS = ", ".join(
    "date_diff('microsecond', start_time, end_time) / 1000.0" if name == "duration_ms" else name
    for name in ("trace_id", *SPAN_DERIVED)
)
"""The ``traces`` columns of a batch's aggregate (``_trace_batch``), its duration computed."""

_UPDATE_KNOWN = f"""
UPDATE traces SET {_FOLD.format(new="x")}
FROM {{source}} x
WHERE traces.trace_id = x.trace_id AND traces.first_received_at >= ?
"""

_UPDATE_ANY = f"""
UPDATE traces SET {_FOLD.format(new="x")}
FROM {{source}} x
WHERE traces.trace_id = x.trace_id
RETURNING traces.trace_id, traces.first_received_at
"""

_INSERT_NEW = f"INSERT INTO traces ({_COLUMNS}) SELECT {_NEW_ROWS} FROM {{source}}"

_INSERT_MISSING = (f"INSERT INTO traces ({_COLUMNS}) SELECT {_NEW_ROWS} FROM {{source}} "
                   "WHERE NOT list_contains(?::VARCHAR[], trace_id)")


class TracesConflict(Exception):
    """A batch's trace was not where the trace index said; the writer runs the transaction
    again with ``exact=True`` (which finds the batch's stored traces by reading the table)."""


class TracesMaintainer:
    """Writer hook: fold each committed span batch into ``traces`` (writer thread only).

    ``traces`` has no key index (``_trace_index.py`` says why); this hook keeps one row per
    trace. The batch is aggregated by trace (its own rows only). The ``TraceIndex`` tells which
    of its traces are stored and since when: those are updated with a plain ``UPDATE``
    restricted to rows first received since the earliest of them (``first_received_at`` never
    changes once a row exists, and rows are stored in arrival order, so DuckDB skips older row
    groups by their min/max); the rest, which the table cannot hold, take a plain ``INSERT``.
    When the UPDATE misses a trace the index claimed (two ids sharing a hash),
    ``TracesConflict`` makes the writer run the transaction again with ``exact=True``: an
    UPDATE joined against the whole table, then an INSERT of the traces it did not find,
    which is always right. The index is read from the table when the store opens (``load``;
    after the writer reopened the database, inside the next transaction) and learns a commit's
    traces only after that commit (``committed``).
    """

    def __init__(self, *, hash_bits: int = 64) -> None:
        self.index = TraceIndex(hash_bits=hash_bits)
        self._loaded = False
        self._staged: tuple[Any, Any] | None = None

    def load(self, conn: Any) -> None:
        """Read which traces ``conn``'s table holds (one scan of two columns of ``traces``)."""
        self.index.load(conn)
        self._loaded = True

    def reopened(self) -> None:
        """The writer reopened the database: read the index from it again before the next
        batch (a commit that failed may or may not have been kept)."""
        self._loaded = False
        self._staged = None

    def __call__(self, conn: Any, spans: Any, received_at: Any, *, exact: bool = False) -> Any:
        """Fold the Arrow span batch ``spans`` into ``traces`` (inside its transaction,
        before the spans go in); raises ``TracesConflict`` when ``exact`` is needed. Returns
        the earliest ``first_received_at`` of the batch's traces that were already stored
        (None when all are new): no stored span of those traces arrived before it, which
        bounds the writer's duplicate check (``_span_dedupe.py``)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        self._staged = None
        if not self._loaded:
            self.load(conn)
        batch = aggregate_by_trace(spans, received_at)
        ids = batch.column("trace_id").to_pylist()
        hashes = self.index.masked(trace_hashes(conn, ids))
        now = to_micros(received_at)
        if exact:
            with arrow_view(conn, batch) as view:
                found = conn.execute(_UPDATE_ANY.format(source=view)).fetchall()
                conn.execute(_INSERT_MISSING.format(source=view),
                             [[trace_id for trace_id, _ in found]])
            stored = {trace_id: first for trace_id, first in found}
            firsts = [to_micros(stored[trace_id]) if trace_id in stored else now
                      for trace_id in ids]
            self._staged = (hashes, firsts)
            return min(stored.values()) if stored else None
        firsts = self.index.firsts(hashes)
        known = firsts != NOT_STORED
        since = None
        if known.any():
            since = from_micros(int(firsts[known].min()))
            mask = pa.array(known)
            updates = batch.filter(mask)
            with arrow_view(conn, updates) as view:
                done = conn.execute(_UPDATE_KNOWN.format(source=view),
                                    [since]).fetchone()
            if not done or int(done[0]) != updates.num_rows:
                raise TracesConflict("a trace the index holds was not found where it was stored")
            batch = batch.filter(pc.invert(mask))
        if batch.num_rows:
            with arrow_view(conn, batch) as view:
                conn.execute(_INSERT_NEW.format(source=view))
        self._staged = (hashes[~known], np.full(int((~known).sum()), now, dtype=np.int64))
        return since

    def committed(self) -> None:
        """The transaction of the last call committed: the index learns its new traces."""
        if self._staged is not None:
            self.index.add(*self._staged)
        self._staged = None


def exact_update_sql() -> str:
    """An UPDATE setting the span-derived columns of the traces listed in parameter 2 to their
    exact values, over their spans received at or after parameter 1 (a pruned read; the
    traces' ``first_received_at`` is at or after it too, so their rows are a pruned read)."""
    select = _AGGREGATE.format(
        first="min(received_at)",
        last="max(received_at)",
        source="spans WHERE received_at >= $1 AND list_contains($2::VARCHAR[], trace_id)",
    )
    assign = ", ".join(f"{name} = x.{name}" for name in SPAN_DERIVED)
    return (f"UPDATE traces SET {assign} FROM ({select}) x WHERE traces.trace_id = x.trace_id "
            "AND traces.first_received_at >= $1")


def fill_from_spans_sql() -> str:
    """The migration's statement: a ``traces`` row (span-derived columns) for every stored
    trace; their totals are pending, so the maintainer backfills them."""
    select = _AGGREGATE.format(
        first="min(received_at)", last="max(received_at)", source="spans"
    )
    return f"INSERT INTO traces ({_COLUMNS}) {select}"


__all__ = [
    "SPAN_DERIVED",
    "STALE_PREDICATE",
    "TOTALS",
    "TRACES",
    "TracesConflict",
    "TracesMaintainer",
    "exact_update_sql",
    "fill_from_spans_sql",
]
