"""Vercel AI SDK telemetry (``experimental_telemetry``): ``ai.*`` spans.

``ai.generateText``/``ai.streamText``/``ai.generateObject``/``ai.streamObject`` are the call the
app made (an agent run when it loops over tools; the structural pass decides), their
``.doGenerate``/``.doStream`` children are single model calls, ``ai.toolCall`` is a tool
execution, ``ai.embed*`` are embeddings; a span of any name carrying the request messages
(``ai.prompt.messages``) is a model call and one naming a tool call (``ai.toolCall.name``) a tool
execution (Laminar's Mastra exporter writes them on Mastra's own spans). Reads ``ai.prompt``
(``{system, prompt, messages}``), ``ai.prompt.messages``,
``ai.response.text``/``.toolCalls``/``.object``/``.finishReason``, ``ai.toolCall.*``
(``args``/``input``, ``result``/``output``), ``ai.usage.*`` (v4 prompt/completion and v5
input/output names) and ``ai.telemetry.functionId``/``.metadata.*``.
"""

from __future__ import annotations

from typing import Any

from ._messages import parse_message, parse_messages
from ._span import Span
from ._steps import Call, Lazy, Msg, Part, Reasoning, Step
from ._values import (
    as_list,
    first_present,
    has_key_prefix,
    keys_with_prefix,
    parse_json,
    pick_usage,
    text_of,
)

USAGE_KEYS = (
    ("input_tokens", ("ai.usage.inputTokens", "ai.usage.promptTokens")),
    ("output_tokens", ("ai.usage.outputTokens", "ai.usage.completionTokens")),
    ("total_tokens", ("ai.usage.totalTokens",)),
    ("reasoning_tokens", ("ai.usage.reasoningTokens",)),
    ("cached_input_tokens", ("ai.usage.cachedInputTokens",)),
)
_METADATA = "ai.telemetry.metadata."
_TOP = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")


def claims(span: Span) -> bool:
    """A span with ``ai.operationId``, an ``ai.*`` span name with ``ai.*`` attributes, or the
    SDK's request messages or tool-call name under any span name."""
    attrs = span.attributes
    if "ai.operationId" in attrs or "ai.prompt.messages" in attrs or "ai.toolCall.name" in attrs:
        return True  # (the content keys inline: claims runs for every span)
    return span.name.startswith("ai.") and has_key_prefix(attrs, "ai.")


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from AI SDK attributes."""
    attrs = span.attributes
    op = str(attrs.get("ai.operationId") or span.name)
    top = op in _TOP or op.startswith(_TOP)
    # Telemetry metadata repeats on every span of the call; the run (the top span) keeps it.
    metadata = (
        {key[len(_METADATA) :]: attrs[key] for key in keys_with_prefix(attrs, _METADATA)}
        if top or op.startswith("ai.toolCall")
        else None
    )
    if metadata:
        step.metadata.update(metadata)
        conversation = first_present(metadata, "sessionId", "threadId", "conversationId", "chatId")
        if conversation is not None:
            step.conversation_id = str(conversation)
        user = first_present(metadata, "userId", "resourceId")
        if user is not None:
            step.user_id = str(user)
    model = attrs.get("ai.model.id")
    if model:
        step.model = str(model)
    provider = attrs.get("ai.model.provider")
    if provider:
        step.provider = str(provider)
    response_model = attrs.get("ai.response.model")
    if response_model:
        step.response_model = str(response_model)
    usage = pick_usage(attrs, USAGE_KEYS)
    if usage:
        step.usage = usage
    finish = first_present(attrs, "ai.response.finishReason", "ai.finishReason")
    if finish is not None:
        step.finish_reason = str(finish)

    if op.endswith((".doGenerate", ".doStream")) or (not top and "ai.prompt.messages" in attrs):
        step.kind = "model_generation"
        step.hint = "llm_call"
        messages = attrs.get("ai.prompt.messages")
        if messages is not None:
            step.input = Lazy(parse_json, messages)
            step.input_messages = Lazy(parse_messages, messages, default_role="user")
        step.output_messages = Lazy(_response_messages, attrs)
        step.output = first_present(attrs, "ai.response.text", "ai.response.object")
        if step.model:
            step.name = step.model
    elif top:
        function_id = first_present(attrs, "ai.telemetry.functionId", "resource.name")
        # The app's call, which loops over tools when it has them: an agent run or a model-call
        # wrapper, as stage 2 finds (``_agent_runs``).
        step.kind = "model_generation"
        step.hint = "aisdk_top"
        step.name = str(function_id) if function_id else op.removeprefix("ai.")
        step.agent_id = step.name
        prompt = attrs.get("ai.prompt")
        if prompt is not None:
            step.input = parse_json(prompt)
            msgs, system = prompt_messages(step.input)
            step.input_messages = msgs
            if system:
                step.system = [system]
        step.output_messages = Lazy(_response_messages, attrs)
        step.output = first_present(attrs, "ai.response.text", "ai.response.object")
    elif op.startswith("ai.toolCall") or "ai.toolCall.name" in attrs:
        step.kind = "tool_call"
        name = first_present(attrs, "ai.toolCall.name")
        step.tool_name = str(name) if name else span.name
        step.name = step.tool_name
        call_id = attrs.get("ai.toolCall.id")
        if call_id:
            step.tool_call_id = str(call_id)
        args = first_present(attrs, "ai.toolCall.args", "ai.toolCall.input")
        if args is not None:
            step.tool_args = parse_json(args)
            step.input = step.tool_args
        result = first_present(attrs, "ai.toolCall.result", "ai.toolCall.output")
        if result is not None:
            step.tool_result = parse_json(result)
            step.output = step.tool_result
    elif op.startswith("ai.embed"):
        step.kind = "embedding"
        if step.model:
            step.name = step.model
        value = first_present(attrs, "ai.value", "ai.values")
        if value is not None:
            step.input = parse_json(value)


def prompt_messages(prompt: Any) -> tuple[list[Msg], str | None]:
    """The messages and system text of an ``ai.prompt`` value (``{system, prompt, messages}``)."""
    system: str | None = None
    msgs: list[Msg] = []
    if isinstance(prompt, dict):
        if isinstance(prompt.get("system"), str):
            system = prompt["system"]
        if isinstance(prompt.get("messages"), list):
            msgs = parse_messages(prompt["messages"], default_role="user") or []
        elif prompt.get("prompt") is not None:
            inner = prompt["prompt"]
            msgs = (
                [Msg("user", [inner])]
                if isinstance(inner, str)
                else parse_messages(inner, default_role="user") or []
            )
    elif isinstance(prompt, list):
        msgs = parse_messages(prompt, default_role="user") or []
    elif prompt is not None:
        msgs = [Msg("user", [text_of(prompt)])]
    if system:
        msgs.insert(0, Msg("system", [system]))
    return msgs, system


def _response_messages(attrs: dict[str, Any]) -> list[Msg]:
    return [_response_message(attrs)]


def _response_message(attrs: dict[str, Any]) -> Msg:
    parts: list[Part] = []
    reasoning = attrs.get("ai.response.reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(Reasoning(reasoning))
    text = first_present(attrs, "ai.response.text")
    if text is None and attrs.get("ai.response.object") is not None:
        text = text_of(attrs["ai.response.object"])
    if isinstance(text, str) and text:
        parts.append(text)
    for item in as_list(attrs.get("ai.response.toolCalls")):
        msg = parse_message({"role": "assistant", "tool_calls": [item]})
        if msg is not None:
            parts.extend(p for p in msg.parts if isinstance(p, Call))
    return Msg("assistant", parts)


__all__ = ["USAGE_KEYS", "adapt", "claims", "prompt_messages"]
