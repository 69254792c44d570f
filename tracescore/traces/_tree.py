"""Build the normalized step tree of a trace: adapt each span, then the tree rules in stages.

Each stage decides one thing from what the spans contain (not from framework names), in a
module of its own with its rules in its docstring; no stage reaches into an earlier one's
internals:

1. **Model calls and tool executions** (``_adapters`` and the convention adapters, the generic
   shape adapter last; ``_model_calls``: which model steps are single calls; ``_tool_spans``:
   tool payloads, plain spans named by an asked-for tool).
2. **Agent runs, found bottom-up** from them (``_agent_runs``, with ``_loops``: model calls
   grouped into conversations by what they carry).
3. **Containers classified by content** (``_containers``): handoffs, wrappers, workflow runs and
   their steps, plumbing.
4. **The conversation of each run** from its model calls (``_conversation``; read on demand).
5. **Tool steps matched to the model's tool calls** (``_tool_steps``, ``_control`` for final
   answers).

Which step a scorer looks at is ``_targets``'. Each rule that changes a step records why in
``Step.notes`` (``tracescore trace show --explain``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._adapters import adapt_span
from ._agent import declared_text
from ._agent_runs import find_agent_runs
from ._containers import classify_containers
from ._model_calls import resolve_calls
from ._scope import depth_of
from ._steps import TOOL_KINDS, Step
from ._tool_spans import named_tool_spans, unwrap_payloads
from ._tool_steps import settle_tools

if TYPE_CHECKING:
    from ._span import Span


def build_steps(roots_of: list[Span]) -> list[Step]:
    """The normalized step forest of the root spans ``roots_of`` (one root step per root)."""
    roots: list[Step] = []
    stack: list[tuple[Span, Step | None]] = [(span, None) for span in reversed(roots_of)]
    tools: list[Step] = []
    empties: list[Step] = []
    plain_leaves: list[Step] = []
    pop, push = stack.pop, stack.append
    while stack:
        span, parent = pop()
        step = adapt_span(span)
        kind = step.kind
        if kind in TOOL_KINDS:
            unwrap_payloads(step)
            tools.append(step)
        elif kind == "agent_run" and not span.children:
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
    # 1. model calls, then the tool executions they explain
    calls: list[Step] = []
    for root in roots:
        calls.extend(resolve_calls(root))
    if plain_leaves and calls:
        tools.extend(named_tool_spans(plain_leaves))
    calls.sort(key=lambda c: c.start_time_ns)
    # 2. agent runs, bottom-up
    runs = find_agent_runs(calls, tools, empties, roots)
    # 3. what holds them
    classify_containers(roots, runs)
    # 5. tool steps (stage 4, the conversation, is read on demand by the consumers)
    agents = [r for r in runs if r.kind == "agent_run"]
    agents += [c for c in calls if c.stands_as_agent]
    agents += [r for r in roots if r.stands_as_agent and not r.is_model_call]
    agents.sort(key=depth_of, reverse=True)  # innermost first: an outer run lists nested tools
    for agent in agents:
        settle_tools(agent, declared_text(agent))
    return roots


__all__ = ["build_steps"]
