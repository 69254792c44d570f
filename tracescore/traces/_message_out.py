"""``Msg`` values out as the model's ``Message``, and a conversation folded as a store keeps it.

Tool results join the assistant calls they answer (``merge_conversation`` folds a whole
conversation; ``to_message`` one message's own parts), consecutive assistant messages are joined.
"""

from __future__ import annotations

from typing import Any

from tracescore.model import (
    FilePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolInvocation,
    ToolInvocationPart,
)

from ._steps import Call, File, Msg, Part, Reasoning, Result


def merge_conversation(msgs: list[Msg]) -> list[Msg]:
    """Fold tool results into the assistant calls they answer and join consecutive assistant
    messages, as a stored conversation reads (Mastra's message list does the same). A result
    whose id no open call has answers the oldest call still open (an exporter that wrote a
    Responses item's own id on the call and its ``call_id`` on the result); results without
    ids answer the calls without ids, in order."""
    out: list[Msg] = []
    open_calls: dict[str, tuple[Msg, Call]] = {}
    unnamed: list[tuple[Msg, Call]] = []  # calls without an id, answered in order
    for msg in msgs:
        if msg.role == "tool":
            leftover: list[Part] = []
            for part in msg.parts:
                if isinstance(part, Result) and part.id and part.id in open_calls:
                    owner, _ = open_calls.pop(part.id)
                    owner.parts.append(part)
                elif isinstance(part, Result) and part.id and open_calls:
                    call_id = next(iter(open_calls))
                    owner, call = open_calls.pop(call_id)
                    owner.parts.append(Result(call_id, part.name or call.name, part.result,
                                              part.is_error))
                elif isinstance(part, Result) and part.id is None and unnamed:
                    owner, call = unnamed.pop(0)
                    owner.parts.append(Result(None, part.name or call.name, part.result,
                                              part.is_error))
                else:
                    leftover.append(part)
            if leftover:
                out.append(Msg("tool", leftover))
            continue
        if msg.role == "assistant" and out and out[-1].role == "assistant":
            target = out[-1]
            target.parts.extend(msg.parts)
        else:
            target = Msg(msg.role, list(msg.parts), id=msg.id)
            out.append(target)
        if msg.role == "assistant":
            for part in msg.parts:
                if isinstance(part, Call) and part.id:
                    open_calls[part.id] = (target, part)
                elif isinstance(part, Call):
                    unnamed.append((target, part))
    return out


def to_message(msg: Msg, *, content: str | None = None) -> Message:
    """A pydantic ``Message`` from a ``Msg`` (tool results join the calls they answer)."""
    results = {r.id: r for r in msg.parts if isinstance(r, Result) and r.id}
    # Results without ids answer the calls without ids, in order.
    loose = [r for r in msg.parts if isinstance(r, Result) and r.id is None]
    paired = {
        id(c): loose.pop(0)
        for c in msg.parts
        if isinstance(c, Call) and c.id is None and loose
    }
    used: set[str] = set()
    parts: list[Any] = []
    invocations: list[ToolInvocation] = []
    texts: list[str] = []
    for part in msg.parts:
        if isinstance(part, str):
            texts.append(part)
            parts.append(TextPart(text=part))
        elif isinstance(part, Call):
            result = results.get(part.id) if part.id else paired.get(id(part))
            if result is not None and part.id:
                used.add(part.id)
            inv = tool_invocation(part.id, part.name, part.args, result)
            invocations.append(inv)
            parts.append(ToolInvocationPart(tool_invocation=inv))
        elif isinstance(part, Result):
            if part.id and part.id in used:
                continue
            if part.id is None and any(r is part for r in paired.values()):
                continue
            if part.id and any(isinstance(p, Call) and p.id == part.id for p in msg.parts):
                continue
            inv = ToolInvocation(
                tool_call_id=part.id,
                tool_name=part.name or "",
                result=part.result,
                state="output-error" if part.is_error else "result",
                is_error=part.is_error,
            )
            invocations.append(inv)
            parts.append(ToolInvocationPart(tool_invocation=inv))
        elif isinstance(part, Reasoning):
            parts.append(ReasoningPart(text=part.text))
        elif isinstance(part, File):
            parts.append(
                FilePart(
                    media_type=part.media_type, url=part.url, data=part.data, filename=part.filename
                )
            )
    role = msg.role if msg.role in ("system", "user", "assistant", "tool") else "user"
    return Message(
        id=msg.id,
        role=role,
        content="".join(texts) if content is None else content,
        parts=parts,
        tool_invocations=invocations,
    )


def tool_invocation(
    call_id: str | None, name: str, args: Any, result: Result | None
) -> ToolInvocation:
    """A ``ToolInvocation`` for a call and (when known) its result."""
    if result is None:
        return ToolInvocation(tool_call_id=call_id, tool_name=name, args=args, state="call")
    return ToolInvocation(
        tool_call_id=call_id,
        tool_name=name,
        args=args,
        result=result.result,
        state="output-error" if result.is_error else "result",
        is_error=result.is_error,
    )


__all__ = ["merge_conversation", "to_message", "tool_invocation"]
