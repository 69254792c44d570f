"""trace_document and tool_definitions: a trace as plain data for the judges that read it in
parts, and the tools each convention records as offered to the model."""

from __future__ import annotations

import json

import pytest

from tracescore.traces import Trace, lazy_trace_document, tool_definitions, trace_document

from .helpers import fixture_trace, row, span_id


@pytest.mark.parametrize(("folder", "with_schema"), [
    ("aisdk5-experimental-telemetry", True),  # ai.prompt.tools, inputSchema
    ("mastra-otel-exporter-protobuf", False),  # gen_ai.tool.definitions: names only
    ("py-google-adk-genai", True),  # gen_ai.tool.definitions: objects
    ("py-langgraph-openllmetry", True),
    ("py-openinference-openai", True),  # llm.tools.<i>.tool.json_schema
    ("py-openai-agents-openinference", True),
])
def test_tools_offered_in_each_convention(folder: str, with_schema: bool) -> None:
    found = tool_definitions(fixture_trace(folder, "turn1").steps)
    assert [d["name"] for d in found] == ["get_weather", "convert_temperature"]
    assert all(bool(d["parameters"]) == with_schema for d in found)
    if with_schema:
        weather = found[0]["parameters"]
        assert "city" in weather["properties"] and weather["required"] == ["city"]
        assert "weather" in (found[0]["description"] or "").lower()


def test_captures_that_record_no_tools_give_none() -> None:
    assert tool_definitions(fixture_trace("py-openai-plain-genai", "turn1").steps) == []


def test_traceloop_functions_and_the_first_schema_wins() -> None:
    root, model = span_id(), span_id()
    attributes = {
        "gen_ai.tool.definitions": json.dumps(["search"]),
        "llm.request.functions.0.name": "search",
        "llm.request.functions.0.description": "Search the web",
        "llm.request.functions.0.parameters": json.dumps({"type": "object", "properties": {
            "q": {"type": "string"}}}),
        "llm.request.functions.1.name": "fetch",
    }
    trace = Trace.from_rows([row("agent", span_id=root),
                             row("llm", span_id=model, parent=root, attributes=attributes)])
    assert tool_definitions(trace.steps) == [
        {"name": "search", "description": "Search the web",
         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "fetch", "description": None, "parameters": None}]


def test_the_document_of_a_captured_agent_run() -> None:
    trace = fixture_trace("py-openinference-openai", "turn1")
    document = trace_document(trace)
    assert json.loads(json.dumps(document)) == document  # plain JSON data
    steps = document["steps"]
    assert document["trace_id"] == trace.trace_id and len(steps) == len(trace) == 6
    assert document["target_span_id"] == steps[0]["span_id"]
    assert [(s["depth"], s["kind"]) for s in steps] == [
        (0, "agent_run"), (1, "model_generation"), (1, "tool_call"), (1, "model_generation"),
        (1, "tool_call"), (1, "model_generation")]
    assert all(s["parent_span_id"] == steps[0]["span_id"] for s in steps[1:])
    model = steps[1]
    assert model["input"][-1] == {"role": "user", "text":
                                  "What is the weather in Paris right now, in Fahrenheit?"}
    [reply] = model["output"]
    assert reply["tool_calls"][0]["name"] == "get_weather"
    assert model["usage"]["input_tokens"] > 0 and "llm.tools.0.tool.json_schema" in (
        model["attributes"])
    assert (steps[2]["tool_name"], steps[2]["input"]) == ("get_weather", {"city": "Paris"})
    assert [d["name"] for d in document["tool_definitions"]] == [
        "get_weather", "convert_temperature"]


def test_a_target_span_and_the_lazy_document() -> None:
    trace = fixture_trace("mastra-otel-exporter-protobuf", "turn1")
    [tool] = [s for s in trace.steps[0].walk() if s.name == "convert_temperature"]
    document = trace_document(trace, tool.span_id)
    assert [s["name"] for s in document["steps"]] == ["convert_temperature"]
    assert document["steps"][0]["depth"] == 0
    lazy = lazy_trace_document(trace, tool.span_id)
    assert lazy() is lazy() and lazy() == document
