"""Messages, message parts, tool invocations and the agent scorer input.

These mirror Mastra's ``MastraDBMessage`` and ``ScorerRunInputForAgent`` in Python spelling.
``Message.content`` is always the message's text; structured content sits in ``parts`` and
``tool_invocations``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ._base import Model

Role = Literal["user", "assistant", "system", "tool"]
ToolState = Literal["call", "partial-call", "result", "output-error"]


class ToolInvocation(Model):
    """One tool call made by the assistant, with its result once known."""

    tool_call_id: str | None = None
    """The provider's id for the call (links the call to its result)."""
    tool_name: str
    """The tool's name."""
    args: Any = None
    """The arguments the model passed (usually a dict)."""
    result: Any = None
    """What the tool returned; None while the call is unfinished."""
    state: ToolState = "call"
    """``call`` (no result yet), ``partial-call`` (args still streaming), ``result`` (returned)
    or ``output-error`` (the tool failed)."""
    is_error: bool = False
    """True when the tool reported an error."""


class TextPart(Model):
    """Plain text in a message."""

    type: Literal["text"] = "text"
    text: str = ""


class ReasoningPart(Model):
    """Model reasoning text, kept apart from the answer."""

    type: Literal["reasoning"] = "reasoning"
    text: str = ""


class ToolInvocationPart(Model):
    """A tool invocation as a message part."""

    type: Literal["tool-invocation"] = "tool-invocation"
    tool_invocation: ToolInvocation


class FilePart(Model):
    """A file or image attached to a message (by URL or inline data)."""

    type: Literal["file"] = "file"
    media_type: str | None = None
    url: str | None = None
    data: str | None = None
    filename: str | None = None


MessagePart = Annotated[
    TextPart | ReasoningPart | ToolInvocationPart | FilePart, Field(discriminator="type")
]


class Message(Model):
    """One message of a conversation; ``content`` is its text."""

    id: str | None = None
    """A stable id when the source has one."""
    role: Role
    """Who wrote it."""
    content: str = ""
    """The message text (text parts joined); empty for a message with only tool calls."""
    parts: list[MessagePart] = Field(default_factory=list)
    """Text, reasoning, tool-invocation and file parts in order."""
    tool_invocations: list[ToolInvocation] = Field(default_factory=list)
    """Every tool call in the message (also present as parts)."""
    created_at: datetime | None = None
    """When the message was written, if known."""

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        """Accept OpenAI-style list content and fill content/parts/tool_invocations from each
        other."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        content = data.get("content")
        if isinstance(content, list):
            parts = list(data.get("parts") or [])
            for item in content:
                if isinstance(item, str):
                    parts.append({"type": "text", "text": item})
                elif isinstance(item, dict) and item.get("type") in (
                    "text",
                    "reasoning",
                    "tool-invocation",
                    "file",
                ):
                    parts.append(item)
                elif isinstance(item, dict) and "text" in item:
                    parts.append({"type": "text", "text": item["text"]})
            data["parts"] = parts
            data["content"] = None
        elif isinstance(content, dict):
            # Mastra's v2 format: {"format": 2, "parts": [...], "toolInvocations": [...]}.
            data.setdefault("parts", content.get("parts") or [])
            if content.get("toolInvocations") and not data.get("tool_invocations"):
                data["tool_invocations"] = content["toolInvocations"]
            text = content.get("content")
            data["content"] = text if isinstance(text, str) else None
        elif content is not None and not isinstance(content, str):
            data["content"] = str(content)
        if data.get("content") is None:
            texts = []
            for p in data.get("parts") or []:
                ptype = p.get("type") if isinstance(p, dict) else getattr(p, "type", None)
                if ptype == "text":
                    texts.append(p.get("text", "") if isinstance(p, dict) else p.text)
            data["content"] = "".join(texts)
        if not data.get("tool_invocations") and not data.get("toolInvocations"):
            invs = []
            for p in data.get("parts") or []:
                if isinstance(p, dict) and p.get("type") == "tool-invocation":
                    invs.append(p.get("tool_invocation") or p.get("toolInvocation"))
                elif isinstance(p, ToolInvocationPart):
                    invs.append(p.tool_invocation)
            if invs:
                data["tool_invocations"] = invs
        return data

    @property
    def text(self) -> str:
        """The message text (same as ``content``)."""
        return self.content

    def __str__(self) -> str:
        """``role: text`` with one ``→ tool(args) = result`` line per tool call."""
        lines = [f"{self.role}: {self.content}".rstrip()]
        for call in self.tool_invocations:
            result = "" if call.result is None else f" = {_short(call.result)}"
            lines.append(f"  → {call.tool_name}({_short(call.args)}){result}")
        return "\n".join(lines)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AgentInput(Model):
    """What an agent-type scorer sees as input (Mastra's ``ScorerRunInputForAgent``).

    ``str(agent_input)`` is the conversation, one message per line block, in the order the
    model saw it: system, tagged system, remembered, then this run's input.
    """

    def __str__(self) -> str:
        """The readable conversation (see the class docstring)."""
        blocks = [str(m) for m in self.system_messages]
        for tag, messages in self.tagged_system_messages.items():
            blocks += [f"[{tag}] {m}" for m in messages]
        blocks += [str(m) for m in self.remembered_messages]
        blocks += [str(m) for m in self.input_messages]
        return "\n".join(blocks) or "(no messages)"

    input_messages: list[Message] = Field(default_factory=list)
    """This run's new input (usually the user's message)."""
    remembered_messages: list[Message] = Field(default_factory=list)
    """Earlier conversation given to the model (memory/history), excluding system and input."""
    system_messages: list[Message] = Field(default_factory=list)
    """System instructions the model was given."""
    tagged_system_messages: dict[str, list[Message]] = Field(default_factory=dict)
    """System messages grouped by a tag (for example the processor or memory that added them)."""
