"""Builders for the message and run shapes Mastra's own scorer tests use (camelCase dicts).

They let tests pass exactly what a Mastra user would, and check the Python side reads it.
"""

from __future__ import annotations

from typing import Any


def tool_invocation(
    tool_name: str,
    *,
    tool_call_id: str = "call-1",
    args: Any = None,
    result: Any = None,
    state: str = "result",
    **extra: Any,
) -> dict[str, Any]:
    """A Mastra ``toolInvocation`` dict."""
    inv = {"toolCallId": tool_call_id, "toolName": tool_name, "args": args if args is not None
           else {}, "result": result, "state": state}
    inv.update(extra)
    return inv


def message(
    content: str,
    role: str = "assistant",
    *,
    id: str = "test-message",  # noqa: A002
    tool_invocations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``MastraDBMessage`` dict in format 2 (content object with parts)."""
    body: dict[str, Any] = {"format": 2, "parts": [{"type": "text", "text": content}],
                            "content": content}
    if tool_invocations:
        body["toolInvocations"] = tool_invocations
    return {"id": id, "role": role, "content": body, "createdAt": "2025-01-01T00:00:00Z"}


def agent_input(*user_texts: str) -> dict[str, Any]:
    """An agent scorer input (``ScorerRunInputForAgent``) with the given user messages."""
    return {
        "inputMessages": [message(t, "user", id=f"input-{i}") for i, t in enumerate(user_texts)],
        "rememberedMessages": [],
        "systemMessages": [],
        "taggedSystemMessages": {},
    }


def step(name: str, step_type: str = "tool_call", **fields: Any) -> dict[str, Any]:
    """A trajectory step dict."""
    return {"step_type": step_type, "name": name, **fields}


def traj(*names: str, **fields: Any) -> dict[str, Any]:
    """A trajectory of tool_call steps with the given names."""
    return {"steps": [step(n) for n in names], **fields}
