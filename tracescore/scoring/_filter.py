"""``filter_run``: a ready-made ``prepare_run`` that trims what a scorer (and its judge) sees.

Typical use: keep only text parts so a judge prompt is not flooded with tool payloads, or keep
the last few remembered messages of a long conversation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tracescore.model import AgentInput, Message, ScorerRun, TextPart, ToolInvocation
from tracescore.model import to_message as _to_message

_TOOL_PART = "tool-invocation"


def _matches(value: str, prefixes: Sequence[str] | None) -> bool:
    return prefixes is None or any(value.startswith(p) for p in prefixes)


def _filter_message(
    message: Message, part_types: Sequence[str] | None, tool_names: Sequence[str] | None
) -> Message | None:
    """The message with only the wanted parts; None when filtering left nothing in it."""
    parts: list[Any] = list(message.parts)
    implicit_text = not parts and bool(message.content)
    if implicit_text:
        parts = [TextPart(text=message.content)]
    kept = []
    for part in parts:
        if not _matches(part.type, part_types):
            continue
        if part.type == _TOOL_PART and not _matches(part.tool_invocation.tool_name, tool_names):
            continue
        kept.append(part)
    tools_allowed = _matches(_TOOL_PART, part_types)
    invocations: list[ToolInvocation] = [
        inv for inv in message.tool_invocations
        if tools_allowed and _matches(inv.tool_name, tool_names)
    ]
    if part_types is None:
        content = message.content  # only tools are filtered: the text stays as it is
    else:
        content = "".join(p.text for p in kept if p.type == "text")
    if not kept and not content and not invocations and (
        message.parts or message.content or message.tool_invocations
    ):
        return None
    return message.model_copy(update={
        "parts": [] if implicit_text else kept,
        "content": content,
        "tool_invocations": invocations,
    })


def _filter_messages(
    messages: Sequence[Any], part_types: Sequence[str] | None, tool_names: Sequence[str] | None,
    *, default_role: str,
) -> list[Message]:
    out = []
    for item in messages:
        message = _to_message(item, default_role=default_role)
        filtered = _filter_message(message, part_types, tool_names)
        if filtered is not None:
            out.append(filtered)
    return out


def _last(items: list[Any], count: int | None) -> list[Any]:
    if count is None:
        return items
    return items[-count:] if count > 0 else []


def filter_run(
    *,
    part_types: Sequence[str] | None = None,
    tool_names: Sequence[str] | None = None,
    max_remembered_messages: int | None = None,
    max_output_messages: int | None = None,
    drop_request_context: bool = False,
    drop_expected_trajectory: bool = False,
    drop_ground_truth: bool = False,
) -> Callable[[ScorerRun], ScorerRun]:
    """Build a ``prepare_run`` that keeps only what the scorer should see.

    Args:
        part_types: keep only message parts whose type starts with one of these
            (``"text"``, ``"reasoning"``, ``"tool"`` for tool invocations, ``"file"``).
        tool_names: keep only tool invocations whose tool name starts with one of these.
        max_remembered_messages: keep the last N remembered (history) messages of the input.
        max_output_messages: keep the last N output messages.
        drop_request_context, drop_expected_trajectory, drop_ground_truth: blank that field.

    Input (an ``AgentInput`` or a list of messages) and output (a list of messages) are
    filtered (list items become ``Message`` objects); a message left empty by the filters is
    dropped; system messages and other shapes (plain strings, trajectories) pass unchanged.
    """
    part_filter = tuple(part_types) if part_types is not None else None
    tool_filter = tuple(tool_names) if tool_names is not None else None
    filtering = part_filter is not None or tool_filter is not None
    if isinstance(part_types, str) or isinstance(tool_names, str):
        raise TypeError("part_types and tool_names take a list of strings, e.g. ['text']")

    def _input(value: Any) -> Any:
        agent_input: AgentInput | None = None
        if isinstance(value, AgentInput):
            agent_input = value
        elif isinstance(value, Mapping) and ("input_messages" in value or "inputMessages" in value):
            agent_input = AgentInput.model_validate(value)
        if agent_input is not None:
            inputs, remembered = agent_input.input_messages, agent_input.remembered_messages
            if filtering:
                inputs = _filter_messages(inputs, part_filter, tool_filter, default_role="user")
                remembered = _filter_messages(remembered, part_filter, tool_filter,
                                              default_role="user")
            return agent_input.model_copy(update={
                "input_messages": inputs,
                "remembered_messages": _last(list(remembered), max_remembered_messages),
            })
        if filtering and isinstance(value, list | tuple):
            return _filter_messages(value, part_filter, tool_filter, default_role="user")
        return value

    def _output(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            return value
        if filtering:
            messages = _filter_messages(value, part_filter, tool_filter, default_role="assistant")
        else:
            messages = [_to_message(m, default_role="assistant") for m in value]
        return _last(messages, max_output_messages)

    def prepare(run: ScorerRun) -> ScorerRun:
        update: dict[str, Any] = {"input": _input(run.input), "output": _output(run.output)}
        if drop_request_context:
            update["request_context"] = None
        if drop_expected_trajectory:
            update["expected_trajectory"] = None
        if drop_ground_truth:
            update["ground_truth"] = None
        return run.model_copy(update=update)

    return prepare
