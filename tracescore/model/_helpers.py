"""Helpers that read scorer inputs and outputs of any loose shape.

Scorers receive typed ``AgentInput`` / ``list[Message]`` from traces, but users also pass a
string, ``{"text": ...}``, ``{"content": ...}`` or a list of ``{"role", "content"}`` dicts. These
functions turn any of those into messages and text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._messages import AgentInput, Message


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.content
    if isinstance(value, Mapping):
        for key in ("text", "content"):
            if key in value:
                inner = value[key]
                if isinstance(inner, str):
                    return inner
                return Message.model_validate({"role": "user", "content": inner}).content
        return ""
    return str(value)


def to_message(value: Any, *, default_role: str = "user") -> Message:
    """Coerce a message-like value (Message, dict, string) into a ``Message``."""
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping):
        data = dict(value)
        data.setdefault("role", default_role)
        if "content" not in data and "text" in data and "parts" not in data:
            data["content"] = data["text"]
        return Message.model_validate(data)
    return Message(role=default_role, content=_text_of(value))


def to_messages(value: Any, *, default_role: str = "user") -> list[Message]:
    """Coerce a loose value into a list of messages.

    A string or ``{"text": ...}`` becomes one message of ``default_role``; a list becomes one
    message per item; an ``AgentInput`` (or its dict form) gives its input messages.
    """
    if value is None:
        return []
    if isinstance(value, AgentInput):
        return list(value.input_messages)
    if isinstance(value, Mapping) and ("input_messages" in value or "inputMessages" in value):
        return list(AgentInput.model_validate(value).input_messages)
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        return to_messages(value["messages"], default_role=default_role)
    if isinstance(value, list | tuple):
        return [to_message(v, default_role=default_role) for v in value]
    return [to_message(value, default_role=default_role)]


def to_agent_input(value: Any) -> AgentInput:
    """Coerce a loose input into an ``AgentInput`` (system-role messages go to system_messages)."""
    if isinstance(value, AgentInput):
        return value
    if isinstance(value, Mapping) and ("input_messages" in value or "inputMessages" in value):
        return AgentInput.model_validate(value)
    messages = to_messages(value)
    return AgentInput(
        input_messages=[m for m in messages if m.role != "system"],
        system_messages=[m for m in messages if m.role == "system"],
    )


def get_user_message(input: Any) -> str:
    """The text of the first user message of a scorer input of any shape ("" when none)."""
    if isinstance(input, str):
        return input
    for message in to_messages(input):
        if message.role == "user":
            return message.content
    return ""


def get_assistant_message(output: Any) -> str:
    """The text of the last assistant message that has text, from an output of any shape."""
    if isinstance(output, str):
        return output
    messages = to_messages(output, default_role="assistant")
    for message in reversed(messages):
        if message.role == "assistant" and message.content:
            return message.content
    return ""


def get_system_messages(input: Any) -> list[str]:
    """The texts of every system message (plain and tagged) of a scorer input."""
    agent_input = to_agent_input(input)
    texts = [m.content for m in agent_input.system_messages]
    for tagged in agent_input.tagged_system_messages.values():
        texts.extend(m.content for m in tagged)
    return texts


def get_assistant_messages(output: Any) -> list[Message]:
    """Every assistant message of an output of any shape."""
    return [m for m in to_messages(output, default_role="assistant") if m.role == "assistant"]
