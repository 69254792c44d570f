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
- **A tool span that records only its name and call id** gets its args and result from the run's
  conversation (the call the model made, the tool message it was given next).
"""

from __future__ import annotations

from typing import Any

from ._steps import TOOL_KINDS, Call, Msg, Part, Result, Step, note
from ._values import langchain_message, parse_json

FINAL_ANSWER_TOOLS = frozenset({"final_answer"})
"""Tools whose call is the run's final answer (smolagents)."""


def control_tool(step: Step) -> None:
    """Drop a final-answer tool step to control (called for tool steps as they are built)."""
    step.kind = "generic"
    step.hint = "final_answer"
    note(step, f"{step.tool_name} tool: the run's final answer, not a tool call (dropped)")


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
