"""Scorer inputs from traces: ``ScorerRun`` objects for agent, trajectory and span scorers, and the
JSON that ``GET /api/traces/{id}/scorer-input`` returns."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from tracescore.model import AgentInput, Message, ScorerRun, Trajectory

from ._agent import agent_input, agent_output
from ._identity import session_id_of, user_id_of
from ._message_out import to_message
from ._scope import own_model_steps
from ._steps import MODEL_KINDS, TOOL_KINDS, Msg, Step
from ._targets import default_agent, default_target, is_agent, step_of
from ._trace import Trace
from ._trajectory import trajectory_of
from ._values import jsonable

ScorerInputKind = Literal["agent", "workflow", "span"]


def _context(step: Step) -> dict[str, Any] | None:
    context: dict[str, Any] = {}
    node: Step | None = step
    while node is not None and not (context.get("conversation_id") and context.get("user_id")):
        conversation = node.conversation_id or session_id_of(node.attributes)
        if conversation and "conversation_id" not in context:
            context["conversation_id"] = conversation
        user = node.user_id or user_id_of(node.attributes)
        if user and "user_id" not in context:
            context["user_id"] = user
        node = node.parent
    if (step.kind == "agent_run" or step.stands_as_agent) and not context.get("conversation_id"):
        # A run whose own span carries no session (or only a placeholder): its model calls may
        # (OpenInference's using_session on an LLM client traced under a plain span; Logfire's
        # OpenAI spans, whose session.id it does not scrub).
        for below in own_model_steps(step):
            conversation = below.conversation_id or session_id_of(below.attributes)
            if conversation:
                context["conversation_id"] = conversation
                user = below.user_id or user_id_of(below.attributes)
                if user and "user_id" not in context:
                    context["user_id"] = user
                break
    return context or None


def _run(trace: Trace, step: Step | None, input: Any, output: Any) -> ScorerRun:
    return ScorerRun(
        input=input,
        output=output,
        trace_id=trace.trace_id or None,
        span_id=(step.span_id or None) if step is not None else None,
        request_context=_context(step) if step is not None else None,
    )


def trace_to_agent_run(trace: Trace, span_id: str | None = None) -> ScorerRun:
    """The input and output an agent-type scorer sees for an agent run of the trace.

    Target: ``span_id``, else the outermost agent run (else the default target). ``input`` is an
    ``AgentInput``; ``output`` a list of assistant ``Message`` with the answer text and every tool
    invocation beneath the run. An empty trace gives an empty input and output.
    """
    step = step_of(trace, span_id) if span_id is not None else default_agent(trace)
    if step is None:
        return _run(trace, None, AgentInput(), [])
    return _run(trace, step, agent_input(step), agent_output(step))


def trace_to_trajectory_run(trace: Trace, span_id: str | None = None) -> ScorerRun:
    """The run a trajectory-type scorer sees: the target's input and its ``Trajectory`` as output.

    Target: ``span_id``, else the default target (outermost agent or workflow run, else the root).
    """
    step = step_of(trace, span_id) if span_id is not None else default_target(trace)
    if step is None:
        return _run(trace, None, None, Trajectory())
    if is_agent(step):
        output = agent_output(step)
        return _run(trace, step, agent_input(step), trajectory_of([step], raw_output=output))
    return _run(trace, step, _span_io(step)[0], trajectory_of([step]))


def trace_to_workflow_run(trace: Trace, span_id: str | None = None) -> ScorerRun:
    """A workflow run's input and output (its trajectory carries step results and the path)."""
    step = step_of(trace, span_id) if span_id is not None else default_target(trace)
    if step is None:
        return _run(trace, None, None, None)
    input, output = _span_io(step)
    return _run(trace, step, input, output)


def trace_to_span_run(trace: Trace, span_id: str) -> ScorerRun:
    """The input and output of one span, for scorers of single spans.

    An agent run gives its agent input/output; a model call its input and output messages; a tool
    call its arguments and result; anything else its input and output values.
    """
    step = step_of(trace, span_id)
    if is_agent(step):
        return _run(trace, step, agent_input(step), agent_output(step))
    input, output = _span_io(step)
    return _run(trace, step, input, output)


def trace_to_scorer_run(
    trace: Trace, span_id: str | None = None, *, scorer_type: str | None = None
) -> ScorerRun:
    """The run a scorer of ``scorer_type`` ("agent", "trajectory" or None) sees for a target.

    ``agent``: ``trace_to_agent_run``; ``trajectory``: ``trace_to_trajectory_run``; None: by the
    target's kind (agent run, workflow run, or the span's own input/output).
    """
    if scorer_type == "agent":
        return trace_to_agent_run(trace, span_id)
    if scorer_type == "trajectory":
        return trace_to_trajectory_run(trace, span_id)
    step = step_of(trace, span_id) if span_id is not None else default_target(trace)
    if step is None:
        return _run(trace, None, None, None)
    if step.kind == "agent_run" or (span_id is None and step.stands_as_agent) or (
        span_id is not None and not step.stands_as_agent and is_agent(step)
    ):
        return _run(trace, step, agent_input(step), agent_output(step))
    input, output = _span_io(step)
    return _run(trace, step, input, output)


def trace_to_scorer_runs(
    trace: Trace, span_id: str, scorer_types: Iterable[str | None]
) -> dict[str | None, ScorerRun]:
    """``trace_to_scorer_run`` for one target span and several scorer types at once: by type,
    the same runs, with the target's agent input and output built once and shared between
    them (the same objects: scorers read their run, they do not change it)."""
    types = list(dict.fromkeys(scorer_types))
    if len(types) == 1:
        return {types[0]: trace_to_scorer_run(trace, span_id, scorer_type=types[0])}
    step = step_of(trace, span_id)
    built: dict[str, Any] = {}

    def agent_io() -> tuple[AgentInput, list[Message]]:
        if "agent" not in built:
            built["agent"] = (agent_input(step), agent_output(step))
        found: tuple[AgentInput, list[Message]] = built["agent"]
        return found

    runs: dict[str | None, ScorerRun] = {}
    for kind in types:
        if kind == "trajectory":
            if is_agent(step):
                agent_in, agent_out = agent_io()
                runs[kind] = _run(trace, step, agent_in,
                                  trajectory_of([step], raw_output=agent_out))
            else:
                runs[kind] = _run(trace, step, _span_io(step)[0], trajectory_of([step]))
        elif kind == "agent" or step.kind == "agent_run" or (
            not step.stands_as_agent and is_agent(step)
        ):
            runs[kind] = _run(trace, step, *agent_io())
        else:
            runs[kind] = _run(trace, step, *_span_io(step))
    return runs


def _messages(msgs: list[Msg] | None) -> list[Message]:
    return [to_message(m) for m in msgs or []]


def _span_io(step: Step) -> tuple[Any, Any]:
    if step.kind in MODEL_KINDS:
        return _messages(step.input_messages), _messages(step.output_messages)
    if step.kind in TOOL_KINDS:
        return step.tool_args, step.tool_result
    input = step.input
    output = step.output
    if step.convention == "genai" and _carry(step.input_messages):
        input = _messages(step.input_messages)
    if step.convention == "genai" and _carry(step.output_messages):
        output = _messages(step.output_messages)
    return input, output


def _carry(messages: list[Msg] | None) -> bool:
    """Whether messages carry anything: a record read as one empty message (``{"request":
    …}`` under a message key) does not, and the span's value stands."""
    return bool(messages) and any(m.parts for m in messages or [])


def kind_of(step: Step) -> ScorerInputKind:
    """The scorer-input kind of a target step (a model call standing as the agent of a plain
    LLM-call trace is an agent)."""
    if is_agent(step):
        return "agent"
    if step.kind == "workflow_run":
        return "workflow"
    return "span"


def scorer_input(trace: Trace, span_id: str | None = None) -> dict[str, Any]:
    """What a scorer would see for a target of the trace, as JSON-ready data.

    ``{"trace_id", "span_id", "kind": "agent"|"workflow"|"span", "input", "output",
    "trajectory"}``: for an agent run ``input`` is the ``AgentInput`` (``input_messages``,
    ``remembered_messages``, ``system_messages``, ``tagged_system_messages``) and ``output`` a list
    of messages (``role``, ``content``, ``tool_invocations``, …); ``trajectory`` is the
    ``Trajectory`` (``steps`` with ``step_type``, ``name``, ``children``, …). The default target
    is the outermost agent or workflow run, else the root span. Raises ``SpanNotFound`` for an
    unknown ``span_id``.
    """
    step = step_of(trace, span_id) if span_id is not None else default_target(trace)
    if step is None:
        return {
            "trace_id": trace.trace_id,
            "span_id": None,
            "kind": "span",
            "input": None,
            "output": None,
            "trajectory": Trajectory().model_dump(mode="json"),
        }
    kind = kind_of(step)
    if kind == "agent":
        agent_in = agent_input(step)
        agent_out = agent_output(step)
        input: Any = agent_in.model_dump(mode="json")
        output: Any = [m.model_dump(mode="json") for m in agent_out]
        # The trajectory's raw output is the output just dumped: dump those messages once.
        trajectory = trajectory_of([step], raw_output=agent_out)
        dumped = trajectory.model_dump(mode="json", exclude={"raw_output"})
        trajectory_json = {
            name: output if name == "raw_output" else dumped[name] for name in _TRAJECTORY_FIELDS
        }
    else:
        raw_in, raw_out = _span_io(step)
        input, output = jsonable(raw_in), jsonable(raw_out)
        trajectory_json = trajectory_of([step]).model_dump(mode="json")
    return {
        "trace_id": trace.trace_id,
        "span_id": step.span_id or None,
        "kind": kind,
        "input": input,
        "output": output,
        "trajectory": trajectory_json,
    }


_TRAJECTORY_FIELDS = tuple(Trajectory.model_fields)


__all__ = [
    "kind_of",
    "scorer_input",
    "trace_to_agent_run",
    "trace_to_scorer_run",
    "trace_to_scorer_runs",
    "trace_to_span_run",
    "trace_to_trajectory_run",
    "trace_to_workflow_run",
]
