"""Realistic agent traces sent through the OpenTelemetry SDK's OTLP/HTTP exporter.

``send_agent_traces(url, count=...)`` emits weather-agent runs in the OpenTelemetry GenAI
conventions (an ``invoke_agent`` span with ``chat`` model calls and ``execute_tool`` calls
beneath, messages and token usage on the spans), the way an instrumented Python agent does.
Every fourth run has a tool call that fails and is retried, every fifth one repeats a call, so
the default scorers have something to find. ``tracescore demo``, the live tests and the live
benchmark use it; it needs ``opentelemetry-sdk`` and ``opentelemetry-exporter-otlp-proto-http``
(the ``demo`` extra: ``pip install 'tracescore[demo]'``).
"""

from __future__ import annotations

import json
import random
from typing import Any

SYSTEM = ("You are a concise travel weather assistant. Use get_weather for current conditions "
          "and convert_temperature when the user wants Fahrenheit.")
CITIES = ("Paris", "Lisbon", "Oslo", "Kyoto", "Lima", "Cairo", "Denver", "Perth")
CONDITIONS = ("cloudy", "sunny", "rainy", "windy")


def _parts(role: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"type": "text", "content": text})
    if "call" in extra:
        name, args, call_id = extra["call"]
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": args})
    if "response" in extra:
        call_id, result = extra["response"]
        parts.append({"type": "tool_call_response", "id": call_id, "response": result})
    return {"role": role, "parts": parts}


def _tool_plan(index: int, rng: random.Random) -> list[tuple[str, dict[str, Any], Any, bool]]:
    """(tool name, args, result, failed) per tool call of run ``index``."""
    city = CITIES[index % len(CITIES)]
    celsius = rng.randint(-5, 32)
    weather = {"city": city, "temperatureC": celsius,
               "condition": CONDITIONS[index % len(CONDITIONS)]}
    calls: list[tuple[str, dict[str, Any], Any, bool]] = []
    if index % 4 == 3:
        calls.append(("get_weather", {"city": city}, {"error": "upstream timeout"}, True))
    calls.append(("get_weather", {"city": city}, weather, False))
    if index % 5 == 4:
        calls.append(("get_weather", {"city": city}, weather, False))
    calls.append(("convert_temperature", {"celsius": celsius},
                  {"fahrenheit": round(celsius * 9 / 5 + 32, 1)}, False))
    return calls


def emit_agent_run(tracer: Any, index: int, *, rng: random.Random) -> str:
    """Emit one agent run as spans on ``tracer``; returns its trace id (32 hex)."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    city = CITIES[index % len(CITIES)]
    question = f"What is the weather in {city} right now, in Fahrenheit?"
    plan = _tool_plan(index, rng)
    celsius = plan[-1][1]["celsius"]
    answer = (f"Right now it is {plan[-2][2]['condition']} in {city} at {celsius}°C "
              f"({plan[-1][2]['fahrenheit']}°F).")
    history: list[dict[str, Any]] = [_parts("system", SYSTEM), _parts("user", question)]
    model = {"gen_ai.request.model": "gpt-4o-mini", "gen_ai.provider.name": "openai",
             "gen_ai.response.model": "gpt-4o-mini-2024-07-18"}
    with tracer.start_as_current_span("invoke_agent weather-agent",
                                      kind=SpanKind.INTERNAL) as agent:
        agent.set_attributes({
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather-agent",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.conversation.id": f"demo-{index}",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
            "gen_ai.input.messages": json.dumps([_parts("user", question)]),
            "gen_ai.output.messages": json.dumps([_parts("assistant", answer)]),
        })
        for step, (tool, args, result, failed) in enumerate(plan):
            call_id = f"call_{index}_{step}"
            reply = _parts("assistant", call=(tool, args, call_id))
            with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as chat:
                chat.set_attributes({
                    **model, "gen_ai.operation.name": "chat",
                    "gen_ai.usage.input_tokens": 180 + 40 * step,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.response.finish_reasons": ["tool_calls"],
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([{**reply, "finish_reason":
                                                           "tool_calls"}]),
                })
            history.append(reply)
            with tracer.start_as_current_span(f"execute_tool {tool}") as span:
                span.set_attributes({
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": json.dumps(args),
                    "gen_ai.tool.call.result": json.dumps(result),
                })
                if failed:
                    span.set_attribute("error.type", "TimeoutError")
                    span.set_status(Status(StatusCode.ERROR, result["error"]))
            history.append(_parts("tool", response=(call_id, result)))
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as chat:
            chat.set_attributes({
                **model, "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 180 + 40 * len(plan),
                "gen_ai.usage.output_tokens": 18,
                "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([{**_parts("assistant", answer),
                                                       "finish_reason": "stop"}]),
            })
        return f"{agent.get_span_context().trace_id:032x}"


def send_agent_traces(
    url: str,
    *,
    count: int = 5,
    service_name: str = "weather-agent",
    api_key: str | None = None,
    seed: int = 7,
    start: int = 0,
    resource: dict[str, Any] | None = None,
) -> list[str]:
    """Send ``count`` agent runs to the tracescore server at ``url`` (OTLP/HTTP protobuf)
    through the OpenTelemetry SDK; returns their trace ids once the exporter has flushed."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "sending demo traces needs the OpenTelemetry SDK: pip install 'tracescore[demo]' "
            f"(or opentelemetry-sdk opentelemetry-exporter-otlp-proto-http): {exc}"
        ) from None
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
    provider = TracerProvider(resource=Resource.create({"service.name": service_name,
                                                        **(resource or {})}))
    exporter = OTLPSpanExporter(endpoint=f"{url.rstrip('/')}/v1/traces", headers=headers)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=512))
    tracer = provider.get_tracer("tracescore.demo")
    rng = random.Random(seed)
    try:
        ids = [emit_agent_run(tracer, start + i, rng=rng) for i in range(count)]
        if not provider.force_flush(30_000):
            raise RuntimeError(f"the OTLP exporter could not deliver the spans to {url}")
    finally:
        provider.shutdown()
    return ids
