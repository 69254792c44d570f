"""Tool steps completed from the conversation, and tools that are control, not work.

Rules:

- **A final-answer tool is the answer, not a tool call.** smolagents ends a run by calling its
  ``final_answer`` tool (a TOOL span, ``tool.name=final_answer``): that span is control
  (dropped from the trajectory), the call is left out of the run's tool invocations, its
  ``answer`` argument is the run's final text when nothing else gives one, and in a later turn's
  history the call reads as the assistant's answer (its echoed result dropped).
- **Tool payloads are the real arguments and result.** LangChain callback payloads
  (``{"input_str": "{'city': 'Paris'}", "inputs": {...}, "tags": ..., "kwargs":
  {"tool_call_id": ...}}``) are unwrapped to the arguments (and the call id); a result written
  as a LangChain ``ToolMessage`` (``{"output": {...ToolMessage}}``, ``{"type": "tool", "data":
  {...}}``) is its content.
- **Handoffs are control, and the handed-to agent runs inside the agent that handed off.** A
  ``transfer_to_<agent>`` tool (OpenAI Agents SDK) or a ``handoff to <agent>`` tool span is
  not a tool call of the run; the agent run it names, which the SDK traces as a later sibling,
  becomes a child of the agent that handed off (its trajectory shows the handed-to run as a
  child, and its answer is the handed-to agent's answer).
- **A span named by a tool the model just asked for is that tool's step.** A plain span (no
  convention kind: a function traced by hand, OpenLIT's ``@openlit.trace``) directly after a
  model call that asked for a tool of its name, or beneath that call, is the tool's execution.
- **A tool span that records only its name and call id** gets its args and result from the run's
  conversation (the call the model made, the tool message it was given next).
"""

from __future__ import annotations

from typing import Any

from ._steps import TOOL_KINDS, Call, Msg, Part, Result, Step, note
from ._values import langchain_message, parse_json

FINAL_ANSWER_TOOLS = frozenset({"final_answer"})
"""Tools whose call is the run's final answer (smolagents)."""
HANDOFF_PREFIXES = ("transfer_to_", "handoff to ")
"""Tool names that hand the conversation to another agent (OpenAI Agents SDK)."""


def is_control(name: str | None) -> bool:
    """A tool name that is control (a final answer or a handoff), not a tool call of the run."""
    return name is not None and (name in FINAL_ANSWER_TOOLS or name.startswith(HANDOFF_PREFIXES))


def handoffs(tools: list[Step]) -> None:
    """Move each handed-to agent run under the agent that handed off to it (``tools``: the
    handoff tool steps, already dropped to control)."""
    for tool in tools:
        name = tool.tool_name or tool.name
        target = next(name[len(p) :] for p in HANDOFF_PREFIXES if name.startswith(p)).strip()
        owner = tool.parent
        while owner is not None and owner.kind != "agent_run":
            owner = owner.parent
        if owner is None or not target:
            continue
        node: Step | None = owner
        while node is not None and node.parent is not None:
            siblings = node.parent.children
            for sibling in siblings[siblings.index(node) + 1 :]:
                if sibling.kind == "agent_run" and target in (sibling.name, sibling.agent_id):
                    siblings.remove(sibling)
                    sibling.parent = owner
                    owner.children.append(sibling)
                    sibling.hint = "handoff"
                    note(sibling, f"handed off to by {owner.name!r} ({owner.span_id}): its child")
                    break
            else:
                node = node.parent
                continue
            break


def control_tool(step: Step) -> None:
    """Drop a final-answer or handoff tool step to control (for tool steps as they are built)."""
    step.kind = "generic"
    if step.tool_name in FINAL_ANSWER_TOOLS:
        step.hint = "final_answer"
        note(step, f"{step.tool_name} tool: the run's final answer, not a tool call (dropped)")
    else:
        step.hint = "handoff"
        note(step, f"{step.tool_name!r}: a handoff to another agent, not a tool call (dropped)")


def unwrap_payloads(step: Step) -> None:
    """A tool step's LangChain callback payloads read as its arguments, call id and result."""
    args = step.tool_args
    if args is None and step._input is not None:
        args = step.input
    if isinstance(args, dict) and "input_str" in args:
        inner = args.get("inputs")
        kwargs = args.get("kwargs")
        if step.tool_call_id is None and isinstance(kwargs, dict) and kwargs.get("tool_call_id"):
            step.tool_call_id = str(kwargs["tool_call_id"])
        args = inner if isinstance(inner, dict) and inner else parse_json(args["input_str"])
        note(step, "LangChain callback payload: the arguments are its inputs")
    step.tool_args = args
    result = step.tool_result
    if isinstance(result, dict):
        if "output" in result and set(result) <= {"output", "kwargs", "tags", "metadata"}:
            result = result["output"]
        message = langchain_message(result)
        if message is not None and message.get("role") == "tool" and "content" in message:
            result = parse_json(message["content"])
            if message.get("status") == "error":
                step.status = "error"
            if step.tool_call_id is None and message.get("tool_call_id"):
                step.tool_call_id = str(message["tool_call_id"])
        step.tool_result = result


def named_tool_spans(candidates: list[Step]) -> list[Step]:
    """Plain leaf spans named by a tool the preceding model call asked for become its steps
    (returned)."""
    found: list[Step] = []
    claimed: set[int] = set()
    for step in candidates:
        call = _preceding_call(step)
        if call is None:
            continue
        for msg in call.output_messages or []:
            for asked in msg.calls:
                if asked.name == step.name and id(asked) not in claimed:
                    claimed.add(id(asked))
                    step.kind = "tool_call"
                    step.tool_name = step.name
                    step.tool_call_id = step.tool_call_id or asked.id
                    if step.tool_args is None and step._input is not None:
                        step.tool_args = step.input
                    if step.tool_result is None and step._output is not None:
                        step.tool_result = step.output
                    found.append(step)
                    note(
                        step,
                        f"plain span named by the tool model call {call.span_id} asked "
                        "for: that tool's execution",
                    )
                    break
            if step.kind == "tool_call":
                break
    return found


def _preceding_call(step: Step) -> Step | None:
    """The model call right before ``step`` among its siblings (or its parent, when that is a
    model call)."""
    parent = step.parent
    if parent is None:
        return None
    if parent.is_model_call:
        return parent
    siblings = parent.children
    for sibling in reversed(siblings[: siblings.index(step)]):
        last: Step | None = None
        for below in sibling.walk():
            if below.is_model_call:
                last = below
        if last is not None:
            return last
    return None


def answer_of(call: Call) -> str:
    """The answer text a final-answer call carries."""
    args: Any = call.args
    if isinstance(args, dict):
        value = args.get("answer", next(iter(args.values()), "") if len(args) == 1 else "")
        return value if isinstance(value, str) else ("" if value is None else str(value))
    return args if isinstance(args, str) else ""


def answers_as_text(msgs: list[Msg]) -> list[Msg]:
    """A conversation with final-answer calls read as assistant text (their results dropped)."""
    answered: set[str | None] = set()
    out: list[Msg] = []
    changed = False
    for msg in msgs:
        parts: list[Part] = []
        for part in msg.parts:
            if isinstance(part, Call) and part.name in FINAL_ANSWER_TOOLS:
                answered.add(part.id)
                parts.append(answer_of(part))
                changed = True
            elif (
                isinstance(part, Result)
                and answered
                and (part.id in answered or part.name in FINAL_ANSWER_TOOLS)
            ):
                changed = True
            else:
                parts.append(part)
        if parts:
            out.append(
                Msg(msg.role, parts, id=msg.id) if len(parts) != len(msg.parts) or changed else msg
            )
        elif not msg.parts:
            out.append(msg)
    return out if changed else msgs


def complete_tools(root: Step) -> None:
    """Fill tool steps without args or result from the conversation of the run they belong to."""
    scopes: dict[int, Step] = {}
    for step in root.walk():
        if step.kind in TOOL_KINDS and (
            step.tool_args is None or step.tool_result is None or type(step.tool_args) is str
        ):
            owner = step.parent
            while owner is not None and owner.kind != "agent_run":
                owner = owner.parent
            owner = owner or root
            scopes[id(owner)] = owner
    if scopes:
        from ._agent import link_tool_steps

        for owner in scopes.values():
            link_tool_steps(owner)


__all__ = ["complete_tools"]
