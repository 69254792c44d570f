"""The Python collector examples end to end: the example runs the weather agent against its
scripted LLM and exports OTLP to a real ``tracescore serve``; the spans are read back with SQL,
and live scoring writes a score for the agent trace."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from .conftest import API_KEY, SCORER_ID, Tracescore, run_example

SPANS = ("SELECT name, project, service_name, parent_span_id, attributes FROM spans "
         "WHERE trace_id = ? ORDER BY start_time")


def spans_of(server: Tracescore, trace_id: str, count: int) -> list[dict[str, Any]]:
    """The trace's spans once ``count`` have been stored, attributes parsed."""
    rows = server.wait_for_rows(SPANS, trace_id, count=count)
    for row in rows:
        if isinstance(row["attributes"], str):
            row["attributes"] = json.loads(row["attributes"])
    return rows


def assert_scored(server: Tracescore, trace_id: str) -> None:
    """Live scoring ran the called_tool check on this trace and it passed."""
    if not server.has_table("scores"):
        pytest.skip("tracescore serve has no live scoring yet (no `scores` table)")
    rows = server.wait_for_rows("SELECT scorer_id, status, score, error FROM scores "
                                "WHERE trace_id = ?", trace_id)
    assert rows, "live scoring wrote no score for the example's trace"
    got = [(r["scorer_id"], r["status"], r["score"]) for r in rows]
    assert got == [(SCORER_ID, "success", 1.0)], rows


def test_openai_v2_example_over_http_with_key_and_project(tracescore: Tracescore) -> None:
    run = run_example("openai_v2_agent.py", "--endpoint", tracescore.http_url,
                      "--api-key", API_KEY, "--project", "travel",
                      "--service-name", "ex-openai-v2")
    assert run.returncode == 0, run.stderr
    assert "64.4°F" in run.stdout

    spans = spans_of(tracescore, run.trace_id, count=6)
    assert Counter(s["name"] for s in spans) == {
        "invoke_agent weather-agent": 1, "chat gpt-4o-mini": 3,
        "execute_tool get_weather": 1, "execute_tool convert_temperature": 1}
    assert {(s["project"], s["service_name"]) for s in spans} == {("travel", "ex-openai-v2")}
    root = next(s for s in spans if s["parent_span_id"] in (None, ""))
    assert root["name"] == "invoke_agent weather-agent"
    assert "64.4" in root["attributes"]["gen_ai.output.messages"]
    tools = {s["attributes"]["gen_ai.tool.name"]: s["attributes"] for s in spans
             if s["name"].startswith("execute_tool")}
    assert json.loads(tools["get_weather"]["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    converted = json.loads(tools["convert_temperature"]["gen_ai.tool.call.result"])
    assert converted == {"fahrenheit": 64.4}
    chats = [s for s in spans if s["name"] == "chat gpt-4o-mini"]
    assert all("gen_ai.input.messages" in s["attributes"] for s in chats), "content capture is off"
    assert_scored(tracescore, run.trace_id)


def test_openinference_example_over_grpc(tracescore: Tracescore) -> None:
    run = run_example("openinference_agent.py", "--protocol", "grpc",
                      "--endpoint", tracescore.grpc_url, "--api-key", API_KEY,
                      "--service-name", "ex-openinference",
                      "--question", "What is the weather in Lisbon right now, in Fahrenheit?")
    assert run.returncode == 0, run.stderr
    assert "Lisbon" in run.stdout

    spans = spans_of(tracescore, run.trace_id, count=6)
    assert Counter(s["name"] for s in spans) == {
        "weather-agent": 1, "ChatCompletion": 3, "get_weather": 1, "convert_temperature": 1}
    kinds = {s["name"]: s["attributes"]["openinference.span.kind"] for s in spans}
    assert kinds == {"weather-agent": "AGENT", "ChatCompletion": "LLM", "get_weather": "TOOL",
                     "convert_temperature": "TOOL"}
    weather = next(s for s in spans if s["name"] == "get_weather")
    assert json.loads(weather["attributes"]["input.value"]) == {"city": "Lisbon"}
    assert {s["project"] for s in spans} == {"default"}
    assert {s["attributes"]["session.id"] for s in spans} == {"session-1"}
    assert_scored(tracescore, run.trace_id)


def test_standard_otlp_variables_alone_reach_tracescore(tracescore: Tracescore) -> None:
    """The README's way for any SDK: endpoint and URL-encoded headers from the environment."""
    run = run_example("openai_v2_agent.py", env={
        "OTEL_EXPORTER_OTLP_ENDPOINT": tracescore.http_url,
        "OTEL_EXPORTER_OTLP_HEADERS":
            f"authorization=Bearer%20{API_KEY},x-tracescore-project=env-project",
        "OTEL_SERVICE_NAME": "ex-env"})
    assert run.returncode == 0, run.stderr
    spans = spans_of(tracescore, run.trace_id, count=6)
    assert len(spans) == 6
    assert {(s["project"], s["service_name"]) for s in spans} == {("env-project", "ex-env")}


def test_a_wrong_key_is_refused_and_the_example_says_so(tracescore: Tracescore) -> None:
    run = run_example("openai_v2_agent.py", "--endpoint", tracescore.http_url,
                      "--api-key", "not-the-key", "--service-name", "ex-wrong-key")
    assert run.returncode == 0  # the agent itself worked; only the export failed
    assert "401" in run.stderr, run.stderr
    rows = tracescore.sql("SELECT count(*) AS n FROM spans WHERE trace_id = ?", run.trace_id)
    assert rows == [{"n": 0}]
