"""Shared readers for code scorers: assistant text, tool names, tool errors of any output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore.model import ToolInvocation, Trajectory, get_assistant_messages, to_agent_input

from ._extract import extract_tool_calls, invocations_of, output_messages

TOOL_STEP_TYPES = frozenset({"tool_call", "mcp_tool_call", "provider_tool_call"})


def assistant_text(output: Any, sep: str = " ") -> str:
    """The text of every assistant message of the output, joined by ``sep``."""
    if isinstance(output, Trajectory):
        output = output.raw_output or []
    return sep.join(m.content for m in get_assistant_messages(output))


def _trajectory_of(output: Any) -> Trajectory | None:
    if isinstance(output, Trajectory):
        return output
    if isinstance(output, Mapping) and isinstance(output.get("steps"), list):
        return Trajectory.model_validate(output)
    return None


def tool_names(output: Any) -> list[str]:
    """The tools called, in order: from agent messages, or a trajectory's top-level tool steps."""
    trajectory = _trajectory_of(output)
    if trajectory is not None:
        return [s.name for s in trajectory.steps if s.step_type in TOOL_STEP_TYPES]
    tools: list[str] = extract_tool_calls(output)["tools"]
    return tools


def is_error_invocation(inv: ToolInvocation) -> bool:
    """A failed or unfinished call: no result yet, ``output-error``, ``is_error``, or a result
    carrying a truthy ``error``."""
    if inv.state in ("call", "partial-call", "output-error") or inv.is_error:
        return True
    return isinstance(inv.result, Mapping) and bool(inv.result.get("error"))


def tool_errors(output: Any) -> tuple[list[str], int]:
    """(names of the failed calls, number of calls), for agent messages or a trajectory."""
    trajectory = _trajectory_of(output)
    if trajectory is not None:
        tools: list[Any] = [s for s in trajectory.steps if s.step_type in TOOL_STEP_TYPES]
        failed = [s.name for s in tools if s.success is False or (
            isinstance(s.tool_result, Mapping) and bool(s.tool_result.get("error")))]
        return failed, len(tools)
    invocations = [inv for m in output_messages(output) for inv in invocations_of(m, merge=True)]
    return [inv.tool_name for inv in invocations if is_error_invocation(inv)], len(invocations)


def joined_input_text(run_input: Any, sep: str = ", ") -> str:
    """The text of every input message that has text, joined by ``sep`` (Mastra's code scorers
    join with ``", "``); system messages are not input messages."""
    return sep.join(m.content for m in to_agent_input(run_input).input_messages if m.content)


def joined_output_text(output: Any, sep: str = ", ") -> str:
    """The text of every output message that has text (any role), joined by ``sep``; a message
    with only tool calls adds nothing."""
    return sep.join(m.content for m in output_messages(output) if m.content)
