"""The generic adapter: the base of every step, and spans no convention recognises.

The base step carries the span's name, times, status and error (from the status, ``error.*``
attributes or an ``exception`` event). For a span of no known convention, the kind comes from
its name (``invoke_agent X``, ``execute_tool X``, ``workflow_step X``, ``workflow step: 'X'``),
from ``workflow.step.id``, or from OpenLLMetry's ``traceloop.span.kind``; its input and output
from plain ``input``/``output``-style attributes (JSON read as data, and a string written as JSON,
as Traceloop's decorators write a string result, read as the string).
"""

from __future__ import annotations

import re
from typing import Any

from ._span import Span
from ._steps import Step
from ._values import counts_only, first_present, parse_json_any, text_of

_NAME_KINDS = (
    ("invoke_agent ", "agent_run"),
    ("invoke_workflow ", "workflow_run"),
    ("execute_tool ", "tool_call"),
    ("workflow_step ", "workflow_step"),
)
_WORD = re.compile(r"[\w-]+")
_PLACEHOLDER = re.compile(r"\{([^{}\s!:]+)(!r)?(?:![sa])?(?::[^{}]*)?\}")
_QUOTED_STEP = re.compile(r"^workflow step:\s*'?(.*?)'?$")
_LABELLED = re.compile(r"^[A-Za-z][\w ]*:\s*'([^']+)'$")
"""A span named ``<label>: '<name>'`` (Mastra's ``agent run: 'weather_agent'``, ``tool:
'get_weather'``, as its exporters to other backends write them): named by the quoted name."""
_TRACELOOP_KINDS = {
    "workflow": "workflow_run",
    "agent": "agent_run",
    "tool": "tool_call",
    "task": "generic",
}


def filled_name(name: str, attrs: dict[str, Any]) -> str:
    """A span name written as a template of the span's own attributes (``{workflow_name}``,
    ``{agent_name} run``, ``Agent run: {name!r}``: a logging library names spans by their message
    template) read with their values, as the library renders them (``!r``: quoted); a
    placeholder no attribute fills stays as written."""

    def value(match: re.Match[str]) -> str:
        found = attrs.get(match.group(1))
        if isinstance(found, (str, int, float)) and not isinstance(found, bool):
            text = str(found)
            if text.strip():
                return repr(found) if match.group(2) else text
        return match.group(0)

    return _PLACEHOLDER.sub(value, name)


def template_name(name: str, attrs: dict[str, Any]) -> str | None:
    """The value a template span name was filled with at its name placeholder (``Agent run:
    {name!r}`` with ``name = "weather_agent"`` → ``weather_agent``; ``{agent_name} run``); None
    when the name has no placeholder of a key whose last word is ``name``."""
    for match in _PLACEHOLDER.finditer(name):
        key = match.group(1)
        if key.replace(".", "_").rpartition("_")[2].lower() == "name":
            found = attrs.get(key)
            if isinstance(found, str) and found.strip():
                return found
    return None


def claims(span: Span) -> bool:
    """The generic adapter takes any span."""
    return True


def base_step(span: Span) -> Step:
    """The fields every span has: ids, name, times, status, error."""
    attrs = span.attributes
    step = Step(
        span_id=span.span_id,
        kind="generic",
        name=filled_name(span.name, attrs) if "{" in span.name else span.name,
        span_name=span.name,
        start_time_ns=span.start_time_ns,
        end_time_ns=span.end_time_ns,
        attributes=attrs,
    )
    error = None
    if span.status_code == "ERROR":
        step.status = "error"
        error = span.status_message
    elif span.status_code == "OK":
        step.status = "ok"
    for event in span.events or ():
        if event.get("name") == "exception":
            ev = event.get("attributes") or {}
            error = error or ev.get("exception.message") or ev.get("exception.type")
            step.status = "error"
    if attrs.get("error") is True or "error.message" in attrs:
        step.status = "error"
        error = error or attrs.get("error.message") or attrs.get("error.type")
    if error is not None:
        step.error = text_of(error)
    elif step.status == "error":
        step.error = text_of(attrs.get("error.type")) if attrs.get("error.type") else "error"
    if "input" in attrs or "traceloop.entity.input" in attrs or "lmnr.span.input" in attrs:
        value = first_present(attrs, "input", "traceloop.entity.input", "lmnr.span.input")
        if value is not None:
            step.input = _unwrap_entity(parse_json_any(value))
    if "output" in attrs or "traceloop.entity.output" in attrs or "lmnr.span.output" in attrs:
        value = first_present(attrs, "output", "traceloop.entity.output", "lmnr.span.output")
        if value is not None and not counts_only(value):
            step.output = _unwrap_entity(parse_json_any(value))
    return step


def adapt(span: Span, step: Step) -> None:
    """Kind and name of a span no convention recognises."""
    attrs = span.attributes
    name = span.name
    for prefix, kind in _NAME_KINDS:
        if name.startswith(prefix):
            step.kind = kind
            step.name = name[len(prefix) :].strip() or name
            break
    else:
        match = _QUOTED_STEP.match(name)
        if match:
            step.kind = "workflow_step"
            step.name = match.group(1) or name
        elif name.endswith("'"):
            labelled = _LABELLED.match(name)
            if labelled:
                step.name = labelled.group(1)
    step_id = first_present(attrs, "workflow.step.id", "workflow.step.name")
    if step_id is not None:
        step.kind = "workflow_step"
        step.step_id = str(step_id)
        step.name = str(step_id)
    elif step.kind == "workflow_step":
        step.step_id = step.name
    traceloop = attrs.get("traceloop.span.kind")
    if isinstance(traceloop, str) and traceloop in _TRACELOOP_KINDS:
        step.kind = _TRACELOOP_KINDS[traceloop]
        entity = attrs.get("traceloop.entity.name")
        if entity:
            step.name = str(entity)
        if traceloop == "task":
            step.hint = "chain"
    if step.kind == "tool_call":
        step.tool_name = step.name
        step.tool_args = step.input
        step.tool_result = step.output
    if step.kind in ("agent_run", "workflow_run"):
        step.hint = step.hint or "named_run"


def strip_prefix(name: str, *prefixes: str) -> str:
    """``name`` without the first matching prefix (and surrounding quotes/space)."""
    for prefix in prefixes:
        if name.startswith(prefix):
            rest = name[len(prefix) :].strip().strip("'\"")
            return rest or name
    return name


def method_owner(name: str) -> str:
    """A run named like a method call (``FunctionAgent.run``, ``ReAct.forward``) is named by its
    object; any other name is kept."""
    head, dot, tail = name.rpartition(".")
    if dot and head and tail.strip("_").isidentifier() and _WORD.fullmatch(head):
        return head
    return name


def _unwrap_entity(value: Any) -> Any:
    """OpenLLMetry writes ``{"inputs": …}`` / ``{"outputs": …}`` envelopes; unwrap them."""
    if isinstance(value, dict):
        for key in ("inputs", "outputs"):
            if key in value and set(value) <= {key, "args", "kwargs", "tags", "metadata"}:
                return value[key]
    return value


__all__ = [
    "adapt",
    "base_step",
    "claims",
    "filled_name",
    "method_owner",
    "strip_prefix",
    "template_name",
]
