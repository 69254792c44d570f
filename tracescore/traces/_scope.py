"""A run's own steps: its subtree in order, and which of its steps belong to runs nested in it.

``scope``, ``in_nested`` and ``own_model_steps`` are for a final tree (stage 4 and 5, and the
outputs) and keep their results on the step; ``own_calls`` and ``own_tools`` read the tree as it
is (stage 3 still moves runs).
"""

from __future__ import annotations

from ._steps import MODEL_KINDS, RUN_KINDS, TOOL_KINDS, Step


def scope(agent: Step) -> list[Step]:
    """The run's subtree in order (the run itself first when it is model work); kept on the step,
    since the tree does not change once built."""
    cached = agent._scope_cache
    if cached is None:
        below = list(agent.descendants())
        cached = [agent, *below] if agent.kind in MODEL_KINDS else below
        agent._scope_cache = cached
    return cached


def in_nested(step: Step, agent: Step) -> bool:
    """True when ``step`` sits inside an agent run nested in ``agent``."""
    parent = step.parent
    while parent is not None and parent is not agent:
        if parent.kind == "agent_run":
            return True
        parent = parent.parent
    return False


def own_model_steps(agent: Step) -> list[Step]:
    """Model steps of this run (wrappers and calls), not those of nested agent runs, in order."""
    cached = agent._model_steps_cache
    if cached is None:
        cached = [s for s in scope(agent) if s.kind in MODEL_KINDS and not in_nested(s, agent)]
        agent._model_steps_cache = cached
    return cached


def own_work(run: Step) -> tuple[list[Step], list[Step]]:
    """The run's own model calls and its own tool steps, in tree order, read in one walk (not
    those of runs nested in it)."""
    calls: list[Step] = []
    tools: list[Step] = []
    stack = run.children[::-1]
    pop, push = stack.pop, stack.extend
    while stack:
        step = pop()
        kind = step.kind
        if step.is_model_call:
            calls.append(step)
        if kind in TOOL_KINDS:
            tools.append(step)
        if step.children and kind not in RUN_KINDS:
            push(step.children[::-1])
    return calls, tools


def own_calls(run: Step) -> list[Step]:
    """The run's own model calls in tree order (not those of runs nested in it)."""
    return own_work(run)[0]


def own_tools(run: Step) -> list[Step]:
    """The run's own tool steps (not those of nested runs)."""
    return own_work(run)[1]


def depth_of(step: Step) -> int:
    """How many steps are above ``step``."""
    depth = 0
    node = step.parent
    while node is not None:
        depth += 1
        node = node.parent
    return depth


__all__ = [
    "depth_of",
    "in_nested",
    "own_calls",
    "own_model_steps",
    "own_tools",
    "own_work",
    "scope",
]
