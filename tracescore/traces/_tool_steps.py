"""Stage 5: tool steps matched to the tool calls the model made.

Rules, per agent run:

- **The model's own tool call is the tool step's identity**: its name, arguments and call id.
  A tool span is matched to the call it executed — by call id, else by name (the span's name or
  ``tool.name`` equal to the call's, else containing it with case and punctuation aside: DSPy's
  ``get_weather.__call__``, a plugin-prefixed name), in call order — and contributes its result,
  status and timing only. A tool span no call asked for keeps its own name and arguments.
- **A call whose execution has no span** is still a tool call of the run, with the result the
  model was given next (from the next model call's input).
- **A tool span that records only its name and call id** gets its arguments and result from the
  conversation (the call the model made, the tool message it was given next).
- **Control calls are left out** (``_control``: a final answer or a handoff).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracescore.model import ToolCallStep, ToolInvocation

from ._control import FINAL_ANSWER, final_answer, squash
from ._run_io import last_text
from ._scope import in_nested, scope
from ._steps import TOOL_KINDS, Call, Result, Step, note


@dataclass(slots=True)
class Entry:
    """One tool call of a run: what the model asked for, and the span that executed it."""

    id: str | None
    name: str
    args: Any = None
    step: Step | None = None
    result: Result | None = None
    seq: int = 0
    caller: Step | None = None
    """The model call that asked for this tool call (None when only its span is known)."""
    matched_by: str = ""
    """How the span was matched to the model's call (``call id``, ``name``, ``name within``)."""


def settle_tools(agent: Step, declared: Callable[[], str | None]) -> None:
    """Stage 5 for one agent run: recognise its final-answer call (``declared`` reads the run's
    declared output text, when needed), then give each matched tool span the identity of the
    model's call and what the conversation says of it."""
    entries, indexed = tool_entries(agent)
    calls = [step for _, step in indexed]
    done = final_answer(entries, calls, lambda: declared() or last_text(calls))
    if done is not None:
        entries.remove(done)
    for entry in entries:
        step = entry.step
        if step is None:
            continue
        if entry.caller is not None:
            renamed = "" if step.name == entry.name else f" (span named {step.name!r})"
            note(step, "executes the call {!r} that model call {} made, matched by {}{}: its "
                 "name, arguments and call id are the call's", entry.name, entry.caller.span_id,
                 entry.matched_by, renamed)
            step.name = step.tool_name = entry.name
            if entry.id:
                step.tool_call_id = entry.id
        if entry.args is not None and (
            step.tool_args is None or entry.caller is not None or (
                isinstance(step.tool_args, str) and isinstance(entry.args, (dict, list))
            )
        ):
            step.tool_args = entry.args
        if step.tool_result is None and entry.result is not None:
            step.tool_result = entry.result.result
            if entry.result.is_error:
                step.status = "error"


def tool_entries(agent: Step) -> tuple[list[Entry], list[tuple[int, Step]]]:
    """The run's tool calls in call order, and its model calls with their place in that order;
    kept on the step once the tree is final."""
    cached = agent._entries_cache
    if cached is None:
        cached = agent._entries_cache = _entries(agent)
    return cached  # type: ignore[no-any-return]


def _entries(agent: Step) -> tuple[list[Entry], list[tuple[int, Step]]]:
    entries: list[Entry] = []
    by_id: dict[str, Entry] = {}
    calls: list[tuple[int, Step]] = []
    seq = 0
    for step in scope(agent):
        seq += 1
        if step.is_model_call and not in_nested(step, agent):
            calls.append((seq, step))
            for msg in step.output_messages or []:
                for call in msg.calls:
                    if call.control is not None:
                        continue  # a final answer or a handoff (``_control``)
                    if call.id and call.id in by_id:
                        entry = by_id[call.id]
                        if entry.args is None:
                            entry.args = call.args
                        continue
                    seq += 1
                    entry = Entry(call.id, call.name, call.args, seq=seq, caller=step)
                    entries.append(entry)
                    if call.id:
                        by_id[call.id] = entry
        elif step.hint == FINAL_ANSWER and step.kind == "generic":
            # the span stage 3 dropped as the run's final answer: its call is control too
            done = _match(step, entries, by_id)
            if done is not None and done.caller is not None:
                for msg in done.caller.output_messages or []:
                    for call in msg.calls:
                        if call.id == done.id and call.name == done.name:
                            call.control = FINAL_ANSWER
                entries.remove(done)
                if done.id:
                    by_id.pop(done.id, None)
        elif step.kind in TOOL_KINDS:
            found = _match(step, entries, by_id)
            if found is not None and not found.matched_by:
                found.matched_by = _how(step, found)
            if found is None:
                found = Entry(step.tool_call_id, step.tool_name or step.name, step.tool_args,
                              seq=seq)
                entries.append(found)
                if step.tool_call_id:
                    by_id[step.tool_call_id] = found
            found.step = step
            if found.args is None or (
                found.caller is None and step.tool_args is not None
            ):
                found.args = step.tool_args if step.tool_args is not None else found.args
            if found.id is None and step.tool_call_id:
                found.id = step.tool_call_id
    pending = {e.id: e for e in entries if e.id and (e.step is None or e.step.tool_result is None)}
    if pending:
        for _, step in calls:
            for msg in step.input_messages or []:
                for part in msg.parts:
                    if isinstance(part, Result) and part.id in pending:
                        pending.pop(part.id).result = part
    return entries, calls


def _match(step: Step, entries: list[Entry], by_id: dict[str, Entry]) -> Entry | None:
    """The model's call a tool span executed: by call id, else by name, in call order (a span's
    id that none of the model's calls carries is no call id of the model's: a framework's own
    run id, as OpenLIT writes for LangChain's tools)."""
    if step.tool_call_id:
        found = by_id.get(step.tool_call_id)
        if found is not None:
            return found
    open_entries = [e for e in entries if e.step is None]
    names = {n for n in (step.tool_name, step.name) if n}
    for entry in open_entries:
        if entry.name in names:
            return entry
    squashed = [squash(n) for n in names]
    for entry in open_entries:
        wanted = squash(entry.name)
        if wanted and any(wanted in n or (n and n in wanted) for n in squashed):
            return entry
    return None


def _how(step: Step, entry: Entry) -> str:
    if step.tool_call_id and step.tool_call_id == entry.id:
        return "call id"
    if entry.name in (step.tool_name, step.name):
        return "name"
    return "a name containing the call's"


def untraced_tools(agent: Step) -> dict[str, list[ToolCallStep]]:
    """Trajectory steps for tool calls the run's model calls asked for whose execution has no
    span (a plain LLM-call trace runs its tools untraced), by the asking call's span id; the
    result is the one the model was given next."""
    out: dict[str, list[ToolCallStep]] = {}
    for entry in tool_entries(agent)[0]:
        if entry.step is not None or entry.caller is None:
            continue
        result = entry.result
        out.setdefault(entry.caller.span_id, []).append(
            ToolCallStep(
                name=entry.name,
                metadata={"derived_from_span_id": entry.caller.span_id},
                tool_args=entry.args,
                tool_result=result.result if result is not None else None,
                success=(not result.is_error) if result is not None else None,
                tool_call_id=entry.id,
            )
        )
    return out


def invocation(entry: Entry) -> ToolInvocation:
    """The ``ToolInvocation`` of one tool call (state from its span, else from the result the
    model was given)."""
    step = entry.step
    if (
        step is not None
        and step.tool_result is None
        and entry.result is not None
        and not step.failed
    ):
        step = None
    if step is not None:
        if step.failed:
            result = step.tool_result if step.tool_result is not None else step.error
            return ToolInvocation(
                tool_call_id=entry.id,
                tool_name=entry.name,
                args=entry.args,
                result=result,
                state="output-error",
                is_error=True,
            )
        if step.tool_result is not None or step.ended:
            return ToolInvocation(
                tool_call_id=entry.id,
                tool_name=entry.name,
                args=entry.args,
                result=step.tool_result,
                state="result",
            )
        return ToolInvocation(tool_call_id=entry.id, tool_name=entry.name, args=entry.args)
    if entry.result is not None:
        return ToolInvocation(
            tool_call_id=entry.id,
            tool_name=entry.name,
            args=entry.args,
            result=entry.result.result,
            state="output-error" if entry.result.is_error else "result",
            is_error=entry.result.is_error,
        )
    return ToolInvocation(tool_call_id=entry.id, tool_name=entry.name, args=entry.args)


def final_answer_call(agent: Step) -> Call | None:
    """The call that gave the run's final answer, when stage 5 found one."""
    for _, step in reversed(tool_entries(agent)[1]):
        for msg in step.output_messages or []:
            for call in msg.calls:
                if call.control == FINAL_ANSWER:
                    return call
        break
    return None


__all__ = [
    "Entry",
    "final_answer_call",
    "invocation",
    "settle_tools",
    "tool_entries",
    "untraced_tools",
]
