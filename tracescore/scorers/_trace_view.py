"""``TraceView``: a scored run as numbered steps the navigating judge can read one at a time.

Built from the trace when the run carries one (``request_context["trace_document"]``: the
document ``tracescore.traces.trace_document`` makes, or a zero-argument callable giving it, as
the live scorer passes it), else from the run itself: its input conversation (system,
remembered and input messages), and its output (assistant messages with their tool calls, or
a ``Trajectory``'s steps, or any other value). Steps get short ids (``s1``, ``s2``, ... depth
first), which the judge's tools take.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracescore.model import (
    AgentInput,
    Message,
    ScorerRun,
    Trajectory,
    to_agent_input,
    to_messages,
)

DOCUMENT_KEY = "trace_document"
"""The ``request_context`` key of a run's trace document (a dict or a callable giving one)."""


def shown(value: Any) -> str:
    """A value as the judge reads it: text as it is, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(slots=True)
class ViewStep:
    """One step of a view."""

    id: str
    kind: str
    name: str
    depth: int
    parent: str | None = None
    span_id: str | None = None
    input: Any = None
    output: Any = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """Model, usage, duration, status, tool name: what the step's header shows."""
    attributes: dict[str, Any] | None = None
    """The span's raw attributes (views built from a trace only)."""
    children: list[str] = field(default_factory=list)

    @property
    def input_text(self) -> str:
        """The input as text."""
        return shown(self.input)

    @property
    def output_text(self) -> str:
        """The output as text."""
        return shown(self.output)

    @property
    def size(self) -> int:
        """Characters of input and output."""
        return len(self.input_text) + len(self.output_text)


@dataclass(slots=True)
class TraceView:
    """The steps of a run, in order, by id and by span id."""

    steps: list[ViewStep] = field(default_factory=list)
    tool_definitions: list[dict[str, Any]] = field(default_factory=list)
    source: str = "run"
    """``trace`` when built from the trace's document, ``run`` when from the run's data."""
    by_id: dict[str, ViewStep] = field(default_factory=dict)
    by_span: dict[str, ViewStep] = field(default_factory=dict)

    def add(self, kind: str, name: str, parent: ViewStep | None, **values: Any) -> ViewStep:
        """Append a step under ``parent`` (None: at the top) and return it."""
        step = ViewStep(id=f"s{len(self.steps) + 1}", kind=kind, name=name,
                        depth=parent.depth + 1 if parent is not None else 0,
                        parent=parent.id if parent is not None else None, **values)
        self.steps.append(step)
        self.by_id[step.id] = step
        if step.span_id:
            self.by_span.setdefault(step.span_id, step)
        if parent is not None:
            parent.children.append(step.id)
        return step

    def find(self, ref: str) -> ViewStep:
        """The step with this id (``s3``, ``3``) or span id; ``KeyError`` with a hint."""
        key = str(ref).strip()
        found = (self.by_id.get(key) or self.by_id.get(f"s{key}") or self.by_span.get(key)
                 or self.by_span.get(key.lower()))
        if found is None:
            raise KeyError(f"no step {key!r}; step ids run s1 to s{len(self.steps)} "
                           "(see the outline)")
        return found

    @property
    def roots(self) -> list[ViewStep]:
        """The top-level steps."""
        return [step for step in self.steps if step.parent is None]

    def errors(self) -> list[ViewStep]:
        """The steps that failed."""
        return [step for step in self.steps if step.error]


_DETAIL_KEYS = ("status", "duration_ms", "model", "usage", "tool_name")


def from_document(document: Mapping[str, Any]) -> TraceView:
    """The view of a trace document (``tracescore.traces.trace_document``)."""
    view = TraceView(source="trace",
                     tool_definitions=list(document.get("tool_definitions") or []))
    by_span: dict[str, ViewStep] = {}
    for item in document.get("steps") or []:
        parent = by_span.get(str(item.get("parent_span_id") or ""))
        details = {k: item[k] for k in _DETAIL_KEYS if item.get(k) is not None}
        error = item.get("error") or (
            "failed" if item.get("status") == "error" else None)
        step = view.add(str(item.get("kind") or "step"), str(item.get("name") or ""), parent,
                        span_id=item.get("span_id"), input=item.get("input"),
                        output=item.get("output"), error=error, details=details,
                        attributes=item.get("attributes"))
        if step.span_id:
            by_span[step.span_id] = step
    return view


def _message_data(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role}
    if message.content:
        out["text"] = message.content
    reasoning = "".join(p.text for p in message.parts if p.type == "reasoning")
    if reasoning:
        out["reasoning"] = reasoning
    return out


def _add_messages(view: TraceView, parent: ViewStep, messages: Sequence[Message]) -> None:
    for message in messages:
        step = view.add("message", message.role, parent, output=_message_data(message))
        for call in message.tool_invocations:
            failed = call.state == "output-error" or call.is_error
            view.add("tool_call", call.tool_name, step, input=call.args, output=call.result,
                     error=shown(call.result) or "failed" if failed else None,
                     details={"tool_call_id": call.tool_call_id, "state": call.state})


def _add_trajectory_steps(view: TraceView, parent: ViewStep | None, steps: Sequence[Any]) -> None:
    for item in steps:
        meta = item.metadata or {}
        args = getattr(item, "tool_args", None)
        result = getattr(item, "tool_result", None)
        if result is None:
            result = getattr(item, "output", None)
        failed = getattr(item, "success", None) is False
        error = meta.get("error") or ("failed" if failed else None)
        details = {"duration_ms": item.duration_ms} if item.duration_ms is not None else {}
        for key in ("model_id", "prompt_tokens", "completion_tokens", "finish_reason", "status"):
            value = getattr(item, key, None)
            if value is not None:
                details[key] = value
        step = view.add(item.step_type, item.name, parent, span_id=meta.get("span_id"),
                        input=args, output=result, error=str(error) if error else None,
                        details=details)
        _add_trajectory_steps(view, step, item.children or [])


def from_run(run: ScorerRun) -> TraceView:
    """The view of a run's own data: its input conversation and its output."""
    view = TraceView(source="run")
    agent_input = _agent_input(run.input)
    if agent_input is not None:
        conversation = view.add("conversation", "input", None)
        _add_messages(view, conversation, [*agent_input.system_messages,
                                           *[m for ms in agent_input.tagged_system_messages
                                             .values() for m in ms],
                                           *agent_input.remembered_messages,
                                           *agent_input.input_messages])
    elif run.input is not None:
        view.add("input", "input", None, output=run.input)
    output = run.output
    trajectory = output if isinstance(output, Trajectory) else _trajectory(output)
    if trajectory is not None:
        steps = view.add("trajectory", "steps taken", None)
        _add_trajectory_steps(view, steps, trajectory.steps)
        if trajectory.raw_output:
            _add_messages(view, view.add("answer", "output", None), trajectory.raw_output)
        return view
    messages = _messages(output)
    if messages:
        _add_messages(view, view.add("answer", "output", None), messages)
    elif output is not None:
        view.add("output", "output", None, output=output)
    return view


_MESSAGE_KEYS = ("role", "content", "text", "messages", "parts")


def _messages(value: Any) -> list[Message]:
    """The messages a value holds (a string, a message, a list of them, a message dict);
    none for any other value, which the view keeps as it is."""
    if not isinstance(value, str | list | tuple | Message | Mapping):
        return []
    if isinstance(value, Mapping) and not any(key in value for key in _MESSAGE_KEYS):
        return []
    try:
        return to_messages(value, default_role="assistant")
    except (TypeError, ValueError):
        return []


def _agent_input(value: Any) -> AgentInput | None:
    if value is None or isinstance(value, str):
        return to_agent_input(value) if isinstance(value, str) else None
    try:
        return to_agent_input(value)
    except (TypeError, ValueError):
        return None


def _trajectory(value: Any) -> Trajectory | None:
    if isinstance(value, Mapping) and "steps" in value:
        try:
            return Trajectory.model_validate(value)
        except ValueError:
            return None
    return None


def trace_document_of(run: ScorerRun) -> Mapping[str, Any] | None:
    """The run's trace document, when its ``request_context`` carries one."""
    value = (run.request_context or {}).get(DOCUMENT_KEY)
    if callable(value):
        value = value()
    return value if isinstance(value, Mapping) else None


def view_of(run: ScorerRun) -> TraceView:
    """The run's view: from its trace document when it has one, else from its data."""
    document = trace_document_of(run)
    return from_document(document) if document is not None else from_run(run)


__all__ = ["DOCUMENT_KEY", "TraceView", "ViewStep", "from_document", "from_run", "shown",
           "trace_document_of", "view_of"]
