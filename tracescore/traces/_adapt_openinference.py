"""OpenInference (Arize Phoenix): ``openinference.span.kind`` and its flattened attributes.

Kinds: AGENT → agent_run, LLM → model_generation, TOOL → tool_call, RETRIEVER → retrieval,
EMBEDDING → embedding, CHAIN → generic with a ``chain`` hint (the structural pass decides whether
a chain is a workflow, a workflow step, an implicit agent, or plumbing). Messages come from
``llm.input_messages.N.message.*`` / ``llm.output_messages.*`` (with tool calls), else from
``input.value``/``output.value`` read by their mime type; usage from ``llm.token_count.*``.
"""

from __future__ import annotations

from typing import Any

from ._adapt_generic import method_owner
from ._messages import flattened_messages, parse_message, parse_messages
from ._span import Span
from ._steps import Lazy, Msg, Step
from ._values import as_dict, first_present, parse_json, parse_json_any, pick_usage

_KINDS = {
    "AGENT": "agent_run",
    "LLM": "model_generation",
    "TOOL": "tool_call",
    "RETRIEVER": "retrieval",
    "EMBEDDING": "embedding",
    "RERANKER": "retrieval",
    "CHAIN": "generic",
    "GUARDRAIL": "generic",
    "EVALUATOR": "generic",
    "PROMPT": "generic",
    "UNKNOWN": "generic",
}
USAGE_KEYS = (
    ("input_tokens", ("llm.token_count.prompt",)),
    ("output_tokens", ("llm.token_count.completion",)),
    ("total_tokens", ("llm.token_count.total",)),
    ("reasoning_tokens", ("llm.token_count.completion_details.reasoning",)),
    (
        "cached_input_tokens",
        ("llm.token_count.prompt_details.cache_read", "llm.token_count.prompt_details.cache_input"),
    ),
)


def claims(span: Span) -> bool:
    """A span with ``openinference.span.kind``, or OpenInference's LLM attributes."""
    attrs = span.attributes
    return (
        "openinference.span.kind" in attrs
        or "llm.input_messages.0.message.role" in attrs
        or "llm.token_count.prompt" in attrs
    )


def value_of(attrs: dict[str, Any], prefix: str) -> Any:
    """``input.value``/``output.value`` read by its mime type (JSON parsed, text kept)."""
    value = attrs.get(prefix + ".value")
    if value is None:
        return None
    mime = attrs.get(prefix + ".mime_type")
    if mime == "application/json":
        return parse_json_any(value)
    if mime == "text/plain":
        return value
    return parse_json(value)


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from OpenInference attributes."""
    attrs = span.attributes
    kind_name = str(attrs.get("openinference.span.kind") or "LLM").upper()
    step.kind = _KINDS.get(kind_name, "generic")
    if kind_name == "CHAIN":
        step.hint = "chain"
    if "input.value" in attrs:
        step.input = Lazy(value_of, attrs, "input")
    if "output.value" in attrs:
        step.output = Lazy(value_of, attrs, "output")
    session = attrs.get("session.id")
    if session:
        step.conversation_id = str(session)
    user = attrs.get("user.id")
    if user:
        step.user_id = str(user)
    metadata = attrs.get("metadata")
    if metadata:
        step.metadata.update(as_dict(metadata))

    if step.kind == "model_generation":
        _adapt_llm(span, step, attrs)
    elif step.kind == "tool_call":
        name = first_present(attrs, "tool.name", "tool_call.function.name")
        step.tool_name = str(name) if name else method_owner(span.name)
        step.name = step.tool_name
        call_id = first_present(attrs, "tool_call.id")
        if call_id:
            step.tool_call_id = str(call_id)
        args = attrs.get("tool_call.function.arguments")
        step.tool_args = parse_json(args) if args is not None else step.input
        output = step.output  # call records and result records are read by ``_tool_spans``
        step.tool_result = parse_json(output) if isinstance(output, str) else output
    elif step.kind == "agent_run":
        name = attrs.get("agent.name")
        # smolagents names the span "<agent name>.run", CrewAI "<agent role>.kickoff"; a name a
        # lower convention read from the span (``gen_ai.agent.name`` beside OpenInference's
        # attributes) wins over one guessed from the span name
        step.name = str(name) if name else step.agent_id or method_owner(span.name)
        step.agent_id = step.name  # its input is read by content (``_conversation``)
    elif step.kind == "embedding":
        model = attrs.get("embedding.model_name")
        if model:
            step.model = str(model)


def _adapt_llm(span: Span, step: Step, attrs: dict[str, Any]) -> None:
    step.hint = "llm_call"
    params = as_dict(attrs.get("llm.invocation_parameters"))
    model = first_present(params, "model", "model_name") or first_present(
        attrs, "llm.request.model_name", "llm.model_name"
    )
    if model is not None:
        step.model = str(model)
    response_model = first_present(attrs, "llm.response.model_name", "llm.model_name")
    if response_model is not None:
        step.response_model = str(response_model)
    provider = first_present(attrs, "llm.provider", "llm.system")
    if provider is not None:
        step.provider = str(provider)
    usage = pick_usage(attrs, USAGE_KEYS)
    if usage:
        step.usage = usage
    instructions = params.get("instructions")
    if isinstance(instructions, str) and instructions:
        step.system = [instructions]  # a Responses-API request's instructions
    step.input_messages = Lazy(_llm_inputs, attrs, step)
    step.output_messages = Lazy(_llm_outputs, attrs, step)
    finish = attrs.get("llm.finish_reason")
    if not finish and step._output is not None:
        finish = _response_messages(step.output)[1]
    if finish:
        step.finish_reason = str(finish)
    if step.model:
        step.name = step.model


def _llm_inputs(attrs: dict[str, Any], step: Step) -> list[Msg] | None:
    flat: list[Msg] | None = None
    if (
        "llm.input_messages.0.message.role" in attrs
        or "llm.input_messages.0.message.content" in attrs
    ):
        flat = flattened_messages(attrs, "llm.input_messages")
        if flat and all(m.parts for m in flat):
            return flat
    prompts = flattened_prompts(attrs)
    if prompts and flat is None:
        return [Msg("user", [p]) for p in prompts]
    if step.input is not None:
        value = step.input
        if (
            isinstance(value, dict)
            and isinstance(value.get("input"), list)
            and "messages" not in value
        ):
            value = value["input"]  # an OpenAI Responses API request body
        from_value = parse_messages(value, default_role="user")
        if flat is None or _richer(from_value, flat):
            return from_value
        if flat is not None and from_value:
            return _fill_empty(flat, from_value)
    return flat


def _fill_empty(flat: list[Msg], other: list[Msg]) -> list[Msg]:
    """Flattened messages with the ones the instrumentation left empty taken from the same
    request's other copy (the input value), message for message."""
    mine = [m for m in flat if m.role != "system"]
    theirs = [m for m in other if m.role != "system"]
    if len(mine) != len(theirs):
        return flat
    fill = {id(a): b for a, b in zip(mine, theirs, strict=True) if not a.parts and b.parts}
    return [fill.get(id(m), m) for m in flat] if fill else flat


def _richer(candidate: list[Msg] | None, flat: list[Msg]) -> bool:
    """The input value's messages say more than flattened attributes that left messages
    empty (an instrumentation that could not flatten a framework's message objects)."""
    return bool(candidate) and _weight(candidate or []) > _weight(flat)


def _weight(msgs: list[Msg]) -> int:
    return sum(len(m.parts) + sum(1 for c in m.calls if c.id) for m in msgs)


def _llm_outputs(attrs: dict[str, Any], step: Step) -> list[Msg] | None:
    flat: list[Msg] | None = None
    if (
        "llm.output_messages.0.message.role" in attrs
        or "llm.output_messages.0.message.content" in attrs
    ):
        flat = flattened_messages(attrs, "llm.output_messages")
        if flat and all(m.parts for m in flat) and all(c.id for m in flat for c in m.calls):
            return flat
    if step.output is not None:
        from_value = _response_messages(step.output)[0]
        if flat is None or _richer(from_value, flat):
            return from_value
    return flat


def flattened_prompts(attrs: dict[str, Any]) -> list[str]:
    """Completion-API prompts written as ``llm.prompts.N.prompt.text`` (or a plain list)."""
    value = attrs.get("llm.prompts")
    if isinstance(value, list):
        return [str(v) for v in value]
    out: list[tuple[int, str]] = []
    for key, item in attrs.items():
        if key.startswith("llm.prompts.") and key.endswith(".prompt.text"):
            index = key[len("llm.prompts.") :].split(".", 1)[0]
            if index.isdigit():
                out.append((int(index), str(item)))
    return [text for _, text in sorted(out)]


def _response_messages(output: Any) -> tuple[list[Msg] | None, str | None]:
    """Assistant messages from a provider response body (OpenAI choices, Anthropic content)."""
    if isinstance(output, dict):
        choices = output.get("choices")
        if isinstance(choices, list) and choices:
            first = choices[0] if isinstance(choices[0], dict) else {}
            message = first.get("message") or first.get("delta") or {}
            if "text" in first and not message:
                message = {"role": "assistant", "content": first["text"]}
            msg = parse_message({**message, "role": message.get("role") or "assistant"})
            return ([msg] if msg is not None else None), first.get("finish_reason")
        if output.get("role") == "assistant" or output.get("type") == "message":
            msg = parse_message({**output, "role": "assistant"})
            return ([msg] if msg is not None else None), output.get("stop_reason")
    return parse_messages(output, default_role="assistant"), None


__all__ = ["USAGE_KEYS", "adapt", "claims", "flattened_prompts", "value_of"]
