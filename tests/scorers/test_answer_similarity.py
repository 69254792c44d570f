"""create_answer_similarity_scorer: the score formula and a run against the scripted judge."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge

from tracescore.scorers import create_answer_similarity_scorer
from tracescore.scorers._answer_similarity import DEFAULTS, Matches, answer_similarity_score
from tracescore.scoring import ScorerRunError
from tracescore.testing import error


def matches(*types: str, extra: int = 0, contradictions: int = 0) -> Matches:
    return Matches.model_validate({
        "matches": [{"ground_truth_unit": f"u{i}", "match_type": t} for i, t in enumerate(types)],
        "extra_in_output": [f"e{i}" for i in range(extra)],
        "contradictions": [f"c{i}" for i in range(contradictions)],
    })


@pytest.mark.parametrize(("analysis", "expected"), [
    (matches("exact", "exact"), 1.0),                        # (1.2 + 1.2) / (2 × 1.2)
    (matches("semantic"), 0.8 / 1.2),
    (matches("partial"), 0.4 / 1.2),
    (matches("missing", "exact"), (1.2 - 0.15) / 2.4),
    (matches("missing"), 0.0),                               # negative → clamped to 0
    (matches(" EXACT ", "Semantic."), (1.2 + 0.8) / 2.4),    # words trimmed and lower-cased
    (matches("exact", "similar"), 1.2 / 2.4),                # unknown word counts 0, in the total
    (matches("exact", contradictions=1), 1.0 - 0.3),
    (matches("exact", extra=2), 1.0 - 0.1),
    (matches("exact", extra=9), 1.0 - 0.2),                  # extra penalty capped at 0.2
    (matches(), 0.0),
])
def test_score_formula(analysis: Matches, expected: float) -> None:
    assert answer_similarity_score(analysis, DEFAULTS) == pytest.approx(expected)


def test_no_ground_truth_scores_zero_and_options_change_the_formula() -> None:
    assert answer_similarity_score(matches("exact"), DEFAULTS, has_ground_truth=False) == 0.0
    harsh = {**DEFAULTS, "contradiction_penalty": 1.0, "exact_match_bonus": 0.0}
    assert answer_similarity_score(matches("exact", "semantic"), harsh) == pytest.approx(0.9)
    assert answer_similarity_score(matches("exact", contradictions=1), harsh) == 0.0


UNITS = {"output_units": ["Paris is the capital", "It has 2 million people"],
         "ground_truth_units": ["Paris is the capital of France", "Population about 2.1 million"]}
ANALYSIS = {"matches": [
    {"ground_truth_unit": "Paris is the capital of France", "output_unit": "Paris is the capital",
     "match_type": "semantic", "explanation": "same"},
    {"ground_truth_unit": "Population about 2.1 million", "output_unit": "It has 2 million people",
     "match_type": "partial", "explanation": "rounded"}],
    "extra_in_output": [], "contradictions": []}


def test_run_against_the_judge(llm_server: Any) -> None:
    llm_server.script(UNITS, ANALYSIS, "The score is 0.5 because the population is rounded.")
    scorer = create_answer_similarity_scorer(judge(llm_server), options={"scale": 10})
    result = scorer.run_sync(input="Tell me about Paris",
                             output="Paris is the capital. It has 2 million people.",
                             ground_truth={"capital": "Paris", "population": 2.1e6})
    assert result.score == 5.0  # (0.8 + 0.4) / 2.4 × 10
    assert scorer.id == "answer-similarity-scorer" and scorer.name == "Answer Similarity Scorer"
    assert '"capital": "Paris"' in (result.preprocess_prompt or "")  # non-string → JSON
    assert "Population about 2.1 million" in (result.analyze_prompt or "")
    assert result.reason == "The score is 0.5 because the population is rounded."
    assert_recorded(result, ["preprocess", "analyze", "generate_reason"])


def test_missing_ground_truth(llm_server: Any) -> None:
    scorer = create_answer_similarity_scorer(judge(llm_server))
    needs = "Answer Similarity Scorer requires ground truth to be provided"
    with pytest.raises(ScorerRunError, match=needs) as info:
        scorer.run_sync(input="q", output="a")
    assert info.value.failed_step == "preprocess" and llm_server.requests == []
    llm_server.script({"output_units": ["a"], "ground_truth_units": []},
                      {"matches": [], "extra_in_output": ["a"], "contradictions": []}, "r")
    lenient = create_answer_similarity_scorer(judge(llm_server), require_ground_truth=False)
    result = lenient.run_sync(input="q", output="a")
    assert result.score == 0
    assert "(no reference answer)" in (result.preprocess_prompt or "")


def test_failed_step_keeps_the_snapshot(llm_server: Any) -> None:
    llm_server.script(UNITS, error(503, "overloaded"))
    with pytest.raises(ScorerRunError) as info:
        create_answer_similarity_scorer(judge(llm_server)).run_sync(
            input="q", output="a", ground_truth="Paris")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.preprocess_step_result == UNITS
    assert info.value.result.judge["analyze"].executions[0].status == "failed"


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="semantic_threshold must be a number of at least 0"):
        create_answer_similarity_scorer("openai/x", semantic_threshold=-1)
    with pytest.raises(TypeError, match="require_ground_truth must be True or False"):
        create_answer_similarity_scorer("openai/x", options={"requireGroundTruth": "yes"})
    with pytest.raises(TypeError, match="unknown option"):
        create_answer_similarity_scorer("openai/x", options={"threshold": 1})
