"""create_tool_argument_scorer: schema checks by code (every verdict), the score and reason of
every branch, and runs on captured traces whose model calls recorded the tools offered."""

from __future__ import annotations

from typing import Any

import pytest
from agent_runs import LARGEST, TOOLS_FOLDER, first_model_call, rows_of, traced_run
from judged import assert_recorded, judge, prompt_of

from tracescore.model import ScorerRun
from tracescore.scorers import CATALOGUE, create_tool_argument_scorer
from tracescore.scorers._agent_text import ToolCall
from tracescore.scorers._tool_arguments import (
    ArgumentAnalysis,
    schema_verdict,
    tool_argument_reason,
    tool_argument_score,
)

WEATHER = {"name": "get_weather", "description": "Get the weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
    "additionalProperties": False}}
CONVERT = {"name": "convert_temperature", "description": "C to F", "parameters": {
    "type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}}
DEFINITIONS = {d["name"]: d for d in (WEATHER, CONVERT)}


def tool(name: str, args: Any) -> ToolCall:
    return ToolCall(1, name, args, None, False, 0)


@pytest.mark.parametrize(("call", "expected"), [
    (tool("get_weather", {"city": "Paris"}), None),
    (tool("get_weather", '{"city": "Paris"}'), None),  # JSON text arguments are parsed
    (tool("get_weather", {}), ("missing", "city")),
    (tool("get_weather", {"city": "Paris", "units": "F"}), ("hallucinated", "units")),
    (tool("get_weather", {"units": "F"}), ("hallucinated", "units")),  # before missing
    (tool("get_weather", {"city": 7}), ("wrong_value", "city")),
    (tool("get_weather", "Paris"), ("wrong_value", None)),  # not an object at all
    (tool("convert_temperature", {"celsius": 18, "extra": 1}), None),  # extras allowed here
    (tool("book_flight", {"to": "Paris"}), ("hallucinated", None)),  # a tool never offered
])
def test_schema_verdicts(call: ToolCall, expected: tuple[str, str | None] | None) -> None:
    found = schema_verdict(call, DEFINITIONS)
    if expected is None:
        assert found is None
    else:
        assert found is not None and (found["verdict"], found["argument"]) == expected
        assert found["problem"]


def test_no_schema_means_the_judge_decides() -> None:
    assert schema_verdict(tool("get_weather", {}), {}) is None
    assert schema_verdict(tool("x", {}), {"x": {"name": "x", "parameters": None}}) is None
    broken = {"x": {"name": "x", "parameters": {"type": "no-such-type"}}}
    assert schema_verdict(tool("x", {}), broken) is None


CALLS = [
    {"index": 1, "tool_name": "get_weather", "args": {}, "code_verdict": {
        "verdict": "missing", "argument": "city", "problem": "'city' is a required property"}},
    {"index": 2, "tool_name": "convert_temperature", "args": {"celsius": 18},
     "code_verdict": None},
    {"index": 3, "tool_name": "convert_temperature", "args": {"celsius": 99},
     "code_verdict": None},
]


def analysis(*verdicts: tuple[int, str]) -> ArgumentAnalysis:
    return ArgumentAnalysis.model_validate({"calls": [
        {"index": i, "verdict": v, "reasoning": f"r{i}"} for i, v in verdicts]})


@pytest.mark.parametrize(("judged", "expected"), [
    (analysis((2, "correct"), (3, "correct")), 2 / 3),
    (analysis((2, "Correct."), (3, "wrong_value")), 1 / 3),
    (analysis((2, "correct")), 1 / 3),  # the judge left #3 out: not correct
    (analysis((1, "correct"), (2, "correct"), (3, "correct")), 2 / 3),  # code's verdict holds
    (None, 0.0),
])
def test_score(judged: ArgumentAnalysis | None, expected: float) -> None:
    assert tool_argument_score(CALLS, judged) == pytest.approx(expected)


def test_reason_lists_the_calls_that_were_not_correct() -> None:
    assert tool_argument_reason(CALLS, analysis((2, "correct")), 0.33) == (
        "1 of 3 tool calls had correct arguments (score 0.33).\n"
        "❌ #1 get_weather: missing: schema: 'city' is a required property\n"
        "❌ #3 convert_temperature: not judged: the judge gave no verdict for it")
    assert tool_argument_score([], None) == 0.0


def test_a_capture_with_its_tools_offered(llm_server: Any) -> None:
    llm_server.script({"calls": [
        {"index": 1, "verdict": "correct", "argument": None, "reasoning": "Paris was asked"},
        {"index": 2, "verdict": "wrong_value", "argument": "celsius", "reasoning": "r"}]})
    result = create_tool_argument_scorer(judge(llm_server)).run_sync(
        traced_run(rows_of(TOOLS_FOLDER, "turn1")))
    assert result.score == 0.5
    pre = result.preprocess_step_result
    assert pre["tools_offered"] == ["get_weather", "convert_temperature"]
    assert [(c["tool_name"], c["schema_checked"], c["code_verdict"]) for c in pre["calls"]] == [
        ("get_weather", True, None), ("convert_temperature", True, None)]
    prompt = prompt_of(llm_server.requests[0])
    assert "Judge the arguments of these tool calls: #1 get_weather, #2 convert_temperature" in (
        prompt)
    assert '- get_weather: Get the current weather for a city parameters: {"type": "object"' in (
        prompt)
    assert "❌ #2 convert_temperature: wrong_value: r" in (result.reason or "")
    assert_recorded(result, ["analyze"])


def test_a_schema_violation_is_found_before_any_judge_call(llm_server: Any) -> None:
    rows = rows_of(TOOLS_FOLDER, "turn1")
    for row in rows:  # the captured weather call, its arguments spoiled
        attributes = row["attributes"]
        if row["name"] == "get_weather":
            attributes["input.value"] = '{"town": "Paris"}'
    first_model_call(rows)["attributes"][
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"] = (
        '{"town": "Paris"}')
    llm_server.script({"calls": [{"index": 2, "verdict": "correct", "reasoning": "18 °C"}]})
    result = create_tool_argument_scorer(judge(llm_server), scale=4).run_sync(traced_run(rows))
    [weather, convert] = result.preprocess_step_result["calls"]
    assert weather["code_verdict"]["verdict"] == "missing"
    assert weather["code_verdict"]["argument"] == "city"
    assert convert["code_verdict"] is None
    assert result.score == 2.0  # 1 of 2 correct, × 4
    assert "these tool calls: #2 convert_temperature." in prompt_of(llm_server.requests[0])


def test_code_settles_every_call_so_the_judge_is_not_called(llm_server: Any) -> None:
    run = ScorerRun(
        input="weather in Paris?",
        output=[{"role": "assistant", "content": "done", "tool_invocations": [
            {"tool_name": "get_weather", "args": {}, "state": "result", "result": {}},
            {"tool_name": "teleport", "args": {}, "state": "result", "result": {}}]}],
        request_context={"tool_definitions": [WEATHER, CONVERT]})
    result = create_tool_argument_scorer(judge(llm_server)).run_sync(run)
    assert result.score == 0.0 and llm_server.requests == []
    assert result.analyze_step_result is None and result.judge == {}
    assert "teleport: hallucinated" in (result.reason or "")


def test_no_tool_call_is_not_scorable(llm_server: Any) -> None:
    result = create_tool_argument_scorer(judge(llm_server)).run_sync(
        traced_run(rows_of(TOOLS_FOLDER, "turn2")))
    assert result.not_scorable is not None and result.score is None
    assert result.not_scorable.reason == (
        "the agent made no tool calls, so there are no arguments to judge")


def test_the_largest_capture(llm_server: Any) -> None:
    llm_server.script({"calls": [{"index": 1, "verdict": "correct", "reasoning": "r"},
                                 {"index": 2, "verdict": "correct", "reasoning": "r"}]})
    result = create_tool_argument_scorer(judge(llm_server)).run_sync(
        traced_run(rows_of(*LARGEST)))
    assert result.score == 1.0
    assert result.preprocess_step_result["tools_offered"] == ["get_weather",
                                                              "convert_temperature"]


def test_in_the_catalogue() -> None:
    scorer = CATALOGUE["tool-argument-scorer"]("openai/gpt-4o-mini")
    assert (scorer.id, scorer.name, scorer.type) == (
        "tool-argument-scorer", "Tool Argument Correctness (LLM)", "agent")
