"""A trace: its spans assembled into a tree, with OTLP log records joined to their spans.

``Trace.from_rows`` reads span-row dicts through ``Span.from_row`` (``_span``). A span whose
parent is missing becomes a root, children are ordered by start time, a span id sent twice is
kept once, and a parent loop is cut rather than followed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from ._errors import SpanNotFound, TraceNotFound
from ._span import Span
from ._steps import Step
from ._tree import build_steps, settle_steps

logger = logging.getLogger(__name__)


class SpanSource(Protocol):
    """What ``load_trace`` needs from a store (``tracescore.store.Store`` fits)."""

    def fetch_trace_rows(self, trace_id: str) -> list[dict[str, Any]]: ...  # noqa: D102


class Trace:
    """The spans of one trace assembled into a tree; the normalized step tree is built on demand."""

    def __init__(
        self,
        spans: Iterable[Span],
        *,
        logs: Iterable[Mapping[str, Any]] = (),
        trace_id: str | None = None,
    ) -> None:
        by_id: dict[str, Span] = {}
        for span in spans:
            kept = by_id.get(span.span_id)
            if kept is None or _prefer(span, kept):
                by_id[span.span_id] = span
        self.by_id: dict[str, Span] = by_id
        self.spans: list[Span] = sorted(by_id.values(), key=_start_key)
        self.trace_id: str = trace_id or (self.spans[0].trace_id if self.spans else "")
        self.logs: list[dict[str, Any]] = [dict(log) for log in logs]
        self.roots: list[Span] = []
        self._steps: list[Step] | None = None
        self._unsettled: list[Step] = []
        self._assemble()

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Mapping[str, Any]],
        *,
        logs: Iterable[Mapping[str, Any]] = (),
        trace_id: str | None = None,
    ) -> Trace:
        """Assemble a trace from span-row dicts (and optional log-row dicts).

        With ``trace_id`` given, rows of other traces are left out.
        """
        spans = [Span.from_row(row) for row in rows]
        if trace_id is not None:
            spans = [s for s in spans if s.trace_id == trace_id]
        return cls(spans, logs=logs, trace_id=trace_id)

    def _assemble(self) -> None:
        by_id = self.by_id
        for span in self.spans:
            span.children = []
            span.parent = None
            span.logs = []
        for span in self.spans:
            parent = by_id.get(span.parent_span_id) if span.parent_span_id else None
            if parent is None or parent is span:
                self.roots.append(span)
            else:
                span.parent = parent
                parent.children.append(span)
        # A parent loop leaves spans unreachable from any root: cut the loop at its earliest span.
        reached = _count(self.roots)
        if reached != len(self.spans):
            seen = {s.span_id for s in self._iter_from_roots()}
            for span in self.spans:
                if span.span_id in seen:
                    continue
                logger.warning(
                    "trace %s: span %s is in a parent loop; made a root",
                    self.trace_id,
                    span.span_id,
                )
                if span.parent is not None:
                    span.parent.children.remove(span)
                    span.parent = None
                self.roots.append(span)
                seen.update(s.span_id for s in _walk(span))
            self.roots.sort(key=_start_key)
        for log in self.logs:
            log_span_id = log.get("span_id") or log.get("spanId")
            owner = by_id.get(str(log_span_id)) if log_span_id else None
            if owner is not None:
                owner.logs.append(log)

    def _iter_from_roots(self) -> Iterator[Span]:
        for root in self.roots:
            yield from _walk(root)

    def span(self, span_id: str) -> Span:
        """The span with this id; raises ``SpanNotFound`` when the trace has none."""
        span = self.by_id.get(span_id)
        if span is None:
            raise SpanNotFound(
                f"trace {self.trace_id or '(empty)'} has no span {span_id!r}; "
                "list its spans with `tracescore trace show TRACE_ID`"
            )
        return span

    def walk(self) -> Iterator[Span]:
        """Every span, depth first from the roots, children in start order."""
        return self._iter_from_roots()

    @property
    def steps(self) -> list[Step]:
        """The normalized step tree (one root step per root span), built once."""
        roots = self.structure
        if self._unsettled:
            agents, self._unsettled = self._unsettled, []
            settle_steps(agents)
        return roots

    @property
    def structure(self) -> list[Step]:
        """The step tree before tool steps are matched to the model's calls (stages 1-3 of
        ``_tree``: kinds, runs, containers, model calls): what a trace's spend needs, without
        reading every model call's output."""
        if self._steps is None:
            self._steps, self._unsettled = build_steps(self.roots)
        return self._steps

    @property
    def start_time_ns(self) -> int | None:
        """The earliest span start."""
        return min((s.start_time_ns for s in self.spans if s.start_time_ns), default=None)

    @property
    def end_time_ns(self) -> int | None:
        """The latest span end (None when no span has ended)."""
        return max((s.end_time_ns for s in self.spans if s.end_time_ns), default=None)

    def release(self) -> None:
        """Drop the links between this trace's spans and steps (parents, children, the step
        tree's caches), so that a trace nobody reads any more is freed by reference counting at
        once instead of waiting for Python's cycle collector (whose passes grow with every trace
        left for it). Call it last: the trace is empty afterwards."""
        stack = list(self._steps or ())
        while stack:
            step = stack.pop()
            stack.extend(step.children)
            step.children = []
            step.parent = None
            step._scope_cache = step._model_steps_cache = step._entries_cache = None
            step._declared_cache = None
        for span in self.spans:
            span.children = []
            span.parent = None
        self._steps = None
        self._unsettled = []
        self.roots = []
        self.spans = []
        self.by_id = {}

    def __len__(self) -> int:
        return len(self.spans)

    def __repr__(self) -> str:
        return f"Trace({self.trace_id!r}, spans={len(self.spans)}, roots={len(self.roots)})"


def load_trace(store: Any, trace_id: str) -> Trace:
    """Load a trace's spans (and log records, when the store has them) and assemble the tree.

    ``store`` is anything with ``fetch_trace_rows(trace_id)`` and optionally
    ``fetch_trace_logs(trace_id)``, such as ``tracescore.store.Store``.
    """
    rows = store.fetch_trace_rows(trace_id)
    if not rows:
        raise TraceNotFound(
            f"no spans stored for trace {trace_id!r}; check the id (32 hex digits) "
            "or wait until the trace has been ingested"
        )
    fetch_logs = getattr(store, "fetch_trace_logs", None)
    logs = fetch_logs(trace_id) if callable(fetch_logs) else []
    return Trace.from_rows(rows, logs=logs or (), trace_id=trace_id)


def _walk(span: Span) -> Iterator[Span]:
    stack = [span]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _count(roots: list[Span]) -> int:
    """How many spans the roots reach (what ``_walk`` would yield, without the generator)."""
    reached = 0
    stack = list(roots)
    while stack:
        reached += 1
        stack.extend(stack.pop().children)
    return reached


def _start_key(span: Span) -> tuple[int, int]:
    return (span.start_time_ns or 0, span.end_time_ns or 0)


def _prefer(new: Span, kept: Span) -> bool:
    """Which copy of a duplicated span id to keep: an ended one, else the one with more data."""
    if new.ended != kept.ended:
        return new.ended
    return len(new.attributes) >= len(kept.attributes)


__all__ = ["Span", "SpanSource", "Trace", "load_trace"]
