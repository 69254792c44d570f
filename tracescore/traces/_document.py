"""A trace as plain data for judges that read it in parts: ``trace_document``.

The navigating judge (``tracescore.scorers``, ``navigate=True``) and the tool-argument scorer
read what a scorer input does not carry: every step of the target's subtree with its input,
output, messages, error and raw span attributes, and the tool definitions the model was given.
``trace_document`` gives them as JSON data (the scorers room cannot import this one); the live
scorer hands it to scorers lazily as ``request_context["trace_document"]`` (a zero-argument
callable, ``lazy_trace_document``), so a run whose scorer never reads it costs nothing.

Shape: ``{"trace_id", "target_span_id", "steps": [...], "tool_definitions": [...]}``; each step
``{"span_id", "parent_span_id", "depth", "kind", "name", "status", "error", "duration_ms",
"model", "usage", "tool_name", "tool_args", "tool_result", "input", "output", "attributes"}``
(keys with no value left out), depth first in start order. Messages (a model call's or an
agent's) are ``[{"role", "text", "reasoning", "tool_calls": [{"id", "name", "args"}],
"tool_results": [{"id", "name", "result", "is_error"}]}]``.
"""

from __future__ import annotations

from typing import Any

from ._steps import TOOL_KINDS, Msg, Reasoning, Step
from ._targets import default_target
from ._tool_definitions import tool_definitions
from ._trace import Trace
from ._values import jsonable


def message_data(msg: Msg) -> dict[str, Any]:
    """One message as plain data (empty fields left out)."""
    out: dict[str, Any] = {"role": msg.role}
    text = msg.text
    if text:
        out["text"] = text
    reasoning = "".join(p.text for p in msg.parts if isinstance(p, Reasoning))
    if reasoning:
        out["reasoning"] = reasoning
    calls = [{"id": c.id, "name": c.name, "args": jsonable(c.args)} for c in msg.calls]
    if calls:
        out["tool_calls"] = calls
    results = [{"id": r.id, "name": r.name, "result": jsonable(r.result), "is_error": r.is_error}
               for r in msg.results]
    if results:
        out["tool_results"] = results
    return out


def _io(step: Step) -> tuple[Any, Any]:
    if step.kind in TOOL_KINDS:
        return jsonable(step.tool_args), jsonable(step.tool_result)
    inputs, outputs = step.input_messages, step.output_messages
    given = ([message_data(m) for m in inputs] if inputs is not None
             else jsonable(step.input))
    made = ([message_data(m) for m in outputs] if outputs is not None
            else jsonable(step.output))
    return given, made


def step_data(step: Step, depth: int) -> dict[str, Any]:
    """One step as plain data (see the module docstring)."""
    given, made = _io(step)
    values = {
        "span_id": step.span_id or None,
        "parent_span_id": (step.parent.span_id or None) if step.parent is not None else None,
        "depth": depth,
        "kind": step.kind,
        "name": step.name,
        "status": step.status,
        "error": step.error,
        "duration_ms": step.duration_ms,
        "model": step.model,
        "usage": dict(step.usage) if step.usage and step.is_model_call else None,
        "tool_name": step.tool_name if step.kind in TOOL_KINDS else None,
        "input": given,
        "output": made,
        "attributes": jsonable(step.attributes) if step.attributes else None,
    }
    return {k: v for k, v in values.items() if v is not None and v != ""}


def _target(trace: Trace, span_id: str | None) -> list[Step]:
    if span_id is not None:
        for root in trace.steps:
            for step in root.walk():
                if step.span_id == span_id:
                    return [step]
        trace.span(span_id)  # raises SpanNotFound for a span the trace does not have
    found = default_target(trace)
    if found is None:
        return []
    return list(trace.steps) if not found.span_id else [found]


def trace_document(trace: Trace, span_id: str | None = None) -> dict[str, Any]:
    """The target step's subtree as plain data (``span_id``, else the default target: the
    outermost agent or workflow run, else the root); see the module docstring."""
    roots = _target(trace, span_id)
    steps: list[dict[str, Any]] = []
    stack = [(root, 0) for root in reversed(roots)]
    while stack:
        step, depth = stack.pop()
        steps.append(step_data(step, depth))
        stack.extend((child, depth + 1) for child in reversed(step.children))
    return {
        "trace_id": trace.trace_id or None,
        "target_span_id": roots[0].span_id if len(roots) == 1 else None,
        "steps": steps,
        "tool_definitions": tool_definitions(roots),
    }


class LazyTraceDocument:
    """``trace_document(trace, span_id)``, made on the first call and kept."""

    __slots__ = ("_document", "_span_id", "_trace")

    def __init__(self, trace: Trace, span_id: str | None = None) -> None:
        self._trace: Trace | None = trace
        self._span_id = span_id
        self._document: dict[str, Any] | None = None

    def __call__(self) -> dict[str, Any]:
        """The document."""
        if self._document is None:
            assert self._trace is not None
            self._document = trace_document(self._trace, self._span_id)
            self._trace = None
        return self._document

    def __repr__(self) -> str:
        return f"LazyTraceDocument(span_id={self._span_id!r})"


def lazy_trace_document(trace: Trace, span_id: str | None = None) -> LazyTraceDocument:
    """A zero-argument callable giving ``trace_document(trace, span_id)`` (made once, when
    first called): what the live scorer puts in ``request_context["trace_document"]``."""
    return LazyTraceDocument(trace, span_id)


__all__ = ["LazyTraceDocument", "lazy_trace_document", "message_data", "step_data",
           "trace_document"]
