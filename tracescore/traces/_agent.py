"""An agent run's scorer output, from its step and everything beneath it (the input, derived
from its model calls, is ``_conversation``'s).

Output: one assistant message whose text is the run's answer and whose tool invocations are every
tool call beneath the run at any depth, in call order (``_tool_steps``). The answer is the run's
**declared output** when it has one — plain text, a message list's last assistant text, or a
record with one text field (with several, the one its last model call wrote last) — else the
last model call's text, else the text its final-answer call carries, else, for a run that
handed off, the handed-to run's answer. A repr is never the answer's text.
"""

from __future__ import annotations

from typing import Any

from tracescore.model import Message, TextPart, ToolInvocationPart

from ._control import HANDOFF, answer_of
from ._conversation import agent_input
from ._run_io import declared_answer, last_text
from ._scope import in_nested, scope
from ._steps import RUN_KINDS, Step
from ._tool_steps import final_answer_call, invocation, tool_entries


def declared_text(agent: Step, calls: list[Step] | None = None) -> str | None:
    """The answer the run's own span declares (``_run_io.declared_answer``), or None; read once
    per run of a final tree."""
    cached = agent._declared_cache
    if cached is None:
        if calls is None:
            calls = [s for s in scope(agent) if s.is_model_call and not in_nested(s, agent)]
        cached = agent._declared_cache = (declared_answer(agent, calls),)
    found: str | None = cached[0]
    return found


def final_text(agent: Step, calls: list[Step] | None = None) -> str:
    """The run's answer (see the module docstring)."""
    if calls is None:
        calls = [s for s in scope(agent) if s.is_model_call and not in_nested(s, agent)]
    declared = declared_text(agent, calls)
    if declared:
        return declared
    text = last_text(calls)
    if text:
        return text
    call = final_answer_call(agent)
    if call is not None:
        return answer_of(call)
    for child in reversed(nested_runs(agent)):
        if child.hint == HANDOFF:
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
        inv = invocation(entry)
        invocations.append(inv)
        items.append((entry.seq, ToolInvocationPart(tool_invocation=inv)))
    items.sort(key=lambda item: item[0])
    parts: list[Any] = [part for _, part in items]
    if answer:
        parts.append(TextPart(text=answer))
    if not parts:
        return [Message(role="assistant", content="")] if agent.ended or calls else []
    return [Message(role="assistant", content=answer, parts=parts, tool_invocations=invocations)]


def tool_invocations(agent: Step) -> list[Any]:
    """Every tool call beneath the run, in call order, with args and result."""
    return [invocation(entry) for entry in tool_entries(agent)[0]]


def nested_runs(agent: Step) -> list[Step]:
    """Agent and workflow runs directly nested in this run."""
    return [s for s in agent.descendants(stop_at=RUN_KINDS) if s.kind in RUN_KINDS]


__all__ = [
    "agent_input",
    "agent_output",
    "declared_text",
    "final_text",
    "nested_runs",
    "tool_invocations",
]
