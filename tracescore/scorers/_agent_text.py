"""The conversation, tool calls and stated plans of an agent run, as the behaviour judges read
them (goal completion, plan adherence, tool-argument correctness).

The conversation is the input's earlier turns and new input (``AgentInput``; on a session
target every earlier turn is there) followed by the output's assistant messages, each tool call
on its own line under the message that made it. Values are cut at ``VALUE_CHARS`` so one huge
tool result cannot crowd out the rest; the navigating judge reads them whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracescore.model import Message, ToolInvocation, to_agent_input

from ._extract import CALLED_STATES, invocations_of, output_messages

VALUE_CHARS = 1_000
"""Characters of one tool argument or result shown in a whole prompt."""
FINAL_CHARS = 4_000
"""Characters of the first user message and the final answer shown in a navigating prompt."""


def cut(value: Any, limit: int = VALUE_CHARS) -> str:
    """A value as text (JSON for structures), cut to ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more chars)"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of the output, numbered from 1 in call order."""

    index: int
    name: str
    args: Any
    result: Any
    failed: bool
    message_index: int
    """Which output message made it (0-based)."""

    def line(self, limit: int = VALUE_CHARS) -> str:
        """``#2 convert_temperature(args: {...}) → result: {...}`` (``→ error`` if it failed)."""
        outcome = "error" if self.failed else "result"
        shown = "(none)" if self.result is None else cut(self.result, limit)
        return f"#{self.index} {self.name}(args: {cut(self.args, limit)}) → {outcome}: {shown}"


def input_messages(run_input: Any) -> list[Message]:
    """The conversation before the output: earlier turns, then this run's input."""
    try:
        agent_input = to_agent_input(run_input)
    except (TypeError, ValueError):
        return []
    return [*agent_input.remembered_messages, *agent_input.input_messages]


def outputs(run_output: Any) -> list[Message]:
    """The output's messages (none for a shape that holds no messages)."""
    try:
        return output_messages(run_output)
    except (TypeError, ValueError):
        return []


def tool_calls(run_output: Any) -> list[ToolCall]:
    """Every tool call the output made, in order (states ``call``, ``result``,
    ``output-error``)."""
    calls: list[ToolCall] = []
    for m_index, message in enumerate(outputs(run_output)):
        for inv in invocations_of(message):
            if inv.tool_name and inv.state in CALLED_STATES:
                calls.append(ToolCall(len(calls) + 1, inv.tool_name, inv.args, inv.result,
                                      _failed(inv), m_index))
    return calls


def _failed(inv: ToolInvocation) -> bool:
    return inv.state == "output-error" or inv.is_error


def _message_lines(message: Message, numbered: list[ToolCall]) -> list[str]:
    role = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}
    lines = [f"{role.get(message.role, message.role)}: {message.content}".rstrip()]
    lines += [f"  → {call.line()}" for call in numbered]
    return lines


def conversation_text(run_input: Any, run_output: Any) -> str:
    """The whole conversation (see the module docstring), one block per message."""
    lines: list[str] = []
    for message in input_messages(run_input):
        if message.role != "system":
            lines += _message_lines(message, [])
    calls = tool_calls(run_output)
    for m_index, message in enumerate(outputs(run_output)):
        lines += _message_lines(message, [c for c in calls if c.message_index == m_index])
    return "\n".join(lines) or "(no messages)"


def user_texts(run_input: Any) -> list[str]:
    """The text of every user message of the conversation, in order."""
    return [m.content for m in input_messages(run_input) if m.role == "user" and m.content]


def final_answer(run_output: Any) -> str:
    """The text of the last assistant message with text ("" when there is none)."""
    for message in reversed(outputs(run_output)):
        if message.role == "assistant" and message.content.strip():
            return message.content
    return ""


def plan_statements(run_output: Any) -> list[str]:
    """What the agent wrote (text or reasoning) before tool calls: its stated plans, in order.

    A text or reasoning part counts when a tool call follows it before the next user message;
    text after the last tool call (the answer) does not. A message without parts counts its
    text when it also holds tool calls.
    """
    plans: list[str] = []
    pending: list[str] = []
    for message in outputs(run_output):
        if message.role == "user":
            pending = []
            continue
        if not message.parts:
            if message.content.strip() and message.tool_invocations:
                plans.append(message.content.strip())
            continue
        for part in message.parts:
            if part.type in ("text", "reasoning") and part.text.strip():
                pending.append(part.text.strip())
            elif part.type == "tool-invocation" and pending:
                plans += pending
                pending = []
    return plans


def numbered_lines(items: Sequence[str], empty: str) -> str:
    """Items one per line, or ``empty``."""
    return "\n".join(items) if items else empty


__all__ = ["FINAL_CHARS", "VALUE_CHARS", "ToolCall", "conversation_text", "cut",
           "final_answer", "input_messages", "numbered_lines", "outputs", "plan_statements",
           "tool_calls", "user_texts"]
