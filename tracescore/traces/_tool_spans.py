"""Stage 1 (tool executions): which spans are tool executions, and what their payloads hold.

Rules:

- **Tool payloads are the real arguments and result.** LangChain callback payloads
  (``{"input_str": "{'city': 'Paris'}", "inputs": {...}, "tags": ..., "kwargs":
  {"tool_call_id": ...}}``) are unwrapped to the arguments (and the call id); a span's input
  and output are its arguments and result when no convention names them (LangSmith's
  ``gen_ai.prompt``/``gen_ai.completion`` on a tool span); a result written as a tool message
  (``{"output": {...ToolMessage}}``, ``{"type": "tool", "data": {...}}``, a plain record
  ``{"content": …, "type": "tool", "tool_call_id": …}``) is its content.
- **A span named by a tool the model just asked for is that tool's execution.** A plain span (no
  convention kind: a function traced by hand, OpenLIT's ``@openlit.trace``) directly after a
  model call that asked for a tool of its name, or beneath that call, is the tool's execution.

Which model call a tool execution answers, and the tool step's identity, are stage 5's
(``_tool_steps``).
"""

from __future__ import annotations

from ._adapt_shape import plain_name
from ._steps import Step, note
from ._values import parse_json, tool_message


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
    if result is None and step._output is not None:
        result = step.output
    if isinstance(result, dict):
        if "output" in result and set(result) <= {"output", "kwargs", "tags", "metadata"}:
            result = result["output"]
        message = tool_message(result)
        if message is not None:
            result = parse_json(message["content"])
            if message.get("status") == "error":
                step.status = "error"
            if step.tool_call_id is None and message.get("tool_call_id"):
                step.tool_call_id = str(message["tool_call_id"])
    step.tool_result = result


def named_tool_spans(candidates: list[Step]) -> list[Step]:
    """Plain leaf spans named by a tool the preceding model call asked for (``get_weather``, or
    with a ``kind:`` prefix: ``Function: get_weather``) become its steps (returned)."""
    found: list[Step] = []
    claimed: set[int] = set()
    for step in candidates:
        call = _preceding_call(step)
        if call is None:
            continue
        names = (step.name, plain_name(step.name))
        for msg in call.output_messages or []:
            for asked in msg.calls:
                if asked.name in names and id(asked) not in claimed:
                    claimed.add(id(asked))
                    step.kind = "tool_call"
                    step.tool_name = asked.name
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


__all__ = ["named_tool_spans", "unwrap_payloads"]
