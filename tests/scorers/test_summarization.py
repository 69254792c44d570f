"""create_summarization_scorer: the two axes, the source, a run, errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge
from mastra_shapes import message, tool_invocation

from tracescore.scorers import create_summarization_scorer
from tracescore.scorers._summarization import (
    Coverage,
    SourceJudgement,
    summarization_score,
    summary_axes,
)
from tracescore.scoring import ScorerRunError
from tracescore.testing import error


def source(supported: tuple[bool, ...], questions: int) -> SourceJudgement:
    return SourceJudgement.model_validate({
        "alignment": [{"claim": f"c{i}", "supported": s} for i, s in enumerate(supported)],
        "questions": [f"q{i}?" for i in range(questions)]})


def coverage(*answered: bool) -> Coverage:
    return Coverage.model_validate(
        {"coverage": [{"question": f"q{i}?", "answered": a} for i, a in enumerate(answered)]})


@pytest.mark.parametrize(("src", "cov", "limit", "expected"), [
    (source((True, True), 2), coverage(True, False), 10, 0.5),       # coverage is lower
    (source((True, False, False), 1), coverage(True), 10, 1 / 3),    # alignment is lower
    (source((), 3), coverage(True, True, True), 10, 0.0),            # no claims: not scorable
    (source((True,), 0), coverage(), 10, 0.0),                       # no questions
    (source((True,), 4), coverage(True, True), 10, 0.5),             # unanswered = missing
    (source((True,), 5), coverage(True, True, False, False, False), 2, 1.0),  # Q = 2
    (source((True,), 1), coverage(True, True, True), 10, 1.0),       # extra verdicts dropped
])
def test_formula(src: SourceJudgement, cov: Coverage, limit: int, expected: float) -> None:
    assert summarization_score(src, cov, limit) == pytest.approx(expected)


def test_axes() -> None:
    assert summary_axes(source((True, False), 2), coverage(True, True)) == (0.5, 1.0, True)
    assert summary_axes(source((), 2), coverage())[2] is False


DOCUMENT = ("The city council approved a new bike lane on Main Street. Construction starts in "
            "May and costs 2 million euros. Parking on the street will be removed.")


def test_run_with_the_input_as_source(llm_server: Any) -> None:
    llm_server.script(
        {"alignment": [{"claim": "A bike lane was approved.", "supported": True, "reason": "r"},
                       {"claim": "It opens in May.", "supported": False, "reason": "starts"}],
         "questions": ["What was approved?", "What does it cost?", "When does it start?"]},
        {"coverage": [{"question": "What was approved?", "answered": True, "reason": "r"},
                      {"question": "What does it cost?", "answered": False, "reason": "r"}]},
        "The score is 0.33 because the summary leaves out the cost and the start.")
    output = [message("", tool_invocations=[tool_invocation("fetch", result="doc")]),
              message("A bike lane was approved. It opens in May."), message("")]
    scorer = create_summarization_scorer(judge(llm_server), options={"maxQuestions": 5})
    result = scorer.run_sync(input=f"Summarise: {DOCUMENT}", output=output)
    assert result.score == 0.33  # min(1/2, 1/3)
    assert (scorer.id, scorer.name) == ("summarization-scorer", "Summarization Scorer")
    assert DOCUMENT in (result.preprocess_prompt or "")
    assert "up to 5 short questions" in (result.preprocess_prompt or "")
    analyze = result.analyze_prompt or ""
    assert "A bike lane was approved. It opens in May." in analyze
    assert DOCUMENT not in analyze  # the coverage judge never sees the source
    assert "0.50" in (result.generate_reason_prompt or "")
    assert_recorded(result, ["preprocess", "analyze", "generate_reason"])


def test_static_source_and_extractor(llm_server: Any) -> None:
    llm_server.script({"alignment": [], "questions": []}, {"coverage": []}, "r",
                      {"alignment": [], "questions": []}, {"coverage": []}, "r")
    result = create_summarization_scorer(judge(llm_server), source="THE SOURCE").run_sync(
        input="Summarise the attached file", output="A summary.")
    assert "THE SOURCE" in (result.preprocess_prompt or "")
    assert result.score == 0
    result = create_summarization_scorer(
        judge(llm_server), source="ignored", source_extractor=lambda i, o: "EXTRACTED").run_sync(
        input="q", output="A summary.")
    assert "EXTRACTED" in (result.preprocess_prompt or "")


def test_failed_step(llm_server: Any) -> None:
    llm_server.script({"alignment": [], "questions": ["q?"]}, error(502))
    with pytest.raises(ScorerRunError) as info:
        create_summarization_scorer(judge(llm_server)).run_sync(input="doc", output="sum")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.preprocess_step_result == {"alignment": [], "questions": ["q?"]}


def test_construction_errors() -> None:
    for bad in (0, -3):
        with pytest.raises(ValueError, match="^maxQuestions must be at least 1 for "
                                             "Summarization scoring$"):
            create_summarization_scorer("openai/x", max_questions=bad)
    with pytest.raises(ValueError, match="maxQuestions must be at least 1"):
        create_summarization_scorer("openai/x", options={"maxQuestions": 0})
