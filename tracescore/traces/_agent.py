"""An agent run's scorer output, from its step and everything beneath it (the input, derived
from its model calls, is ``_conversation``'s).

Output: one assistant message whose text is the run's answer and whose tool invocations are every
tool call beneath the run at any depth, in call order: tool spans (args, result, ``output-error``
for a failed tool) joined by call id (or name) to the calls the model asked for, so a call whose
execution was not traced still appears, with its result taken from the next model input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracescore.model import Message, TextPart, ToolCallStep, ToolInvocation, ToolInvocationPart

from ._conversation import agent_input, in_nested, scope
from ._plumbing import FINAL_ANSWER_TOOLS, HANDOFF_PREFIXES, answer_of
from ._steps import RUN_KINDS, TOOL_KINDS, Result, Step


@dataclass(slots=True)
class _Entry:
    id: str | None
    name: str
    args: Any = None
    step: Step | None = None
    result: Result | None = None
    seq: int = 0
    caller: Step | None = None
    """The model call that asked for this tool call (None when only its span is known)."""


def tool_invocations(agent: Step) -> list[ToolInvocation]:
    """Every tool call beneath the run, in call order, with args and result."""
    return [_invocation(entry) for entry in tool_entries(agent)[0]]


def tool_entries(agent: Step) -> tuple[list[_Entry], list[tuple[int, Step]]]:
    """``_entries`` of a finished tree, kept on the step (output and trajectory share them)."""
    cached = agent._entries_cache
    if cached is None:
        cached = agent._entries_cache = _entries(agent)
    return cached  # type: ignore[no-any-return]


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


def _entries(agent: Step) -> tuple[list[_Entry], list[tuple[int, Step]]]:
    """Tool-call entries in call order, and this run's model calls with their place in order."""
    entries: list[_Entry] = []
    by_id: dict[str, _Entry] = {}
    calls: list[tuple[int, Step]] = []
    seq = 0
    entry: _Entry | None
    for step in scope(agent):
        seq += 1
        if step.is_model_call and not in_nested(step, agent):
            calls.append((seq, step))
            for msg in step.output_messages or []:
                for call in msg.calls:
                    name = call.name
                    if name in FINAL_ANSWER_TOOLS or name.startswith(HANDOFF_PREFIXES):
                        continue  # control, not a tool call (``_plumbing``)
                    if call.id and call.id in by_id:
                        entry = by_id[call.id]
                        if entry.args is None:
                            entry.args = call.args
                        continue
                    seq += 1
                    entry = _Entry(call.id, call.name, call.args, seq=seq, caller=step)
                    entries.append(entry)
                    if call.id:
                        by_id[call.id] = entry
        elif step.kind in TOOL_KINDS:
            entry = by_id.get(step.tool_call_id) if step.tool_call_id else None
            if entry is None:
                name = step.tool_name or step.name
                for candidate in entries:
                    if (
                        candidate.step is None
                        and candidate.name == name
                        and (candidate.id is None or step.tool_call_id is None)
                    ):
                        entry = candidate
                        break
            if entry is None:
                entry = _Entry(
                    step.tool_call_id, step.tool_name or step.name, step.tool_args, seq=seq
                )
                entries.append(entry)
                if step.tool_call_id:
                    by_id[step.tool_call_id] = entry
            entry.step = step
            if step.tool_args is not None and not (
                isinstance(step.tool_args, str) and isinstance(entry.args, (dict, list))
            ):
                entry.args = step.tool_args
            if entry.id is None and step.tool_call_id:
                entry.id = step.tool_call_id
    pending = {e.id: e for e in entries if e.id and (e.step is None or e.step.tool_result is None)}
    if pending:
        for _, step in calls:
            for msg in step.input_messages or []:
                for part in msg.parts:
                    if isinstance(part, Result) and part.id in pending:
                        pending.pop(part.id).result = part
    return entries, calls


def link_tool_steps(agent: Step) -> None:
    """Give tool steps that lack them the args the model asked with and the result it was given
    (a tool span that records only its name and call id)."""
    entries, _ = _entries(agent)
    for entry in entries:
        step = entry.step
        if step is None:
            continue
        if entry.args is not None and (
            step.tool_args is None
            or (isinstance(step.tool_args, str) and isinstance(entry.args, (dict, list)))
        ):
            step.tool_args = entry.args  # LangChain records a one-argument tool's input as text
        if step.tool_result is None and entry.result is not None:
            step.tool_result = entry.result.result
            if entry.result.is_error:
                step.status = "error"


def _invocation(entry: _Entry) -> ToolInvocation:
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


def final_text(agent: Step, calls: list[Step] | None = None) -> str:
    """The run's answer: its own output text, else the last model call's text."""
    for msg in reversed(agent.output_messages or []):
        if msg.role == "assistant" and msg.text:
            return msg.text
    if calls is None:
        calls = [s for s in scope(agent) if s.is_model_call and not in_nested(s, agent)]
    for step in reversed(calls):
        for msg in reversed(step.output_messages or []):
            if msg.role == "assistant" and msg.text:
                return msg.text
            for call in msg.calls:
                if call.name in FINAL_ANSWER_TOOLS:
                    return answer_of(call)
    for child in reversed(nested_runs(agent)):
        if child.hint == "handoff":
            return final_text(child)  # the run ended by handing off: the answer is theirs
    return ""


def agent_output(agent: Step) -> list[Message]:
    """The run's output: one assistant message with its text and every tool invocation in order.

    Text a model wrote alongside a tool call (not the final answer) stays as a text part before
    the invocations it preceded; ``content`` is the final answer.
    """
    entries, calls = tool_entries(agent)
    answer = final_text(agent, [step for _, step in calls])
    items: list[tuple[int, Any]] = []
    for position, (seq, step) in enumerate(calls):
        if position == len(calls) - 1:
            continue
        text = "".join(m.text for m in step.output_messages or [] if m.role == "assistant")
        if text and text != answer:
            items.append((seq, TextPart(text=text)))
    invocations = []
    for entry in entries:
        inv = _invocation(entry)
        invocations.append(inv)
        items.append((entry.seq, ToolInvocationPart(tool_invocation=inv)))
    items.sort(key=lambda item: item[0])
    parts: list[Any] = [part for _, part in items]
    if answer:
        parts.append(TextPart(text=answer))
    if not parts:
        return [Message(role="assistant", content="")] if agent.ended or calls else []
    return [Message(role="assistant", content=answer, parts=parts, tool_invocations=invocations)]


def nested_runs(agent: Step) -> list[Step]:
    """Agent and workflow runs directly nested in this run."""
    return [s for s in agent.descendants(stop_at=RUN_KINDS) if s.kind in RUN_KINDS]


__all__ = [
    "agent_input",
    "agent_output",
    "final_text",
    "link_tool_steps",
    "nested_runs",
    "tool_entries",
    "tool_invocations",
    "untraced_tools",
]
