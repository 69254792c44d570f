"""The normalized step tree: one ``Step`` per span, whatever convention traced it.

Every convention adapter fills a ``Step`` (kind, name, input, output, messages, tool call, usage,
model, status, error); every consumer (agent input builder, trajectory extractor, span scorers,
``trace show``) reads only steps. Messages inside steps are light ``Msg`` values (a role and an
ordered list of parts) and become pydantic ``Message`` objects only at the edge.

Step kinds follow Mastra's span types (``KINDS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from tracescore.model import StepType

from ._values import duration_ms

KINDS = (
    "agent_run",
    "model_generation",
    "model_step",
    "model_inference",
    "model_chunk",
    "tool_call",
    "mcp_tool_call",
    "provider_tool_call",
    "workflow_run",
    "workflow_step",
    "workflow_conditional",
    "workflow_conditional_eval",
    "workflow_parallel",
    "workflow_loop",
    "workflow_sleep",
    "workflow_wait_event",
    "processor_run",
    "memory_operation",
    "scorer_run",
    "scorer_step",
    "embedding",
    "retrieval",
    "generic",
)
"""Every step kind of the normalized tree (Mastra's span types plus embedding/retrieval)."""

MODEL_KINDS = frozenset({"model_generation", "model_step", "model_inference"})
"""Kinds that stand for model work (a single call, or a wrapper around calls)."""
TOOL_KINDS = frozenset(k for k in get_args(StepType) if k.endswith("tool_call"))
"""Kinds that stand for one tool execution (the trajectory's tool step types)."""
RUN_KINDS = frozenset({"agent_run", "workflow_run"})
"""Kinds that are a run of their own (agent or workflow)."""
DECLARED_KINDS = RUN_KINDS | {"workflow_step"}
"""Kinds a convention declares (a run, or a workflow's step) before the tree rules decide."""
WORKFLOW_KINDS = frozenset(k for k in get_args(StepType) if k.startswith("workflow_"))
"""Workflow kinds kept in trajectories (the trajectory's workflow step types)."""

Status = Literal["ok", "error", "unset"]
Convention = Literal["genkit", "mastra", "openinference", "aisdk", "genai", "generic", "shape"]


@dataclass(slots=True)
class Call:
    """A tool call a model asked for."""

    id: str | None
    name: str
    args: Any = None
    control: str | None = None
    """Set by the tree rules when the call is control, not a tool call of its run
    (``"final_answer"`` or ``"handoff"``: ``_control``)."""


@dataclass(slots=True)
class Result:
    """A tool result handed back to a model."""

    id: str | None
    name: str | None
    result: Any = None
    is_error: bool = False


@dataclass(slots=True)
class Reasoning:
    """Model reasoning text."""

    text: str


@dataclass(slots=True)
class File:
    """A file or image in a message."""

    media_type: str | None = None
    url: str | None = None
    data: str | None = None
    filename: str | None = None


Part = str | Call | Result | Reasoning | File


@dataclass(slots=True)
class Msg:
    """A message inside the step tree: a role and its parts in order (text parts are ``str``)."""

    role: str
    parts: list[Part] = field(default_factory=list)
    id: str | None = None

    @property
    def text(self) -> str:
        """The text parts joined."""
        return "".join(p for p in self.parts if isinstance(p, str))

    @property
    def calls(self) -> list[Call]:
        """The tool calls in the message."""
        return [p for p in self.parts if isinstance(p, Call)]

    @property
    def results(self) -> list[Result]:
        """The tool results in the message."""
        return [p for p in self.parts if isinstance(p, Result)]


class Lazy:
    """A value computed on first use and kept (message lists nobody reads are never parsed)."""

    __slots__ = ("_args", "_done", "_fn", "_kwargs", "_value")

    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._fn = fn
        self._args = args
        self._kwargs = kwargs
        self._done = False
        self._value: Any = None

    def get(self) -> Any:
        """The value (computed once)."""
        if not self._done:
            self._value = self._fn(*self._args, **self._kwargs)
            self._done = True
            self._args = ()
            self._kwargs = {}
        return self._value


class Step:
    """One span, normalized. Fields a convention does not carry stay None.

    Defaults live on the class, so building a step sets only what its span carries.
    """

    span_id: str
    kind: str
    name: str
    metadata: dict[str, Any]
    attributes: dict[str, Any]
    children: list[Step]
    convention: Convention = "generic"
    span_name: str = ""
    _input: Any = None
    _output: Any = None
    _input_messages: list[Msg] | Lazy | None = None
    _output_messages: list[Msg] | Lazy | None = None
    system: list[str] | None = None
    """System instructions declared on the span (besides system-role messages)."""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_args: Any = None
    tool_result: Any = None
    usage: dict[str, int] | None = None
    """Token usage as reported on this span: input/output/total/reasoning/cached_input tokens."""
    model: str | None = None
    """The requested model id (the response model when no request model is known)."""
    response_model: str | None = None
    provider: str | None = None
    finish_reason: str | None = None
    status: Status = "unset"
    error: str | None = None
    agent_id: str | None = None
    workflow_id: str | None = None
    step_id: str | None = None
    step_status: str | None = None
    conversation_id: str | None = None
    user_id: str | None = None
    mcp_server: str | None = None
    hint: str | None = None
    """An adapter's note for the structural pass (``chain``, ``llm_call``, ``aisdk_call``, …)."""
    start_time_ns: int = 0
    end_time_ns: int | None = None
    parent: Step | None = None
    is_model_call: bool = False
    """True for a step that is exactly one request to a model (where tokens are counted)."""
    stands_as_agent: bool = False
    """True for the outermost model step of a trace with no run at all (a plain LLM-call trace):
    it is the trace's agent conversation and the default target of agent scorers."""
    _notes: list[tuple[str, tuple[Any, ...]]] | None = None
    _scope_cache: list[Step] | None = None
    _model_steps_cache: list[Step] | None = None
    _entries_cache: Any = None
    _declared_cache: Any = None
    """The run's declared answer, once read (``_agent.declared_text``): a 1-tuple."""

    def __init__(
        self,
        span_id: str,
        kind: str,
        name: str,
        *,
        span_name: str = "",
        start_time_ns: int = 0,
        end_time_ns: int | None = None,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        self.span_id = span_id
        self.kind = kind
        self.name = name
        self.span_name = span_name
        self.start_time_ns = start_time_ns
        self.end_time_ns = end_time_ns
        self.attributes = attributes if attributes is not None else {}
        self.metadata = {}
        self.children = []

    @property
    def input(self) -> Any:
        """The span's input (parsed JSON where it was JSON)."""
        value = self._input
        if type(value) is Lazy:
            value = value.get()
            self._input = value
        return value

    @input.setter
    def input(self, value: Any) -> None:
        self._input = value

    @property
    def output(self) -> Any:
        """The span's output (parsed JSON where it was JSON)."""
        value = self._output
        if type(value) is Lazy:
            value = value.get()
            self._output = value
        return value

    @output.setter
    def output(self, value: Any) -> None:
        self._output = value

    @property
    def input_messages(self) -> list[Msg] | None:
        """Messages given to the model (model steps) or to the agent (agent runs)."""
        value = self._input_messages
        if type(value) is Lazy:
            value = value.get()
            self._input_messages = value
        return value  # type: ignore[return-value]

    @input_messages.setter
    def input_messages(self, value: list[Msg] | Lazy | None) -> None:
        self._input_messages = value

    @property
    def output_messages(self) -> list[Msg] | None:
        """Messages the model or agent produced."""
        value = self._output_messages
        if type(value) is Lazy:
            value = value.get()
            self._output_messages = value
        return value  # type: ignore[return-value]

    @output_messages.setter
    def output_messages(self, value: list[Msg] | Lazy | None) -> None:
        self._output_messages = value

    @property
    def has_input_messages(self) -> bool:
        """True when the span carries input messages (without parsing them)."""
        return self._input_messages is not None

    @property
    def notes(self) -> list[str] | None:
        """Why the tree rules made this step what it is (``trace show --explain``), in rule
        order; None when no rule changed it."""
        if self._notes is None:
            return None
        return [text.format(*args) if args else text for text, args in self._notes]

    @property
    def duration_ms(self) -> float | None:
        """Duration in milliseconds; None while the span has not ended."""
        return duration_ms(self.start_time_ns, self.end_time_ns)

    @property
    def ended(self) -> bool:
        """True once the span has ended."""
        return bool(self.end_time_ns)

    @property
    def failed(self) -> bool:
        """True when the span reports an error."""
        return self.status == "error"

    def walk(self) -> Iterator[Step]:
        """This step and every step beneath it, depth first in start order."""
        stack = [self]
        while stack:
            step = stack.pop()
            yield step
            stack.extend(reversed(step.children))

    def descendants(self, *, stop_at: frozenset[str] = frozenset()) -> Iterator[Step]:
        """Steps beneath this one in order; a step whose kind is in ``stop_at`` is yielded but
        not entered."""
        stack = list(reversed(self.children))
        while stack:
            step = stack.pop()
            yield step
            if step.kind not in stop_at:
                stack.extend(reversed(step.children))

    def __repr__(self) -> str:
        return f"Step({self.kind}, {self.name!r}, span_id={self.span_id!r})"


def note(step: Step, text: str, *args: Any) -> None:
    """Record why a tree rule changed ``step`` (read by ``trace show --explain``); ``text`` is a
    ``str.format`` template for ``args``, filled in only when the notes are read, since most
    trees are never explained."""
    if step._notes is None:
        step._notes = [(text, args)]
    else:
        step._notes.append((text, args))


def walk_steps(roots: list[Step]) -> Iterator[Step]:
    """Every step of a forest, depth first in start order."""
    for root in roots:
        yield from root.walk()


__all__ = [
    "KINDS",
    "MODEL_KINDS",
    "Lazy",
    "DECLARED_KINDS",
    "RUN_KINDS",
    "TOOL_KINDS",
    "WORKFLOW_KINDS",
    "Call",
    "File",
    "Msg",
    "Part",
    "Reasoning",
    "Result",
    "Step",
    "note",
    "walk_steps",
]
