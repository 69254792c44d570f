"""From a stored trace to what a scorer sees: target spans and the ``ScorerRun`` of each.

Calls into ``tracescore.traces``: ``type="agent"`` scorers get the agent input and output
messages, ``type="trajectory"`` scorers the hierarchical trajectory as output, any other scorer
the target span's input and output.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tracescore.model import ScorerRun


def target_span_ids(trace: Any, target: str, scorer_type: str | None = None) -> list[str]:
    """The span ids a scorer with this ``target`` scores in the trace (in trace order).

    ``trace``: for an agent scorer the outermost agent run (none when the trace has no agent
    run); for other scorers the outermost agent or workflow run, else the root span. A span
    kind: every span of that normalized kind.
    """
    from tracescore.traces import find_target_spans

    if target == "trace" and scorer_type == "agent":
        found = find_target_spans(trace, "agent_run")[:1]
    else:
        found = find_target_spans(trace, target)
    ids: list[str] = []
    for span_id in found or ():
        if span_id and span_id not in ids:
            ids.append(span_id)
    return ids


def build_run(trace: Any, span_id: str, scorer_type: str | None) -> ScorerRun:
    """The ``ScorerRun`` for one target span, shaped for the scorer's type."""
    from tracescore.traces import trace_to_scorer_run

    return trace_to_scorer_run(trace, span_id, scorer_type=scorer_type)


def build_runs(trace: Any, span_id: str,
               scorer_types: list[str | None]) -> dict[str | None, ScorerRun]:
    """``build_run`` for several scorer types of one target span, the agent input and output
    built once (``trace_to_scorer_runs``)."""
    from tracescore.traces import trace_to_scorer_runs

    return trace_to_scorer_runs(trace, span_id, scorer_types)


def trace_document_source(trace: Any, span_id: str) -> Any:
    """What a queued run's ``request_context["trace_document"]`` holds: a zero-argument
    callable giving the target's ``trace_document`` (made only if the scorer reads it: the
    navigating judge and the tool-argument scorer do)."""
    from tracescore.traces import lazy_trace_document

    return lazy_trace_document(trace, span_id)


def trace_project(trace: Any) -> str | None:
    """The project of a trace (its first span's)."""
    for span in getattr(trace, "spans", ()):
        project = getattr(span, "project", None)
        if project:
            return str(project)
    return None


TRACE_CACHE_SPANS = 20_000
"""Spans the trace cache holds at most, whatever the number of traces (a loaded span with its
parsed attributes and steps is a few KB: a cache of 512 traces of 256 spans each held hundreds
of MB under a soak)."""


class TraceCache:
    """The last ``size`` loaded traces, and at most ``max_spans`` spans of them (ready traces
    do not change; pairs of one trace share). A trace evicted while a run still uses it lives
    until that run ends (it is only forgotten here)."""

    def __init__(self, size: int, *, max_spans: int = TRACE_CACHE_SPANS) -> None:
        self._size = size
        self._max_spans = max_spans
        self._spans = 0
        self._items: OrderedDict[str, tuple[Any, int]] = OrderedDict()

    def get(self, trace_id: str) -> Any:
        """The cached trace, or None."""
        item = self._items.get(trace_id)
        if item is None:
            return None
        self._items.move_to_end(trace_id)
        return item[0]

    def put(self, trace_id: str, trace: Any) -> None:
        """Remember a loaded trace, forgetting the least recently used beyond ``size`` traces or
        ``max_spans`` spans (the newest is kept whatever its size)."""
        old = self._items.pop(trace_id, None)
        if old is not None:
            self._spans -= old[1]
        spans = len(trace) if hasattr(trace, "__len__") else 1
        self._items[trace_id] = (trace, spans)
        self._spans += spans
        while len(self._items) > 1 and (len(self._items) > self._size
                                        or self._spans > self._max_spans):
            _, (_, dropped) = self._items.popitem(last=False)
            self._spans -= dropped

    def __len__(self) -> int:
        return len(self._items)

    @property
    def spans(self) -> int:
        """Spans of the cached traces."""
        return self._spans
