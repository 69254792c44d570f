"""Stage 1 (tool executions): which spans are tool executions, and what their payloads hold.

Rules:

- **Tool payloads are the real arguments and result.** LangChain callback payloads
  (``{"input_str": "{'city': 'Paris'}", "inputs": {...}, "tags": ..., "kwargs":
  {"tool_call_id": ...}}``) are unwrapped to the arguments (and the call id); a span's input
  and output are its arguments and result when no convention names them (LangSmith's
  ``gen_ai.prompt``/``gen_ai.completion`` on a tool span); a result written as a tool message
  (``{"output": {...ToolMessage}}``, ``{"type": "tool", "data": {...}}``, a plain record
  ``{"content": …, "type": "tool", "tool_call_id": …}``) is its content; a Python call record
  (``{"args": [], "kwargs": {…}}`` beside the call's flags) is its keyword arguments; a result
  record that only names its call (the call's id, the tool's name) around one value is that
  value (ADK's ``FunctionResponse`` ``{"id", "name", "response"}``), and one that names its tool
  and holds its return value under an ``…_output`` key is that value (LlamaIndex's
  ``ToolOutput``); a result printed as a repr of a record is read as that record, and a record
  holding a status word and one value, its other fields empty, is that value (Agno's execution
  result); a result that is text holding a JSON object or array (JSON text written as a JSON
  string) is that JSON.
- **A span named by a tool the model just asked for is that tool's execution.** A plain span (no
  convention kind: a function traced by hand, OpenLIT's ``@openlit.trace``) directly after a
  model call that asked for a tool of its name, or beneath that call, is the tool's execution.

Which model call a tool execution answers, and the tool step's identity, are stage 5's
(``_tool_steps``).
"""

from __future__ import annotations

from typing import Any

from ._adapt_shape import plain_name
from ._repr_data import repr_data
from ._run_text import is_repr
from ._steps import Step, note
from ._values import parse_json, tool_message


def unwrap_payloads(step: Step) -> None:
    """A tool step's LangChain callback payloads read as its arguments, call id and result; a
    result record that only names its call around the value is that value."""
    args = step.tool_args
    if args is None and step._input is not None:
        args = step.input
    if isinstance(args, dict) and "kwargs" in args and _call_record(args):
        args = args["kwargs"]
        note(step, "a Python call record: the arguments are its keyword arguments")
    elif isinstance(args, dict) and "args" in args and (only := _one_positional(args)) is not None:
        args = only
        note(step, "a call record with one positional argument, a record: the arguments are it")
    elif isinstance(args, dict) and "input_str" in args:
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
    if isinstance(result, str) and is_repr(result):
        data = repr_data(result)
        if isinstance(data, dict):
            note(step, "its result is a record printed as a Python repr: read as data")
            result = data
    if isinstance(result, dict):
        if "output" in result and set(result) <= {"output", "kwargs", "tags", "metadata"}:
            result = result["output"]
        values = result.values()
        if len(result) > 1 and (
            (step.tool_call_id and step.tool_call_id in values)
            or step.tool_name in values or step.name in values
        ):  # a record that names its own call or tool: maybe an envelope
            while isinstance(result, dict):  # an envelope in an envelope (LlamaIndex's)
                inner = _raw_output(step, result)
                if inner is result:
                    result = _enveloped(step, result)
                    break
                result = inner
        if isinstance(result, dict):
            result = _status_record(step, result)
        message = tool_message(result) if isinstance(result, dict) else None
        if message is not None:
            result = parse_json(message["content"])
            if message.get("status") == "error":
                step.status = "error"
            if step.tool_call_id is None and message.get("tool_call_id"):
                step.tool_call_id = str(message["tool_call_id"])
            _named_by_message(step, message.get("name"))
    if isinstance(result, str):
        # JSON text: a value unwrapped from its record, or one written as a JSON string
        # (Laminar's Deep Agents tool spans) that the adapter read once: the JSON it holds
        result = parse_json(result)
    step.tool_result = result


def _call_record(args: dict[str, Any]) -> bool:
    """A Python call recorded as ``{"args": [], "kwargs": {…}}`` beside flags of the call
    (``sanitize_inputs_outputs``: a tracer's record of ``__call__(*args, **kwargs)``)."""
    kwargs = args.get("kwargs")
    if not isinstance(kwargs, dict) or args.get("args") not in (None, [], ()):
        return False
    return all(isinstance(v, bool) for k, v in args.items() if k not in ("args", "kwargs"))


def _one_positional(args: dict[str, Any]) -> dict[str, Any] | None:
    """The record a call recorded with one positional argument and nothing else holds
    (``{"args": ["{\"city\": \"Paris\"}"]}``: OpenLLMetry JS's record of a LangChain tool's
    ``invoke(input)``), parsed when it is JSON text; None for any other record."""
    positional = args.get("args")
    if not isinstance(positional, list) or len(positional) != 1:
        return None
    if any(v not in (None, {}, []) for k, v in args.items() if k != "args"):
        return None
    only = parse_json(positional[0])
    return only if isinstance(only, dict) else None


def _named_by_message(step: Step, name: Any) -> None:
    """The tool a span ran is the one its result message names (the name the model reads its
    result under), when the span itself names another (a class: ``DynamicStructuredTool``)."""
    if not isinstance(name, str) or not name or name == step.tool_name:
        return
    note(step, "its result is a tool message naming the tool {!r}: the tool's name (the span "
         "named {!r})", name, step.tool_name or step.name)
    if step.name in (step.tool_name, step.span_name):
        step.name = name
    step.tool_name = name


def _raw_output(step: Step, result: dict[str, Any]) -> Any:
    """A result record that names its tool and holds the tool's own return value under one key
    whose last word is ``output`` (LlamaIndex's ``ToolOutput``: ``{"blocks", "tool_name",
    "raw_input", "raw_output", "is_error"}``) is that value; a true ``…error`` flag beside it
    marks the call failed."""
    if step.tool_name not in result.values() and step.name not in result.values():
        return result
    outputs = [key for key in result if key.rsplit("_", 1)[-1] == "output"]
    if len(outputs) != 1:
        return result
    if any(result[key] is True for key in result if key.rsplit("_", 1)[-1] == "error"):
        step.status = "error"
    note(step, f"its result record names the tool: the result is its {outputs[0]!r}")
    return result[outputs[0]]


_FAILED = frozenset({"error", "failed", "failure"})


def _status_record(step: Step, result: dict[str, Any]) -> Any:
    """A result record holding a status word and one value, its other fields (two or more)
    empty, is that value (Agno's execution result ``status='success' result={…} error=None
    images=None …``); a failed status marks the call failed, and an error text as the one value
    is the failure's."""
    status = result.get("status")
    if not isinstance(status, str):
        return result
    filled = [k for k, v in result.items() if k != "status" and v not in (None, "", [], {})]
    if len(filled) != 1 or len(result) - 2 < 2:
        return result
    key = filled[0]
    if status.lower() in _FAILED or key == "error":
        step.status = "error"
    note(step, f"its result record holds a status and one value: the result is its {key!r}")
    return result[key]


def _enveloped(step: Step, result: dict[str, Any]) -> Any:
    """A result record that names its call (its values are the call's id and the tool's name,
    nothing more) around one other value is an envelope: the result is that value (ADK's
    ``FunctionResponse`` ``{"id", "name", "response"}``)."""
    if not step.tool_call_id or step.tool_call_id not in result.values():
        return result
    naming = (step.tool_call_id, step.name)
    own = [key for key, value in result.items() if value not in naming]
    if len(own) == 1 and len(result) > 1:
        note(step, f"its result record names the call around one value: the result is {own[0]!r}")
        return result[own[0]]
    return result


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
