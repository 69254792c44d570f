"""Make real spans and log records with the OpenTelemetry SDK, then export them with its
OTLP exporters (HTTP/protobuf and gRPC), as an instrumented agent would."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def agent_spans(service: str, *, tool_calls: int = 2, project: str | None = None) -> list[Any]:
    """Finished SDK spans of one small agent run: an agent span, chat spans and tool spans."""
    resource = {"service.name": service}
    if project:
        resource["tracescore.project"] = project
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("tests.agent", "1.0")
    with tracer.start_as_current_span("invoke_agent weather") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "weather")
        for index in range(tool_calls):
            with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.usage.input_tokens", 100 + index)
                chat.set_attribute("gen_ai.request.temperature", 0.2)
                chat.set_attribute("gen_ai.response.finish_reasons", ["tool_calls"])
            with tracer.start_as_current_span("execute_tool get_weather") as tool:
                tool.set_attribute("gen_ai.tool.name", "get_weather")
                tool.add_event("tool.result", {"city": "Paris"})
    provider.shutdown()
    return list(memory.get_finished_spans())


def genai_log_records(service: str) -> tuple[list[Any], str]:
    """SDK log records of GenAI events emitted inside a span; returns (records, trace id hex)."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    resource = Resource.create({"service.name": service})
    memory = InMemoryLogRecordExporter()
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(memory))
    logger = logs.get_logger("tests.genai")
    provider = TracerProvider(resource=resource)
    tracer = provider.get_tracer("tests.genai")
    with tracer.start_as_current_span("chat gpt-4o-mini") as span:
        logger.emit(event_name="gen_ai.user.message", body={"content": "Weather in Paris?"},
                    attributes={"gen_ai.system": "openai"})
        logger.emit(event_name="gen_ai.choice",
                    body={"index": 0, "message": {"content": "Cloudy, 18°C."}})
        trace_id = format(span.get_span_context().trace_id, "032x")
    logs.shutdown()
    provider.shutdown()
    return list(memory.get_finished_logs()), trace_id
