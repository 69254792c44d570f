"""Read tool calls, tool results and trajectories out of agent output and workflow results.

Agent output is a list of ``Message`` (or any loose shape ``tracescore.model.to_messages``
accepts). A tool invocation is taken from ``Message.tool_invocations``, or from the message's
``tool-invocation`` parts when that list is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tracescore.model import (
    Message,
    RawWorkflowResult,
    ToolCallStep,
    ToolInvocation,
    ToolInvocationPart,
    Trajectory,
    TrajectoryStep,
    WorkflowStepStep,
    to_messages,
)

from ._results import Record

CALLED_STATES = frozenset({"call", "result", "output-error"})
"""Invocation states that mean the model really called the tool (``partial-call`` does not)."""


def output_messages(output: Any) -> list[Message]:
    """The messages of an agent output of any shape (a Trajectory gives its ``raw_output``)."""
    if isinstance(output, Trajectory):
        return list(output.raw_output or [])
    return to_messages(output, default_role="assistant")


def invocations_of(message: Message, *, merge: bool = False) -> list[ToolInvocation]:
    """A message's tool invocations.

    ``tool_invocations`` wins when present; with ``merge=True`` invocations that only sit in
    ``parts`` (for example a failed call the legacy list lost) are added, matched by call id.
    """
    from_parts = [p.tool_invocation for p in message.parts if isinstance(p, ToolInvocationPart)]
    listed = list(message.tool_invocations)
    if not listed:
        return from_parts
    if not merge:
        return listed
    seen = {inv.tool_call_id for inv in listed if inv.tool_call_id}
    return listed + [inv for inv in from_parts if inv.tool_call_id and inv.tool_call_id not in seen]


def extract_tool_calls(output: Any) -> Record:
    """Every tool the model called, in order: ``{"tools": [...], "tool_call_infos": [...]}``.

    A call counts in state ``call``, ``result`` or ``output-error`` (a call that failed was still
    made; Mastra skips ``output-error``); ``partial-call`` (still streaming) does not. Each info is
    ``{tool_name, tool_call_id, message_index, invocation_index}``; a missing call id becomes
    ``"<message_index>-<invocation_index>"``.
    """
    tools: list[str] = []
    infos: list[Record] = []
    for message_index, message in enumerate(output_messages(output)):
        for invocation_index, inv in enumerate(invocations_of(message)):
            if not inv.tool_name or inv.state not in CALLED_STATES:
                continue
            tools.append(inv.tool_name)
            infos.append(
                Record(
                    tool_name=inv.tool_name,
                    tool_call_id=inv.tool_call_id or f"{message_index}-{invocation_index}",
                    message_index=message_index,
                    invocation_index=invocation_index,
                )
            )
    return Record(tools=tools, tool_call_infos=infos)


def extract_tool_results(output: Any) -> list[Record]:
    """The finished tool calls: ``{tool_name, tool_call_id, args, result}`` for state ``result``.

    Calls without a result (``None``) are left out; a missing call id is ``""`` and missing args
    ``{}``. Use it to build context for the faithfulness or hallucination scorers.
    """
    results: list[Record] = []
    for message in output_messages(output):
        for inv in invocations_of(message):
            if inv.state != "result" or inv.result is None:
                continue
            results.append(
                Record(
                    tool_name=inv.tool_name,
                    tool_call_id=inv.tool_call_id or "",
                    args=inv.args if inv.args is not None else {},
                    result=inv.result,
                )
            )
    return results


def extract_trajectory(messages: Any) -> Trajectory:
    """A flat trajectory of ``tool_call`` steps from agent output messages.

    Each called tool (state ``call``, ``result`` or ``output-error``) becomes one step with its
    args; ``tool_result`` is set for finished calls (and for failed ones, holding the error);
    ``success`` is True only for a ``result`` not flagged ``is_error``. ``raw_output`` keeps the
    messages for scorers that need the text.
    """
    msgs = output_messages(messages)
    steps: list[TrajectoryStep] = []
    for message in msgs:
        for inv in invocations_of(message):
            if not inv.tool_name or inv.state not in CALLED_STATES:
                continue
            steps.append(
                ToolCallStep(
                    name=inv.tool_name,
                    tool_args=inv.args,
                    tool_result=None if inv.state == "call" else inv.result,
                    success=inv.state == "result" and not inv.is_error,
                    tool_call_id=inv.tool_call_id,
                )
            )
    return Trajectory(steps=steps, raw_output=msgs)


def _get(result: Any, *names: str) -> Any:
    for name in names:
        if isinstance(result, Mapping) and name in result:
            return result[name]
        if not isinstance(result, Mapping) and hasattr(result, name):
            return getattr(result, name)
    return None


def _ms(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value.timestamp() * 1000.0
    if isinstance(value, int | float):
        return float(value)
    return None


def extract_workflow_trajectory(
    step_results: Mapping[str, Any], step_execution_path: Sequence[str] | None = None
) -> Trajectory:
    """A flat trajectory of ``workflow_step`` steps from a workflow's step results.

    ``step_results`` maps step id → result (``status``, ``output``, ``started_at``/``startedAt``
    and ``ended_at``/``endedAt`` in epoch ms or datetimes, ``metadata``). Steps follow
    ``step_execution_path`` when given (ids without a result are skipped), else the mapping's
    order. ``total_duration_ms`` spans the earliest start to the latest end.
    """
    ids = list(step_execution_path) if step_execution_path is not None else list(step_results)
    steps: list[TrajectoryStep] = []
    first_start: float | None = None
    last_end: float | None = None
    for step_id in ids:
        result = step_results.get(step_id)
        if result is None:
            continue
        started = _ms(_get(result, "started_at", "startedAt"))
        ended = _ms(_get(result, "ended_at", "endedAt"))
        if started is not None and (first_start is None or started < first_start):
            first_start = started
        if ended is not None and (last_end is None or ended > last_end):
            last_end = ended
        metadata = _get(result, "metadata")
        status = _get(result, "status")
        steps.append(
            WorkflowStepStep(
                name=step_id,
                step_id=step_id,
                status=str(status) if status is not None else None,
                output=_get(result, "output"),
                duration_ms=ended - started if started is not None and ended is not None else None,
                metadata=dict(metadata) if isinstance(metadata, Mapping) else None,
            )
        )
    total = last_end - first_start if first_start is not None and last_end is not None else None
    return Trajectory(
        steps=steps,
        total_duration_ms=total,
        raw_workflow_result=RawWorkflowResult(
            step_results={k: v for k, v in step_results.items()},
            step_execution_path=list(step_execution_path) if step_execution_path else None,
        ),
    )
