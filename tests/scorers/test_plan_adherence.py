"""create_plan_adherence_scorer: finding a stated plan, the score and reason of every branch,
captured runs with no plan (not scorable) and with a plan edited into the capture."""

from __future__ import annotations

from typing import Any

import pytest
from agent_runs import PLAN, TOOLS_FOLDER, rows_of, traced_run, with_plan
from judged import assert_recorded, judge, prompt_of
from traces.helpers import INDEX

from tracescore.scorers import CATALOGUE, create_plan_adherence_scorer
from tracescore.scorers._agent_text import plan_statements
from tracescore.scorers._plan_adherence import (
    NO_PLAN,
    PlanAnalysis,
    plan_adherence_reason,
    plan_adherence_score,
)
from tracescore.scoring import NotScorableSignal


def call(name: str) -> dict[str, Any]:
    return {"type": "tool-invocation", "tool_invocation": {
        "tool_call_id": name, "tool_name": name, "args": {}, "state": "result", "result": 1}}


def text(kind: str, value: str) -> dict[str, Any]:
    return {"type": kind, "text": value}


def test_plan_statements_are_text_or_reasoning_before_tool_calls() -> None:
    output = [
        {"role": "assistant", "parts": [text("reasoning", "I need the weather first."),
                                        text("text", "Looking it up."), call("get_weather"),
                                        text("text", "Now converting."), call("convert"),
                                        text("text", "It is 64°F.")]},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "parts": [text("text", "Anything else?")]},
    ]
    assert plan_statements(output) == ["I need the weather first.", "Looking it up.",
                                       "Now converting."]
    legacy = [{"role": "assistant", "content": "I will search.",
               "tool_invocations": [call("search")["tool_invocation"]]}]
    assert plan_statements(legacy) == ["I will search."]
    answer_only = [{"role": "assistant", "parts": [call("x"), text("text", "done")]}]
    assert plan_statements(answer_only) == []
    assert plan_statements("just an answer") == []


def steps(*verdicts: str, planned: bool = True) -> PlanAnalysis:
    return PlanAnalysis.model_validate({"steps": [
        {"step": f"step {i}", "planned": planned, "verdict": v, "evidence": f"e{i}"}
        for i, v in enumerate(verdicts)]})


@pytest.mark.parametrize(("analysis", "expected"), [
    (steps("followed", "followed"), 1.0),
    (steps("followed", "deviated_with_reason", "deviated_without_reason"), 0.5),
    (steps("deviated_with_reason"), 0.5),
    (steps("deviated_without_reason"), 0.0),
    (steps("FOLLOWED.", "skipped"), 0.5),
])
def test_score(analysis: PlanAnalysis, expected: float) -> None:
    assert plan_adherence_score(analysis) == pytest.approx(expected)


def test_no_steps_is_not_scorable_and_the_reason_marks_unplanned_actions() -> None:
    assert isinstance(plan_adherence_score(steps()), NotScorableSignal)
    analysis = PlanAnalysis.model_validate({"steps": [
        {"step": "get weather", "verdict": "followed", "evidence": "called"},
        {"step": "search flights", "planned": False, "verdict": "deviated_without_reason",
         "evidence": "never asked"}]})
    assert plan_adherence_reason(analysis, 0.5) == (
        "1 of 1 planned steps followed; 0 deviation(s) with a reason, 1 without (score 0.5).\n"
        "✅ get weather: called\n❌ (unplanned) search flights: never asked")


THINKING = ("py-dspy-react-openinference", "py-dspy-react-mlflow")
"""DSPy's ReAct writes a thought before each tool call (``next_thought``): a stated plan (the
same script, traced by OpenInference and by MLflow)."""


@pytest.mark.parametrize("folder", sorted(f for f in INDEX if f not in THINKING))
def test_captures_state_no_plan_so_they_are_not_scorable(folder: str, llm_server: Any) -> None:
    result = create_plan_adherence_scorer(judge(llm_server)).run_sync(
        traced_run(rows_of(folder, "turn1")))
    assert result.score is None and result.not_scorable is not None
    assert (result.not_scorable.step, result.not_scorable.reason) == ("preprocess", NO_PLAN)
    assert llm_server.requests == []


@pytest.mark.parametrize("folder", THINKING)
def test_a_react_agents_thoughts_are_its_stated_plan(folder: str, llm_server: Any) -> None:
    llm_server.script({"steps": []})
    result = create_plan_adherence_scorer(judge(llm_server)).run_sync(
        traced_run(rows_of(folder, "turn1")))
    step = result.preprocess_step_result
    assert step["plan_statements"] >= 1 and "get_weather" in step["plan"]


def test_a_stated_plan_is_compared_with_the_steps_taken(llm_server: Any) -> None:
    llm_server.script({"steps": [
        {"step": "look up the weather", "planned": True, "verdict": "followed",
         "evidence": "#1 get_weather"},
        {"step": "convert to Fahrenheit", "planned": True, "verdict": "deviated_with_reason",
         "evidence": "converted 18 as asked"},
        {"step": "repeat the lookup", "planned": False, "verdict": "deviated_without_reason",
         "evidence": "no reason"}]})
    run = traced_run(with_plan(rows_of(TOOLS_FOLDER, "turn1")))
    result = create_plan_adherence_scorer(judge(llm_server), scale=10).run_sync(run)
    assert result.score == 5.0
    assert result.preprocess_step_result["plan"] == PLAN
    assert result.preprocess_step_result["tool_calls"] == 2
    prompt = prompt_of(llm_server.requests[0])
    assert f"The plan the agent stated (in order, as written):\n{PLAN}" in prompt
    assert '#2 convert_temperature(args: {"celsius": 18}) → result: {"fahrenheit": 64.4}' in prompt
    assert "What is the weather in Paris right now, in Fahrenheit?" in prompt
    assert result.reason is not None and result.reason.startswith("1 of 2 planned steps")
    assert_recorded(result, ["analyze"])


def test_in_the_catalogue() -> None:
    scorer = CATALOGUE["plan-adherence-scorer"]("openai/gpt-4o-mini")
    assert (scorer.id, scorer.type) == ("plan-adherence-scorer", "agent")
