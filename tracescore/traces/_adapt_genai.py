"""OpenTelemetry GenAI semantic conventions (``gen_ai.*``), current and older forms.

Current: ``gen_ai.operation.name`` (``invoke_agent``, ``invoke_workflow``, ``execute_tool``,
``chat``, ``text_completion``, ``generate_content``, ``embeddings``, …), ``gen_ai.input.messages`` /
``gen_ai.output.messages`` / ``gen_ai.system_instructions`` (JSON parts), ``gen_ai.tool.*``,
``gen_ai.usage.*``, ``gen_ai.agent.*``, ``gen_ai.conversation.id``.

Older: ``gen_ai.prompt``/``gen_ai.completion`` (JSON or flattened ``gen_ai.prompt.N.role``),
``gen_ai.usage.prompt_tokens``/``completion_tokens``, and the event form: span events or OTLP
log records named ``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``,
``gen_ai.content.prompt``/``gen_ai.content.completion`` and
``gen_ai.client.inference.operation.details``, joined to their span by span id, or, on a model
call with no messages of its own, written as a JSON list of records (``{"event.name":
"gen_ai.user.message", "role": …, "content": …}``) in an attribute whose last segment is
``events`` (Logfire's OpenAI integrations). A request ends with what the model answers to:
with no ``gen_ai.choice``, the assistant messages after the last user or tool message are the
call's answer.
"""

from __future__ import annotations

from typing import Any

from ._adapt_generic import strip_prefix
from ._messages import flattened_messages, parse_message, parse_messages
from ._model_calls import fuller
from ._span import Span
from ._steps import Lazy, Msg, Step
from ._values import (
    as_dict,
    as_list,
    first_present,
    has_key_prefix,
    keys_named,
    parse_json,
    pick_usage,
    text_of,
    to_ns,
)

_OPERATIONS = {
    "invoke_agent": "agent_run",
    "agent": "agent_run",
    "invoke_workflow": "workflow_run",
    "workflow": "workflow_run",
    "execute_tool": "tool_call",
    "chat": "model_generation",
    "text_completion": "model_generation",
    "completion": "model_generation",
    "generate_content": "model_generation",
    "responses": "model_generation",
    "tool_selection": "model_generation",
    "embeddings": "embedding",
    "embedding": "embedding",
    "retrieval": "retrieval",
    "retrieve": "retrieval",
    "create_agent": "generic",
    "invoke_node": "workflow_step",  # Google ADK's workflow nodes
}
USAGE_KEYS = (
    ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")),
    ("output_tokens", ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")),
    ("total_tokens", ("gen_ai.usage.total_tokens", "llm.usage.total_tokens")),
    ("reasoning_tokens", ("gen_ai.usage.reasoning_tokens", "gen_ai.usage.reasoning.output_tokens")),
    (
        "cached_input_tokens",
        (
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_read_input_tokens",
            "gen_ai.usage.cached_input_tokens",
        ),
    ),
)
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def claims(span: Span) -> bool:
    """A span with any ``gen_ai.*`` attribute, or GenAI events/log records joined to it."""
    attrs = span.attributes
    if "gen_ai.operation.name" in attrs or "gen_ai.system" in attrs:
        return True
    if has_key_prefix(attrs, "gen_ai."):
        return True
    for event in span.events:
        if str(event.get("name", "")).startswith("gen_ai."):
            return True
    return any(_log_name(log).startswith("gen_ai.") for log in span.logs)


_USAGE_GUARD = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens",
    "gen_ai.usage.total_tokens",
)


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from GenAI attributes and events (messages are parsed on first use)."""
    attrs = span.attributes
    details = _event_details(span) if (span.events or span.logs) else None
    if details is not None and details.extra:
        attrs = {**details.extra, **attrs}
    get = attrs.get
    op = get("gen_ai.operation.name")
    kind = _OPERATIONS.get(op) if isinstance(op, str) else None
    if (
        kind is None
        and op is None
        and (
            "gen_ai.request.model" in attrs
            or "gen_ai.prompt" in attrs
            or "gen_ai.prompt.0.role" in attrs
            or (
                details is not None
                and (details.inputs or details.outputs)
                and any(key in attrs for key in _USAGE_GUARD)
            )
        )
    ):
        # message events alone do not make a model call: a span that counts no tokens and names
        # no model but logs the conversation (Strands JS's loop cycles) is a step around calls
        kind = "model_generation"
    if kind is None and op is None:
        if "gen_ai.tool.name" in attrs:
            kind = "tool_call"
        elif "gen_ai.agent.name" in attrs and "gen_ai.request.model" not in attrs:
            kind = "agent_run"
    if kind is not None:
        step.kind = kind
        if kind == "model_generation":
            step.hint = "llm_call"

    model = get("gen_ai.request.model") or get("gen_ai.response.model")
    if model:
        step.model = str(model)
    response_model = get("gen_ai.response.model")
    if response_model:
        step.response_model = str(response_model)
    provider = get("gen_ai.provider.name") or get("gen_ai.system")
    if provider:
        step.provider = str(provider)
    for key in _USAGE_GUARD:
        if key in attrs:
            step.usage = pick_usage(attrs, USAGE_KEYS)
            break
    finish = get("gen_ai.response.finish_reasons")
    if finish is not None:
        step.finish_reason = finish_reason_of(finish)

    raw_in = _raw(attrs, "gen_ai.input.messages", "gen_ai.prompt")
    raw_out = _raw(attrs, "gen_ai.output.messages", "gen_ai.completion")
    if raw_in is None and "gcp.vertex.agent.llm_request" in attrs:
        request = as_dict(attrs["gcp.vertex.agent.llm_request"])
        step.input = request or attrs["gcp.vertex.agent.llm_request"]
        step.input_messages = parse_messages(request.get("contents") or [], default_role="user")
        config = as_dict(request.get("config"))
        instruction = config.get("system_instruction") or config.get("systemInstruction")
        if instruction:
            step.system = system_texts(
                instruction if isinstance(instruction, str) else [instruction]
            )
    if raw_out is None and "gcp.vertex.agent.llm_response" in attrs:
        response = as_dict(attrs["gcp.vertex.agent.llm_response"])
        step.output = response or attrs["gcp.vertex.agent.llm_response"]
        content = response.get("content")
        msg = parse_message({**content, "role": "assistant"}) if isinstance(content, dict) else None
        step.output_messages = [msg] if msg is not None else []
        if response.get("finish_reason") and not step.finish_reason:
            step.finish_reason = str(response["finish_reason"])
    if details is None and raw_in is None and raw_out is None and step.kind == "model_generation":
        listed = keys_named(attrs, "events")  # a model call without messages: events listed?
        if listed:
            details = _event_details(span, listed)
    if raw_in is not None:
        step.input = Lazy(parse_json, raw_in)
        if details is not None and details.inputs:  # two copies (a joined log record's): fuller
            step.input_messages = Lazy(fuller, details.inputs,
                                       Lazy(parse_messages, raw_in, default_role="user"))
        else:
            step.input_messages = Lazy(parse_messages, raw_in, default_role="user")
    elif "gen_ai.prompt.0.role" in attrs or "gen_ai.prompt.0.content" in attrs:
        step.input_messages = flattened_messages(attrs, "gen_ai.prompt")
    elif details is not None and details.inputs:
        step.input_messages = details.inputs
    if raw_out is not None:
        if not step.finish_reason and step.kind == "model_generation":
            raw_out = parse_json(raw_out)  # parsed once: this scan and the output share it
            for item in as_list(raw_out):
                if isinstance(item, dict) and item.get("finish_reason"):
                    step.finish_reason = str(item["finish_reason"])
                    break
        step.output = Lazy(parse_json, raw_out)
        step.output_messages = Lazy(parse_messages, raw_out, default_role="assistant")
    elif "gen_ai.completion.0.role" in attrs or "gen_ai.completion.0.content" in attrs:
        step.output_messages = flattened_messages(attrs, "gen_ai.completion")
    elif details is not None and details.outputs:
        step.output_messages = details.outputs
    if details is not None and details.finish_reason and not step.finish_reason:
        step.finish_reason = details.finish_reason
    system = get("gen_ai.system_instructions")
    if system is not None:
        step.system = system_texts(system)

    agent_id = get("gen_ai.agent.id")
    if agent_id:
        step.agent_id = str(agent_id)
    conversation = get("gen_ai.conversation.id")
    if conversation:
        step.conversation_id = str(conversation)

    traceloop = get("traceloop.span.kind")
    if traceloop is not None:
        _traceloop(step, attrs, str(traceloop))
    kind = step.kind
    if kind == "agent_run":
        agent_name = get("gen_ai.agent.name") or agent_id
        step.name = str(agent_name) if agent_name else strip_prefix(span.name, "invoke_agent ")
        if agent_name or step.name != span.name:  # a bare ``invoke_agent`` names no agent
            step.agent_id = step.agent_id or step.name
    elif kind == "workflow_run":
        workflow = get("gen_ai.workflow.name") or get("gen_ai.workflow.id")
        step.name = str(workflow) if workflow else strip_prefix(span.name, "invoke_workflow ")
        step.workflow_id = step.name
    elif kind == "tool_call":
        _adapt_tool(span, step, attrs)
    elif kind == "workflow_step":
        step.name = strip_prefix(span.name, "invoke_node ")
        step.step_id = step.step_id or step.name
    elif kind in ("model_generation", "embedding") and step.model:
        step.name = step.model
    elif isinstance(op, str) and op and step.name == span.name and span.name.startswith(op + " "):
        # ``{operation} {target}``, the convention's span name, for an operation it does not
        # list (``execute_task parse-request``): the target names the step
        step.name = span.name[len(op) + 1:].strip() or span.name


def _traceloop(step: Step, attrs: dict[str, Any], kind: str) -> None:
    """OpenLLMetry's own span kinds on spans that also carry GenAI attributes: a ``task``
    (``execute_task X``, a LangGraph node or LangChain runnable) is a chain named by its entity;
    the tree decides what it is; an ``agent`` that GenAI attributes made a model call by the
    model it names, with no messages of its own, is the agent."""
    if kind == "task" and step.kind == "generic":
        step.hint = "chain"
        entity = attrs.get("traceloop.entity.name")
        if entity:
            step.name = str(entity)
    elif kind == "agent" and step.kind == "model_generation" and not (
        step.has_input_messages or step._output_messages is not None
    ):
        # an agent span that names the model it uses, carrying no messages of its own
        # (OpenLLMetry's Agno agent span): the agent, not a model call
        step.kind = "agent_run"
        step.hint = None
    node = attrs.get("traceloop.association.properties.langgraph_node")
    if node is not None:
        step.metadata["langgraph_node"] = str(node)


def _raw(attrs: dict[str, Any], key: str, old_key: str) -> Any:
    value = attrs.get(key)
    if value is None or value == "":
        value = attrs.get(old_key)
        if value == "":
            return None
    return value


def _adapt_tool(span: Span, step: Step, attrs: dict[str, Any]) -> None:
    name = first_present(attrs, "gen_ai.tool.name")
    step.tool_name = (
        str(name) if name else strip_prefix(span.name, "execute_tool ", "tool.execute ")
    )
    step.name = step.tool_name
    call_id = attrs.get("gen_ai.tool.call.id")
    if call_id:
        step.tool_call_id = str(call_id)
    args = first_present(
        attrs,
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.input",
        "tool_arguments",
        "gcp.vertex.agent.tool_call_args",
    )
    if args is not None:
        step.tool_args = parse_json(args)
        step.input = step.tool_args
    result = first_present(
        attrs,
        "gen_ai.tool.call.result",
        "gen_ai.tool.output",
        "tool_response",
        "gcp.vertex.agent.tool_response",
    )
    if result is not None:
        step.tool_result = parse_json(result)
        step.output = step.tool_result
    if attrs.get("gen_ai.tool.success") is False:
        step.status = "error"
    if str(attrs.get("gen_ai.tool.type", "")).lower() in ("mcp",):
        step.kind = "mcp_tool_call"


def system_texts(value: Any) -> list[str] | None:
    """System instructions as texts: a plain string, JSON parts, or a list of strings."""
    if value is None or value == "":
        return None
    value = parse_json(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, list):
        if all(isinstance(i, dict) and "role" not in i and "parts" not in i for i in value):
            pieces = [i.get("content", i.get("text")) for i in value]
            joined = "".join(p for p in pieces if isinstance(p, str))
            return [joined] if joined else None
        texts: list[str] = []
        for item in value:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, dict):
                msg = parse_message(item, default_role="system")
                if msg is not None and msg.text:
                    texts.append(msg.text)
        return texts or None
    return [text_of(value)]


def finish_reason_of(value: Any) -> str | None:
    """The first finish reason of a list, a JSON list string or a plain string."""
    if value is None or value == "":
        return None
    value = parse_json(value)
    if isinstance(value, (list, tuple)):
        return str(value[0]) if value else None
    return str(value)


class _Details:
    __slots__ = ("extra", "finish_reason", "inputs", "outputs")

    def __init__(self) -> None:
        self.inputs: list[Msg] = []
        self.outputs: list[Msg] = []
        self.extra: dict[str, Any] = {}
        self.finish_reason: str | None = None


def _log_name(log: dict[str, Any]) -> str:
    name = log.get("event_name")
    if not name:
        attrs = log.get("attributes")
        name = attrs.get("event.name") if isinstance(attrs, dict) else None
    return str(name or "")


def _event_details(span: Span, listed: tuple[str, ...] = ()) -> _Details | None:
    """Messages and details from GenAI span events, log records and event records listed in
    the attributes ``listed``, in time order."""
    records: list[tuple[int, int, str, Any, dict[str, Any]]] = []
    for order, event in enumerate(span.events):
        name = str(event.get("name", ""))
        if name.startswith("gen_ai."):
            attrs = event.get("attributes") or {}
            body = attrs.get("gen_ai.event.content", attrs.get("body"))
            if body is None:
                body = {k: v for k, v in attrs.items() if not k.startswith("gen_ai.")} or None
            records.append((to_ns(event.get("time_unix_nano")) or 0, order, name, body, attrs))
    base = len(records)
    for order, log in enumerate(span.logs):
        name = _log_name(log)
        if name.startswith("gen_ai."):
            attrs = parse_json(log.get("attributes"))
            time = (
                to_ns(log.get("time_unix_nano")) or to_ns(log.get("observed_time_unix_nano")) or 0
            )
            body = parse_json(log.get("body"))
            records.append(
                (time, base + order, name, body, attrs if isinstance(attrs, dict) else {})
            )
    base = len(records)
    for key in listed:
        for order, record in enumerate(as_list(parse_json(span.attributes.get(key)))):
            name = str(record.get("event.name", "")) if isinstance(record, dict) else ""
            if name.startswith("gen_ai."):
                body = {k: v for k, v in record.items() if k != "event.name"}
                records.append((0, base + order, name, body, {}))
    if not records:
        return None
    records.sort(key=lambda r: (r[0], r[1]))
    details = _Details()
    chose = False
    for _, _, name, body, attrs in records:
        role = _MESSAGE_EVENTS.get(name)
        if role is not None:
            details.inputs.append(_event_message(body, role))
        elif name == "gen_ai.choice":
            chose = True
            body = parse_json(body)
            if isinstance(body, dict):
                if body.get("index") not in (None, 0, "0"):
                    continue
                message = parse_json(body.get("message")) or {}
                if isinstance(message, (list, str)):
                    message = {"role": "assistant", "content": message}
                if isinstance(message, dict):
                    message = {**message, "role": message.get("role") or "assistant"}
                msg = parse_message(message, default_role="assistant") or Msg("assistant", [])
                details.outputs.append(msg)
                if body.get("finish_reason") and not details.finish_reason:
                    details.finish_reason = str(body["finish_reason"])
            elif body is not None:
                details.outputs.append(Msg("assistant", [text_of(body)]))
        elif name == "gen_ai.content.prompt":
            details.inputs.extend(
                parse_messages(attrs.get("gen_ai.prompt"), default_role="user") or []
            )
        elif name == "gen_ai.content.completion":
            details.outputs.extend(
                parse_messages(attrs.get("gen_ai.completion"), default_role="assistant") or []
            )
        else:
            details.extra.update(attrs)
            if isinstance(body, dict):
                details.extra.update({k: v for k, v in body.items() if k.startswith("gen_ai.")})
    if not chose and not details.outputs:
        _answer_from_tail(details)
    return details


def _answer_from_tail(details: _Details) -> None:
    """The assistant messages after the last user or tool message, moved to the outputs (a
    request ends with what the model answers to)."""
    inputs = details.inputs
    cut = len(inputs)
    while cut and inputs[cut - 1].role == "assistant":
        cut -= 1
    if 0 < cut < len(inputs):
        details.outputs = inputs[cut:]
        del inputs[cut:]


def _event_message(body: Any, role: str) -> Msg:
    body = parse_json(body)
    if isinstance(body, dict):
        data = dict(body)
        data["role"] = role if role != "assistant" else (data.get("role") or "assistant")
        msg = parse_message(data, default_role=role)
        return msg if msg is not None else Msg(role, [])
    if isinstance(body, str):
        if role == "tool":
            return parse_message({"role": "tool", "content": body}) or Msg(role, [])
        return Msg(role, [body])
    if body is None:
        return Msg(role, [])
    return parse_message(body, default_role=role) or Msg(role, [text_of(body)])


__all__ = ["USAGE_KEYS", "adapt", "claims", "finish_reason_of", "system_texts"]
