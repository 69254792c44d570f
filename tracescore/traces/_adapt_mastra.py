"""Mastra's OTel export: ``mastra.span.type`` and ``mastra.<type>.input``/``.output``.

The span type is the step kind (``agent_run``, ``model_generation``, ``model_step``,
``model_inference``, ``model_chunk``, ``tool_call``, ``workflow_*``, ``processor_run``,
``memory_operation``, …; the older ``llm_generation``/``llm_chunk`` map to the newer names).
Input and output come from ``mastra.<type>.input``/``.output`` (older exporters wrote plain
``input``/``output``, ``gen_ai.prompt``/``gen_ai.completion`` and
``gen_ai.tool.input``/``.output``); the GenAI attributes Mastra also writes (usage, model, tool
call, system instructions) are read by the GenAI adapter first and kept where Mastra says nothing
else.
"""

from __future__ import annotations

from typing import Any

from ._adapt_generic import strip_prefix
from ._messages import parse_message, parse_messages
from ._span import Span
from ._steps import KINDS, Call, Lazy, Msg, Part, Reasoning, Step
from ._values import as_list, first_present, parse_json, text_of

_ALIASES = {
    "llm_generation": "model_generation",
    "llm_chunk": "model_chunk",
    "client_tool_call": "tool_call",
    "rag_embedding": "embedding",
    "rag_ingestion": "generic",
    "rag_vector_operation": "retrieval",
    "workspace_action": "generic",
}
_KIND_SET = frozenset(KINDS)
_KEYS: dict[str, tuple[str, str]] = {}
"""The input and output attribute keys of each span type seen (built once per type)."""


def claims(span: Span) -> bool:
    """A span with ``mastra.span.type``."""
    return "mastra.span.type" in span.attributes


def _messages_of(value: Lazy) -> list[Msg] | None:
    return parse_messages(value.get())


def _outputs_of(value: Lazy) -> list[Msg]:
    return [_output_message(value.get())]


def adapt(span: Span, step: Step) -> None:
    """Fill ``step`` from Mastra's attributes (inputs and outputs are parsed on first use)."""
    attrs = span.attributes
    span_type = str(attrs.get("mastra.span.type") or "generic").lower()
    kind = _ALIASES.get(span_type, span_type)
    if kind not in _KIND_SET:
        kind = "generic"
    step.kind = kind
    step.hint = "mastra"
    keys = _KEYS.get(span_type)
    if keys is None:
        keys = (f"mastra.{span_type}.input", f"mastra.{span_type}.output")
        if len(_KEYS) < 256:  # span types come from the data: keep the cache bounded
            _KEYS[span_type] = keys
    raw_in = attrs.get(keys[0])
    if raw_in is None:
        raw_in = attrs.get("input")
    raw_out = attrs.get(keys[1])
    if raw_out is None:
        raw_out = attrs.get("output")
    lazy_in = lazy_out = None
    if raw_in is not None and raw_in != "":
        lazy_in = Lazy(parse_json, raw_in)
        step.input = lazy_in
    if raw_out is not None:
        lazy_out = Lazy(parse_json, raw_out)
        step.output = lazy_out
    thread = attrs.get("mastra.metadata.threadId")
    if thread and not step.conversation_id:
        step.conversation_id = str(thread)
    resource = attrs.get("mastra.metadata.resourceId")
    if resource:
        step.user_id = str(resource)
    run_id = attrs.get("mastra.metadata.runId")
    if run_id:
        step.metadata["run_id"] = run_id
    if "error.message" in attrs or "error.type" in attrs:
        step.status = "error"
        step.error = text_of(first_present(attrs, "error.message", "error.type"))

    name = span.name
    if kind == "agent_run":
        agent = first_present(attrs, "gen_ai.agent.name", "agent.id", "gen_ai.agent.id")
        step.name = str(agent) if agent else strip_prefix(name, "invoke_agent ", "agent.")
        step.agent_id = str(first_present(attrs, "gen_ai.agent.id", "agent.id") or step.name)
        if lazy_in is not None:
            step.input_messages = Lazy(_messages_of, lazy_in)
        if lazy_out is not None:
            step.output_messages = Lazy(_outputs_of, lazy_out)
        instructions = first_present(
            attrs, f"mastra.{span_type}.instructions", "agent.instructions"
        )
        if instructions is not None and not step.system:
            step.system = [text_of(instructions)]
    elif kind in ("model_generation", "model_step"):
        if lazy_in is not None:
            step.input_messages = Lazy(_messages_of, lazy_in)
        if lazy_out is not None:
            step.output_messages = Lazy(_outputs_of, lazy_out)
        model = attrs.get("gen_ai.request.model")
        if model is None:
            model_meta = parse_json(attrs.get("mastra.metadata.modelMetadata"))
            if isinstance(model_meta, dict) and model_meta.get("modelId"):
                model = model_meta["modelId"]
                step.provider = step.provider or model_meta.get("modelProvider")
        if model is not None:
            step.model = str(model)
        elif kind == "model_generation":
            step.model = strip_prefix(
                name, "model_generation ", "chat ", "llm: ", "tool_selection "
            )
        if kind == "model_step":
            index = attrs.get("mastra.model_step.step_index")
            if index is not None:
                step.metadata["step_index"] = index
        step.name = step.model or name
    elif kind == "model_inference":
        step.name = step.model or strip_prefix(name, "chat ")
    elif kind in ("tool_call", "mcp_tool_call", "provider_tool_call"):
        tool = first_present(attrs, "gen_ai.tool.name", f"mastra.{span_type}.tool_id", "tool.id")
        step.tool_name = str(tool) if tool else strip_prefix(name, "execute_tool ", "tool.execute ")
        step.name = step.tool_name
        if step.tool_args is None and lazy_in is not None:
            step.tool_args = step.input
        if step.tool_result is None and lazy_out is not None:
            step.tool_result = step.output
        if step.tool_call_id is None and attrs.get("mastra.metadata.toolCallId"):
            step.tool_call_id = str(attrs["mastra.metadata.toolCallId"])
        success = first_present(attrs, f"mastra.{span_type}.success", "gen_ai.tool.success")
        if success is False:
            step.status = "error"
        server = first_present(attrs, "mcp.server", "server.address")
        if server is not None:
            step.mcp_server = str(server)
    elif kind == "workflow_run":
        workflow = first_present(attrs, "gen_ai.workflow.name", "workflow.id", "gen_ai.workflow.id")
        step.name = (
            str(workflow) if workflow else strip_prefix(name, "invoke_workflow ", "workflow.")
        )
        step.workflow_id = step.name
        status = first_present(attrs, "mastra.workflow_run.status", "workflow.status")
        if status is not None:
            step.step_status = str(status)
    elif kind.startswith("workflow_"):
        step_id = attrs.get(f"mastra.{span_type}.step_id")
        step.name = str(step_id) if step_id else _workflow_name(name, span_type)
        if kind == "workflow_step":
            step.step_id = step.name
        status = attrs.get(f"mastra.{span_type}.status")
        if status is not None:
            step.step_status = str(status)
    else:
        step.name = strip_prefix(name, span_type + " ")


def _workflow_name(name: str, span_type: str) -> str:
    stripped = strip_prefix(name, span_type + " ", "workflow step: ", "workflow step:")
    return stripped.strip().strip("'\"") or name


def _output_message(output: Any) -> Msg:
    """The assistant message of a Mastra generation/agent output (``{"text", "toolCalls", …}``)."""
    if isinstance(output, dict):
        parts: list[Part] = []
        for item in as_list(output.get("reasoning")):
            text = item.get("text") if isinstance(item, dict) else item
            if isinstance(text, str) and text:
                parts.append(Reasoning(text))
        if isinstance(output.get("reasoningText"), str) and output["reasoningText"] and not parts:
            parts.append(Reasoning(output["reasoningText"]))
        text = output.get("text")
        if isinstance(text, str) and text:
            parts.append(text)
        elif text is None and isinstance(output.get("object"), (dict, list)):
            parts.append(text_of(output["object"]))
        for item in as_list(output.get("toolCalls")):
            msg = parse_message({"role": "assistant", "tool_calls": [item]})
            if msg is not None:
                parts.extend(p for p in msg.parts if isinstance(p, Call))
        if parts or "text" in output or "toolCalls" in output:
            return Msg("assistant", parts)
        msgs = parse_messages(output, default_role="assistant")
        return msgs[-1] if msgs else Msg("assistant", [text_of(output)])
    if isinstance(output, str):
        return Msg("assistant", [output] if output else [])
    msgs = parse_messages(output, default_role="assistant")
    return msgs[-1] if msgs else Msg("assistant", [])


__all__ = ["adapt", "claims"]
