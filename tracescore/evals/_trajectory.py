"""Trajectories for trajectory scorers: from the trace when the target's run was traced into a
tracescore store, else from the agent's messages or the workflow's step results."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from tracescore.model import Message, Trajectory

from ._models import WorkflowRunResult

logger = logging.getLogger(__name__)


def trajectory_from_messages(messages: list[Message]) -> Trajectory:
    """The trajectory of an agent's output messages (its tool calls, in order)."""
    from tracescore.scorers import extract_trajectory

    return extract_trajectory(messages)


def trajectory_from_workflow(result: WorkflowRunResult) -> Trajectory:
    """The trajectory of a workflow run (its steps, in execution order)."""
    from tracescore.scorers import extract_workflow_trajectory

    return extract_workflow_trajectory(result.step_results, result.step_execution_path)


async def trajectory_from_trace(store: Any, trace_id: str) -> Trajectory | None:
    """The hierarchical trajectory of a stored trace; None when the trace is not (yet) there."""
    from tracescore.traces import TraceNotFound, extract_trajectory_from_trace, load_trace

    try:
        if getattr(store, "blocking", False):
            trace = await asyncio.to_thread(load_trace, store, trace_id)
        else:
            trace = load_trace(store, trace_id)
    except TraceNotFound:
        logger.debug("trace %s is not in the store; using the target's own output", trace_id)
        return None
    except Exception as exc:  # an unreadable trace: fall back to the target's output
        logger.warning("could not load trace %s (%s); using the target's own output", trace_id, exc)
        return None
    return extract_trajectory_from_trace(trace)


def concat_trajectories(parts: list[Trajectory]) -> Trajectory:
    """One trajectory made of several (the turns of a multi-turn item), steps in order."""
    if len(parts) == 1:
        return parts[0]
    steps = [step for part in parts for step in part.steps]
    raw_output = [m for part in parts for m in (part.raw_output or [])]
    durations = [p.total_duration_ms for p in parts if p.total_duration_ms is not None]
    return Trajectory(
        steps=steps,
        total_duration_ms=sum(durations) if durations else None,
        raw_output=raw_output or None,
    )
