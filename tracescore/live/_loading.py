"""Loading ready traces for scoring: a tick's traces in one read, one trace on demand.

Traces are read from the node's own store (the spans it received: one read of recent spans
and one of logs for a whole tick), except, in a cluster, the traces several nodes received,
which are read one by one from the reader's store (the lake ∪ the node's unflushed rows,
``tracescore.cluster.ClusterStore``). A trace loaded for a worker's run (not in the scheduler's
cache) is read from the reader's store too: on one node that is the node's store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import Any

LOG_LEAD = timedelta(minutes=10)
"""How long before a trace's first span its log records may have arrived and still be loaded
with the tick's traces (log exporters often flush before span exporters)."""


class TraceLoader:
    """Loads traces from ``store`` (the node's rows) and ``reader`` (what every node stored;
    the same store on one node)."""

    def __init__(self, store: Any, reader: Any) -> None:
        self.store = store
        self.reader = reader

    def load(self, trace_id: str) -> Any:
        """Worker thread: load a trace and build its step tree (the worker builds runs from it
        on the event loop)."""
        from tracescore.traces import load_trace

        trace = load_trace(self.reader, trace_id)
        trace.steps  # noqa: B018 - built here, off the event loop
        return trace

    def load_many(self, trace_ids: list[str], since: datetime, *,
                  lake: Collection[str] = ()) -> Callable[[str], Any]:
        """Load a tick's traces in one read of recent spans (and one of logs); returns a
        loader per trace id that raises like ``load_trace`` for a trace with no spans. The
        ids in ``lake`` are read from the reader's store, one by one, when asked for."""
        from tracescore.traces import Trace, TraceNotFound, load_trace

        local = [t for t in trace_ids if t not in lake]
        spans, logs = self.store.fetch_recent_traces(
            local, spans_since=since, logs_since=since - LOG_LEAD) if local else ({}, {})

        def load(trace_id: str) -> Any:
            if trace_id in lake:
                return load_trace(self.reader, trace_id)
            rows = spans.get(trace_id.lower())
            if not rows:
                raise TraceNotFound(f"no spans stored for trace {trace_id!r} since {since}")
            return Trace.from_rows(rows, logs=logs.get(trace_id.lower(), ()),
                                   trace_id=trace_id)

        return load

    def load_many_or_fail(self, trace_ids: list[str], since: datetime, *,
                          lake: Collection[str] = ()) -> Callable[[str], Any]:
        """``load_many``; when the read fails, a loader that raises its error for each trace
        (each then records the failure)."""
        try:
            return self.load_many(trace_ids, since, lake=lake)
        except Exception as exc:  # noqa: BLE001 - each trace then records the failure
            def load(trace_id: str, error: Exception = exc) -> Any:
                raise error
            return load


__all__ = ["LOG_LEAD", "TraceLoader"]
