"""Which step a scorer looks at: the default target of a trace, and spans of a given kind.

The default target is the outermost agent or workflow run (wrapper runs were collapsed onto
their agent by the tree rules, so this is the run that has the content); in a plain LLM-call
trace, the model call that stands as the agent; else the root span (all roots together when the
trace's root never arrived). ``choose_target`` says which rule chose it.
"""

from __future__ import annotations

from collections import deque
from typing import Literal

from ._steps import RUN_KINDS, TOOL_KINDS, Step, walk_steps
from ._trace import Trace

TargetKind = Literal[
    "trace", "agent_run", "workflow_run", "workflow_step", "tool_call", "model_generation"
]


def step_of(trace: Trace, span_id: str) -> Step:
    """The normalized step of a span (raises ``SpanNotFound`` for an unknown id)."""
    trace.span(span_id)
    for step in walk_steps(trace.steps):
        if step.span_id == span_id:
            return step
    raise AssertionError("every span has a step")  # pragma: no cover


def outermost(trace: Trace, kinds: frozenset[str]) -> Step | None:
    """The shallowest step of one of ``kinds`` (earliest among equals), breadth first."""
    queue = deque(trace.steps)
    while queue:
        step = queue.popleft()
        if step.kind in kinds:
            return step
        queue.extend(step.children)
    return None


def default_target(trace: Trace) -> Step | None:
    """The outermost agent or workflow run, else the model call standing as the agent of a plain
    LLM-call trace, else the root step (None for an empty trace).

    A trace whose root is missing (its spans' parent never arrived) and that holds no run has
    several roots: they are taken together, as one unnamed run with no span id.
    """
    run = outermost(trace, RUN_KINDS)
    if run is not None:
        return run
    if len(trace.steps) > 1:
        return forest_step(trace)
    if not trace.steps:
        return None
    for step in walk_steps(trace.steps):
        if step.stands_as_agent:
            return step
    return trace.steps[0]


def choose_target(trace: Trace) -> tuple[Step | None, str]:
    """The default target and the rule that chose it (for ``trace show --explain``)."""
    step = default_target(trace)
    if step is None:
        return None, "the trace has no spans"
    if step.kind in RUN_KINDS and step.span_id:
        return step, f"the outermost {step.kind.replace('_', ' ')} of the trace"
    if step.hint == "forest":
        return step, f"no run and no single root: the {len(trace.steps)} root spans together"
    if step.stands_as_agent:
        return step, "no agent or workflow run: the outermost model call stands as the agent"
    return step, "no agent or workflow run and no model call: the root span"


def is_agent(step: Step) -> bool:
    """True for an agent run, a model call standing as the agent of a plain LLM-call trace, or
    a plain span asked for by id whose subtree is a plain LLM-call loop (several model calls,
    or a call and a tool, and no run): the plain-trace rule applied to the subtree."""
    if step.kind == "agent_run" or step.stands_as_agent:
        return True
    if step.kind != "generic" or step.is_model_call:
        return False
    calls = tools = 0
    for below in step.descendants():
        if below.kind in RUN_KINDS:
            return False
        calls += below.is_model_call
        tools += below.kind in TOOL_KINDS
    return calls > 1 or (calls == 1 and tools > 0)


def forest_step(trace: Trace) -> Step:
    """A step (no span id) whose children are all the trace's root steps; parents are untouched."""
    step = Step(
        "",
        "agent_run",
        "(trace)",
        start_time_ns=trace.start_time_ns or 0,
        end_time_ns=trace.end_time_ns,
    )
    step.hint = "forest"
    step.children = list(trace.steps)
    if any(s.kind in TOOL_KINDS or s.is_model_call for s in walk_steps(trace.steps)):
        return step
    step.kind = "generic"
    return step


def default_agent(trace: Trace) -> Step | None:
    """The outermost agent run, else the default target."""
    return outermost(trace, _AGENT) or default_target(trace)


_AGENT = frozenset({"agent_run"})


def find_target_spans(trace: Trace, kind: str) -> list[str]:
    """Span ids a scorer of ``kind`` targets in this trace, in start order.

    ``trace``: the outermost agent or workflow run, else the model call standing as the agent of
    a plain LLM-call trace, else the root span (one id at most); ``agent_run``: every agent run
    (and that standing model call); ``model_generation``: every single model call;
    ``tool_call``: every tool execution (MCP and provider tools included); any other kind
    (``workflow_run``, ``workflow_step``, …): every step of that kind.
    """
    if kind == "trace":
        target = default_target(trace)
        return [target.span_id] if target is not None and target.span_id else []
    out: list[str] = []
    for step in walk_steps(trace.steps):
        if kind == "model_generation":
            if step.is_model_call:
                out.append(step.span_id)
        elif kind == "tool_call":
            if step.kind in TOOL_KINDS:
                out.append(step.span_id)
        elif step.kind == kind or (kind == "agent_run" and step.stands_as_agent):
            out.append(step.span_id)
    return out


__all__ = [
    "TargetKind",
    "choose_target",
    "default_agent",
    "default_target",
    "forest_step",
    "find_target_spans",
    "is_agent",
    "outermost",
    "step_of",
]
