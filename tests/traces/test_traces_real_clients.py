"""A real client on the older GenAI conventions: openai + opentelemetry-instrumentation-openai-v2
without the experimental opt-in writes prompts and completions as OTLP log records
(``gen_ai.user.message``, ``gen_ai.choice``, …) joined to the chat spans by span id. The app
wraps the loop in its own ``invoke_agent``/``execute_tool`` spans that carry no content.

The OTel SDK exports over real OTLP/HTTP to a loopback capture endpoint; the bodies are decoded
by the real ingest decoder; the model is the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tracescore.ingest import span_dicts_from_otlp
from tracescore.testing import Reply, ScriptedLLMServer
from tracescore.traces import Trace, extract_trajectory_from_trace, scorer_input, trace_to_agent_run

SYSTEM = "You are a concise travel weather assistant."
QUESTION = "What is the weather in Paris right now, in Fahrenheit?"
ANSWER = "Right now it is cloudy in Paris at 18°C (64.4°F)."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_temperature",
            "description": "C to F",
            "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}},
        },
    },
]


class _Capture:
    """A loopback OTLP/HTTP endpoint that keeps every request body by path."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                capture.bodies.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def capture() -> Iterator[_Capture]:
    endpoint = _Capture()
    yield endpoint
    endpoint.close()


def _run_agent(llm_url: str, otlp_url: str) -> None:
    from openai import OpenAI
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp_url + "/v1/traces"))
    )
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=otlp_url + "/v1/logs"))
    )
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    try:
        tracer = tracer_provider.get_tracer("weather-app")
        client = OpenAI(base_url=llm_url, api_key="sk-test")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": QUESTION},
        ]
        tools = {
            "get_weather": lambda city: {"city": city, "temperatureC": 18, "condition": "cloudy"},
            "convert_temperature": lambda celsius: {"fahrenheit": round(celsius * 9 / 5 + 32, 1)},
        }
        with tracer.start_as_current_span(
            "invoke_agent weather-agent",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "weather-agent",
            },
        ):
            for _ in range(5):
                response = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, tools=TOOLS
                )
                message = response.choices[0].message
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    with tracer.start_as_current_span(
                        f"execute_tool {call.function.name}",
                        attributes={
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": call.function.name,
                            "gen_ai.tool.call.id": call.id,
                        },
                    ):
                        result = tools[call.function.name](**json.loads(call.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                    )
    finally:
        instrumentor.uninstrument()
        tracer_provider.shutdown()
        logger_provider.shutdown()


def _script(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(
        Reply(
            tool_calls=[{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
            finish_reason="tool_calls",
            prompt_tokens=101,
            completion_tokens=11,
        ),
        Reply(
            tool_calls=[
                {"id": "call_2", "name": "convert_temperature", "arguments": {"celsius": 18}}
            ],
            finish_reason="tool_calls",
            prompt_tokens=202,
            completion_tokens=12,
        ),
        Reply(content=ANSWER, prompt_tokens=303, completion_tokens=13),
    )


@pytest.mark.parametrize("mode", ["v1.30 log events", "latest EVENT_ONLY"])
def test_openai_v2_event_forms_through_otlp(
    mode: str, llm_server: ScriptedLLMServer, capture: _Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v1.30: ``gen_ai.<role>.message``/``gen_ai.choice`` log records (the instrumentation's legacy
    path, selected by turning off its experimental switch); latest: one
    ``gen_ai.client.inference.operation.details`` log record per call, messages as attributes."""
    import opentelemetry.instrumentation.openai_v2 as openai_v2

    if mode.startswith("v1.30"):
        monkeypatch.setattr(openai_v2, "is_experimental_mode", lambda: False)
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    else:
        monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "EVENT_ONLY")
    _script(llm_server)
    _run_agent(llm_server.url + "/v1", capture.url)

    rows = [r for body in capture.bodies["/v1/traces"] for r in span_dicts_from_otlp(body)]
    logs = [
        r
        for body in capture.bodies.get("/v1/logs", [])
        for r in span_dicts_from_otlp(body, kind="logs")
    ]
    assert len(rows) == 6 and logs, "the client exported spans and log records"
    trace = Trace.from_rows(rows, logs=logs)
    assert len(trace.roots) == 1

    run = trace_to_agent_run(trace)
    assert [m.content for m in run.input.input_messages] == [QUESTION]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.input.remembered_messages == []
    assert run.output[0].content == ANSWER
    invocations = [(i.tool_name, i.args, i.result, i.state) for i in run.output[0].tool_invocations]
    assert invocations == [
        (
            "get_weather",
            {"city": "Paris"},
            {"city": "Paris", "temperatureC": 18, "condition": "cloudy"},
            "result",
        ),
        ("convert_temperature", {"celsius": 18}, {"fahrenheit": 64.4}, "result"),
    ]
    trajectory = extract_trajectory_from_trace(trace)
    assert [(s.step_type, s.name) for s in trajectory.steps] == [
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "get_weather"),
        ("model_generation", "gpt-4o-mini"),
        ("tool_call", "convert_temperature"),
        ("model_generation", "gpt-4o-mini"),
    ]
    tools = [
        (s.tool_args, s.tool_result, s.tool_call_id)
        for s in trajectory.steps
        if s.step_type == "tool_call"
    ]
    assert tools == [
        ({"city": "Paris"}, {"city": "Paris", "temperatureC": 18, "condition": "cloudy"}, "call_1"),
        ({"celsius": 18}, {"fahrenheit": 64.4}, "call_2"),
    ]
    models = [s for s in trajectory.steps if s.step_type == "model_generation"]
    assert [(s.prompt_tokens, s.completion_tokens, s.finish_reason) for s in models] == [
        (101, 11, "tool_calls"),
        (202, 12, "tool_calls"),
        (303, 13, "stop"),
    ]
    assert scorer_input(trace)["kind"] == "agent"
