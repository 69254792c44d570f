"""create_trajectory_accuracy_scorer_llm: formula, formatting, a run, errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge
from mastra_shapes import step

from tracescore.model import Trajectory
from tracescore.scorers import create_trajectory_accuracy_scorer_llm
from tracescore.scorers._trajectory_llm import (
    TrajectoryAnalysis,
    format_steps,
    trajectory_accuracy_score,
)
from tracescore.scoring import ScorerRunError
from tracescore.testing import error


def analysis(*evals: tuple[bool, bool], missing: int = 0, extra: int = 0) -> TrajectoryAnalysis:
    return TrajectoryAnalysis.model_validate({
        "step_evaluations": [{"step_name": f"s{i}", "was_necessary": n, "was_in_order": o}
                             for i, (n, o) in enumerate(evals)],
        "missing_steps": [f"m{i}" for i in range(missing)],
        "extra_steps": [f"e{i}" for i in range(extra)]})


@pytest.mark.parametrize(("value", "expected"), [
    (analysis(), 1.0),
    (analysis(missing=1), 0.0),
    (analysis(extra=1), 0.5),
    (analysis(missing=1, extra=1), 0.0),
    (analysis((True, True), (True, True)), 1.0),  # a perfect path is 1 (Mastra: 0.9)
    (analysis((True, False), (False, True)), 0.7 * 0.5 + 0.3 * 0.5),
    (analysis((True, True), missing=1), 1.0 - 0.1 * 1 / 2),
    (analysis((False, False), missing=3), 0.0),
])
def test_formula(value: TrajectoryAnalysis, expected: float) -> None:
    assert trajectory_accuracy_score(value) == pytest.approx(expected)


TRAJECTORY = Trajectory.model_validate({
    "steps": [
        step("search", tool_args={"q": "flights"}, tool_result={"found": 3}),
        step("planner", "agent_run", children=[
            step("gpt-4o", "model_generation", model_id="gpt-4o"),
            step("book", tool_args={"id": 7})]),
    ],
    "raw_output": [{"role": "assistant", "content": "Booked flight 7."}],
})


def test_format_steps() -> None:
    assert format_steps(TRAJECTORY.steps) == [
        '1. [tool_call] search (args: {"q": "flights"}, result: {"found": 3})',
        "2. [agent_run] planner",
        "  1. [model_generation] gpt-4o (model: gpt-4o)",
        '  2. [tool_call] book (args: {"id": 7})',
    ]


def test_run_with_an_expected_trajectory(llm_server: Any) -> None:
    llm_server.script(
        {"step_evaluations": [
            {"step_name": "search", "was_necessary": True, "was_in_order": True, "reasoning": "r"},
            {"step_name": "planner", "was_necessary": True, "was_in_order": False,
             "reasoning": "r"}],
         "missing_steps": [], "extra_steps": [], "overall_assessment": "ok"},
        "The score is 0.85 because planning came late.")
    scorer = create_trajectory_accuracy_scorer_llm(judge(llm_server),
                                                   expected_trajectory=["search", "book"])
    result = scorer.run_sync(input="Book me a flight", output=TRAJECTORY)
    assert result.score == 0.85
    assert (scorer.id, scorer.name, scorer.type) == (
        "llm-trajectory-accuracy-scorer", "Trajectory Accuracy (LLM)", "trajectory")
    assert result.preprocess_step_result["step_count"] == 2
    prompt = result.analyze_prompt or ""
    assert "  2. [tool_call] book" in prompt
    assert "Expected path:\n1. search\n2. book" in prompt
    assert "Booked flight 7." in prompt
    assert_recorded(result, ["analyze", "generate_reason"])


def test_run_expectation_and_no_expectation(llm_server: Any) -> None:
    llm_server.script({"step_evaluations": [], "missing_steps": []}, "r",
                      {"step_evaluations": [], "missing_steps": ["pay"]}, "r")
    scorer = create_trajectory_accuracy_scorer_llm(judge(llm_server))
    plain = scorer.run_sync(input="q", output={"steps": []})
    assert plain.score == 1.0
    assert "Expected path" not in (plain.analyze_prompt or "")
    assert "(no steps taken)" in (plain.analyze_prompt or "")
    from_run = scorer.run_sync(input="q", output=TRAJECTORY,
                               expected_trajectory={"steps": [{"name": "pay"}]})
    assert from_run.score == 0.0
    assert "Expected path:\n1. pay" in (from_run.analyze_prompt or "")


def test_failed_step(llm_server: Any) -> None:
    llm_server.script(error(500))
    with pytest.raises(ScorerRunError) as info:
        create_trajectory_accuracy_scorer_llm(judge(llm_server)).run_sync(
            input="q", output=TRAJECTORY)
    assert info.value.failed_step == "analyze"
    assert info.value.completed_steps == ["preprocess"]
    assert info.value.result is not None
    assert info.value.result.judge["analyze"].executions[0].status == "failed"


def test_construction_errors() -> None:
    with pytest.raises(TypeError, match="an expected trajectory must be"):
        create_trajectory_accuracy_scorer_llm("openai/x", expected_trajectory=42)
    with pytest.raises(TypeError, match="unknown option"):
        create_trajectory_accuracy_scorer_llm("openai/x", options={"scale": 2})
