"""Build the normalized step tree of a trace: adapt each span, then apply the tree-level rules.

Adapters see one span at a time (``_adapters``); the decisions that need a span's neighbours are
framework-neutral rules on the tree, each module with its rules in its docstring:

1. ``_collapse``: which steps are runs (chains, AI SDK top calls, workflow children), wrapper
   runs collapsed onto the agent they wrap, implicit agent runs and plain LLM-call traces.
2. ``_model_calls``: which model steps are single calls (tokens counted once), wrappers lending
   their one call what it lacks, request-preparation spans dropped.
3. ``_plumbing``: tool payloads unwrapped and control tools (a final answer, a handoff) as their
   spans are built, handed-to agents moved under the agent that handed off; once model calls
   are known, plain spans named by an asked-for tool become its steps and tool steps are
   completed from the conversation.

The agent's conversation derived from its model calls is ``_conversation``'s; which step a
scorer looks at is ``_targets``'. Each rule that changes a step records why in ``Step.notes``
(``tracescore trace show --explain``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._adapters import adapt_span
from ._collapse import adopt_bodies, classify, collapse_wrappers, implicit_agent
from ._model_calls import resolve_calls
from ._plumbing import (
    complete_tools,
    control_tool,
    handoffs,
    is_control,
    named_tool_spans,
    unwrap_payloads,
)
from ._steps import RUN_KINDS, TOOL_KINDS, Step

if TYPE_CHECKING:
    from ._span import Span


def build_steps(roots_of: list[Span]) -> list[Step]:
    """The normalized step forest of the root spans ``roots_of`` (one root step per root)."""
    roots: list[Step] = []
    stack: list[tuple[Span, Step | None]] = [(span, None) for span in reversed(roots_of)]
    tools: list[Step] = []
    runs: list[Step] = []
    empties: list[Step] = []
    handed: list[Step] = []
    plain_leaves: list[Step] = []
    pop, push = stack.pop, stack.append
    while stack:
        span, parent = pop()
        step = adapt_span(span)
        kind = step.kind
        if kind in TOOL_KINDS:
            unwrap_payloads(step)
            if is_control(step.tool_name):
                control_tool(step)
                if step.hint == "handoff":
                    handed.append(step)
            else:
                tools.append(step)
        elif kind in RUN_KINDS:
            runs.append(step)
            if kind == "agent_run" and not span.children:
                empties.append(step)
        elif kind == "generic" and step.hint is None and parent is not None and not span.children:
            plain_leaves.append(step)
        if parent is None:
            roots.append(step)
        else:
            step.parent = parent
            parent.children.append(step)
        for child in reversed(span.children):
            push((child, step))
    if handed:
        handoffs(handed)
    if empties:
        adopt_bodies(empties)
    nested_runs = len(runs) > 1
    if nested_runs:
        collapse_wrappers(runs)
    for root in roots:
        classify(root, nested_runs=nested_runs)
        implicit_agent(root)
    for root in roots:
        resolve_calls(root)
    if plain_leaves:
        tools.extend(named_tool_spans(plain_leaves))
    # The rules change kinds, fields and (for handoffs) parents, never which spans are steps.
    for step in tools:
        args = step.tool_args
        if args is None or step.tool_result is None or type(args) is str:
            for root in roots:
                complete_tools(root)
            break
    return roots


__all__ = ["build_steps"]
