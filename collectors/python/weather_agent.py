"""The travel-weather agent shared by the Python collector examples.

A plain OpenAI-client tool loop with two tools (``get_weather``, ``convert_temperature``), the
OTLP exporter set-up that points at tracescore, and a scripted stand-in for the LLM so the
examples run with no API key. The examples add the instrumentation; this file has none.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

AGENT_NAME = "weather-agent"
SYSTEM_PROMPT = (
    "You are a concise travel weather assistant. Always use the get_weather tool for current "
    "conditions and convert_temperature when the user wants Fahrenheit."
)
DEFAULT_QUESTION = "What is the weather in Paris right now, in Fahrenheit?"

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "convert_temperature",
        "description": "Convert a temperature from Celsius to Fahrenheit",
        "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}},
                       "required": ["celsius"]}}},
]
TOOL_SPECS = {t["function"]["name"]: t["function"] for t in TOOLS}


def get_weather(city: str) -> dict[str, Any]:
    """A fake weather service: every city is cloudy at 18 °C."""
    return {"city": city, "temperatureC": 18, "condition": "cloudy"}


def convert_temperature(celsius: float) -> dict[str, Any]:
    """Celsius to Fahrenheit."""
    return {"fahrenheit": round(celsius * 9 / 5 + 32, 1)}


TOOL_FUNCTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "get_weather": get_weather, "convert_temperature": convert_temperature}

# run_tool(name, arguments, call_id) -> result; the examples wrap it in a tool span.
ToolRunner = Callable[[str, dict[str, Any], str], dict[str, Any]]


def call_tool(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """Run one tool by name (the uninstrumented runner)."""
    return TOOL_FUNCTIONS[name](**arguments)


def run_agent(client: Any, question: str, *, model: str, run_tool: ToolRunner = call_tool) -> str:
    """Ask the model, run the tools it calls, repeat until it answers in text."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    for _ in range(8):
        reply = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls:
            result = run_tool(tc.function.name, json.loads(tc.function.arguments), tc.id)
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps(result)})
    raise RuntimeError("the model kept calling tools; giving up after 8 turns")


def scripted_reply(request: dict[str, Any]) -> Any:
    """The stand-in LLM: get_weather, then convert_temperature, then the answer."""
    from tracescore.testing import Reply

    messages = request.get("messages", [])
    question = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    found = re.search(r"\bin ([A-Z][\w-]*)", question)
    city = found.group(1) if found else "Paris"
    results = [json.loads(m["content"]) for m in messages if m.get("role") == "tool"]
    tokens = {"prompt_tokens": 180 + 80 * len(results), "completion_tokens": 12}
    if not results:
        return Reply(tool_calls=[{"name": "get_weather", "arguments": {"city": city}}], **tokens)
    if len(results) == 1:
        celsius = results[0].get("temperatureC", 18)
        return Reply(tool_calls=[{"name": "convert_temperature",
                                  "arguments": {"celsius": celsius}}], **tokens)
    weather, converted = results[0], results[1]
    return Reply(content=f"Right now it is {weather['condition']} in {weather['city']} at "
                         f"{weather['temperatureC']}°C ({converted['fahrenheit']}°F).", **tokens)


@contextmanager
def openai_endpoint() -> Iterator[str]:
    """OPENAI_BASE_URL if set, else a scripted OpenAI-compatible server started in-process."""
    if os.environ.get("OPENAI_BASE_URL"):
        yield os.environ["OPENAI_BASE_URL"]
        return
    from tracescore.testing import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        server.set_default(scripted_reply)
        os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")
        yield server.url


def parse_args(description: str) -> argparse.Namespace:
    """The flags every example takes; unset ones fall back to the OTEL_EXPORTER_OTLP_* variables."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--endpoint", help="tracescore's OTLP base URL (default: "
                   "$OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318, or :4317 for grpc)")
    p.add_argument("--protocol", choices=["http/protobuf", "grpc"],
                   default=os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"))
    p.add_argument("--api-key", help="sent as 'Authorization: Bearer <key>'")
    p.add_argument("--project", help="sent as the 'x-tracescore-project' header")
    p.add_argument("--service-name", default=os.environ.get("OTEL_SERVICE_NAME", AGENT_NAME))
    p.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    p.add_argument("--question", default=DEFAULT_QUESTION)
    return p.parse_args()


def setup_tracing(args: argparse.Namespace,
                  provider_class: type[TracerProvider] = TracerProvider) -> TracerProvider:
    """A global tracer provider exporting OTLP to tracescore, with gzip."""
    headers = {}
    if args.api_key:
        headers["authorization"] = f"Bearer {args.api_key}"
    if args.project:
        headers["x-tracescore-project"] = args.project
    if args.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            Compression as GrpcCompression,
        )
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

        exporter: Any = Grpc(endpoint=args.endpoint, headers=headers or None,
                             compression=GrpcCompression.Gzip)
    else:
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = args.endpoint and args.endpoint.rstrip("/") + "/v1/traces"
        exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers or None,
                                    compression=Compression.Gzip)
    provider = provider_class(resource=Resource.create({"service.name": args.service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def current_trace_id() -> str:
    """The current trace id as 32 hex digits (what tracescore stores)."""
    return format(trace.get_current_span().get_span_context().trace_id, "032x")
