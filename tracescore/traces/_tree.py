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
4. **The conversation of each run** from its model calls (``_conversation``; read on demand;
   ``_call_answers``: a call that recorded no answer gets the one its run's next call was given).
5. **Tool steps matched to the model's tool calls** (``_tool_steps``, ``_control`` for final
   answers): ``settle_steps``, on first use of the whole tree (``Trace.steps``); the spend of a
   trace (``Trace.structure``) needs stages 1-3 only.

Which step a scorer looks at is ``_targets``'. Each rule that changes a step records why in
``Step.notes`` (``tracescore trace show --explain``).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ._adapters import adapt_span
from ._agent import declared_text
from ._agent_runs import find_agent_runs
from ._call_answers import recover_answers
from ._containers import classify_containers
from ._control import final_answer_span
from ._model_calls import drop_call_records, drop_twin_records, resolve_calls
from ._run_io import declared_answer, last_text
from ._scope import depth_of, own_calls
from ._steps import DECLARED_KINDS, TOOL_KINDS, Step
from ._tool_spans import named_tool_spans, unwrap_payloads
from ._tool_steps import settle_tools

if TYPE_CHECKING:
    from ._span import Span



def build_steps(roots_of: list[Span]) -> tuple[list[Step], list[Step]]:
    """Stages 1-3 of the step forest of the root spans ``roots_of`` (one root step per root),
    and the agent runs stage 5 (``settle_steps``) is still to match the tool steps of."""
    roots: list[Step] = []
    stack: list[tuple[Span, Step | None]] = [(span, None) for span in reversed(roots_of)]
    tools: list[Step] = []
    typed: list[Step] = []
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
        elif kind in DECLARED_KINDS:
            typed.append(step)
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
    # 1. model calls, then the tool executions they explain
    calls: list[Step] = []
    for root in roots:
        calls.extend(resolve_calls(root))
    if plain_leaves and calls:
        tools.extend(named_tool_spans(plain_leaves))
    calls.sort(key=lambda c: c.start_time_ns)
    if empties and calls:
        empties = drop_call_records(empties, calls)
    if len(typed) > 1 and (calls or tools):
        drop_twin_records(typed)
        empties = [e for e in empties if e.kind == "agent_run"]
    # 2. agent runs, bottom-up
    runs = find_agent_runs(calls, tools, empties, roots)
    # 3. what holds them; a run's last tool span that is its final answer
    classify_containers(roots, runs, typed, [*calls, *tools])
    agents = [r for r in runs if r.kind == "agent_run"]
    for run in agents:
        final_answer_span(run, partial(_answer, run))
    agents += [c for c in calls if c.stands_as_agent]
    agents += [r for r in roots if r.stands_as_agent and not r.is_model_call]
    return roots, agents


def _answer(run: Step) -> str:
    calls = own_calls(run)
    return declared_answer(run, calls) or last_text(calls)


def settle_steps(agents: list[Step]) -> None:
    """Stages 4-5 for the runs ``build_steps`` returned (done on first use of the whole tree:
    the tool steps' identity needs every model call's output parsed, which the spend of a trace
    does not): calls' missing answers recovered, then tool steps matched."""
    for agent in sorted(agents, key=depth_of, reverse=True):  # innermost first
        recover_answers(agent)
        settle_tools(agent, partial(declared_text, agent))


__all__ = ["build_steps", "settle_steps"]
