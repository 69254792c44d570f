"""create_tool_call_accuracy_scorer_llm: formula, tool listing, a run, errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge
from mastra_shapes import agent_input, message, tool_invocation

from tracescore.scorers import create_tool_call_accuracy_scorer_llm
from tracescore.scorers._tool_call_accuracy_llm import (
    ToolEvaluations,
    tool_call_accuracy_score,
    tool_lines,
)
from tracescore.scoring import ScorerRunError
from tracescore.testing import error

TOOLS = [{"id": "weather", "description": "Current weather for a city"},
         {"id": "calendar", "description": "The user's meetings"}]


def evaluations(*appropriate: bool, missing: tuple[str, ...] = ()) -> ToolEvaluations:
    return ToolEvaluations.model_validate({
        "evaluations": [{"tool_called": f"t{i}", "was_appropriate": a}
                        for i, a in enumerate(appropriate)],
        "missing_tools": list(missing)})


@pytest.mark.parametrize(("analysis", "expected"), [
    (evaluations(), 1.0),
    (evaluations(missing=("weather",)), 0.0),
    (evaluations(True, False, True), 2 / 3),
    (evaluations(True, missing=("calendar",)), 1.0),
])
def test_formula(analysis: ToolEvaluations, expected: float) -> None:
    assert tool_call_accuracy_score(analysis) == pytest.approx(expected)


def test_tool_lines_accept_dicts_objects_and_a_mapping() -> None:
    class Tool:
        id = "search"
        description = "Searches the web"

    assert tool_lines(TOOLS) == ["weather: Current weather for a city",
                                 "calendar: The user's meetings"]
    assert tool_lines([Tool(), {"name": "x"}]) == ["search: Searches the web", "x"]
    assert tool_lines({"a": "does a"}) == ["a: does a"]
    with pytest.raises(TypeError, match="available_tools must be a list"):
        tool_lines("weather")
    with pytest.raises(ValueError, match="needs an id"):
        tool_lines([{"description": "nameless"}])


def test_run(llm_server: Any) -> None:
    llm_server.script(
        {"evaluations": [{"tool_called": "weather", "was_appropriate": True, "reasoning": "ok"},
                         {"tool_called": "calendar", "was_appropriate": False,
                          "reasoning": "not asked"}], "missing_tools": []},
        "The score is 0.5 because the calendar was not needed.")
    output = [message("Checking.", tool_invocations=[
        tool_invocation("weather", args={"city": "Oslo"}, result={"temp": 3}),
        tool_invocation("calendar", tool_call_id="call-2", args={}, result=[])]),
        message("It is 3 degrees in Oslo.")]
    scorer = create_tool_call_accuracy_scorer_llm(judge(llm_server), TOOLS)
    result = scorer.run_sync(input=agent_input("Weather in Oslo?"), output=output)
    assert result.score == 0.5
    assert (scorer.id, scorer.name) == ("llm-tool-call-accuracy-scorer", "Tool Call Accuracy (LLM)")
    assert result.preprocess_step_result["actual_tools"] == ["weather", "calendar"]
    prompt = result.analyze_prompt or ""
    assert "weather: Current weather for a city" in prompt
    assert '"city": "Oslo"' in prompt and "Weather in Oslo?" in prompt
    assert_recorded(result, ["analyze", "generate_reason"])


def test_empty_run_is_refused_like_the_code_variant(llm_server: Any) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(judge(llm_server), TOOLS)
    for run in ({"input": "", "output": "a"}, {"input": "q", "output": []}):
        with pytest.raises(ScorerRunError,
                           match="Input and output messages cannot be null or empty") as info:
            scorer.run_sync(**run)
        assert info.value.failed_step == "preprocess"
    assert llm_server.requests == []


def test_judge_failure(llm_server: Any) -> None:
    llm_server.script(error(429, "slow down", retry_after=0))
    with pytest.raises(ScorerRunError) as info:
        create_tool_call_accuracy_scorer_llm(judge(llm_server), options={
            "availableTools": TOOLS}).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.completed_steps == ["preprocess"]
