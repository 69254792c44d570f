"""Context relevance, precision and recall: formulas, runs, construction errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge

from tracescore.scorers import (
    create_context_precision_scorer,
    create_context_recall_scorer,
    create_context_relevance_scorer_llm,
)
from tracescore.scorers._context_precision import PieceVerdicts, context_precision_score
from tracescore.scorers._context_recall import Attributions, context_recall_score
from tracescore.scorers._context_relevance import ContextEvaluations, context_relevance_score
from tracescore.scorers._schemas import Claims
from tracescore.scoring import ScorerRunError
from tracescore.testing import error

CONTEXT = ["Oslo is the capital of Norway.", "Norway uses the krone.", "Cats purr."]


def rated(*levels: tuple[str, bool], missing: int = 0) -> ContextEvaluations:
    return ContextEvaluations.model_validate({
        "evaluations": [{"context_index": i, "relevance_level": lvl, "was_used": used}
                        for i, (lvl, used) in enumerate(levels)],
        "missing_context": [f"m{i}" for i in range(missing)]})


@pytest.mark.parametrize(("analysis", "has_context", "expected"), [
    (rated(), False, 1.0),
    (rated(), True, 1.0),
    (rated(missing=1), True, 0.0),
    (rated(("high", True), ("medium", True), ("low", False), ("none", False)), True,
     (1 + 0.7 + 0.3) / 4),
    (rated(("high", False), ("high", True)), True, 1.0 - 0.1),
    (rated(("High ", True), ("irrelevant", True)), True, 0.5),  # unknown level weighs 0
    (rated(("high", True), missing=2), True, 1.0 - 0.3),
    (rated(("high", True), missing=9), True, 0.5),              # missing penalty capped at .5
    (rated(("none", False), missing=9), True, 0.0),             # never below 0
])
def test_relevance_formula(analysis: ContextEvaluations, has_context: bool,
                           expected: float) -> None:
    assert context_relevance_score(analysis, has_context=has_context) == pytest.approx(expected)


def pieces(*pairs: tuple[int, str]) -> PieceVerdicts:
    return PieceVerdicts.model_validate(
        {"verdicts": [{"context_index": i, "verdict": v} for i, v in pairs]})


@pytest.mark.parametrize(("verdicts", "expected"), [
    (pieces(), 0.0),
    (pieces((0, "no"), (1, "no")), 0.0),
    (pieces((0, "yes"), (1, "yes")), 1.0),
    (pieces((0, "yes"), (1, "no"), (2, "yes")), (1 + 2 / 3) / 2),
    (pieces((2, "yes"), (0, "no"), (1, " YES ")), (1 / 2 + 2 / 3) / 2),  # sorted by index
])
def test_precision_formula(verdicts: PieceVerdicts, expected: float) -> None:
    assert context_precision_score(verdicts) == pytest.approx(expected)


def test_recall_formula() -> None:
    claims = Claims(claims=["a", "b", "c", "d"])
    found = Attributions.model_validate({"verdicts": [{"verdict": w} for w in
                                                      ("yes", "Yes", "no", "unsure")]})
    assert context_recall_score(claims, found) == 0.5
    assert context_recall_score(claims, found, has_ground_truth=False) == 0.0
    assert context_recall_score(Claims(claims=[]), found) == 0.0
    too_many = Attributions.model_validate({"verdicts": [{"verdict": "yes"}] * 6})
    assert context_recall_score(claims, too_many) == 1.0


def test_relevance_run_with_an_extractor(llm_server: Any) -> None:
    llm_server.script(
        {"evaluations": [
            {"context_index": 0, "context_piece": CONTEXT[0], "relevance_level": "high",
             "was_used": True, "reasoning": "answers it"},
            {"context_index": 1, "context_piece": CONTEXT[1], "relevance_level": "low",
             "was_used": False, "reasoning": "aside"}],
         "missing_context": [], "overall_assessment": "good"},
        "The score is 0.65 because one piece is barely relevant.")
    scorer = create_context_relevance_scorer_llm(
        judge(llm_server), context_extractor=lambda i, o: CONTEXT[:2],
        options={"penalties": {"unusedHighRelevanceContext": 0.2}})
    result = scorer.run_sync(input="What is the capital of Norway?", output="Oslo.")
    assert result.score == 0.65
    assert (scorer.id, scorer.name) == ("context-relevance-scorer", "Context Relevance (LLM)")
    assert f"[1] {CONTEXT[1]}" in (result.analyze_prompt or "")
    assert_recorded(result, ["analyze", "generate_reason"])


def test_relevance_with_empty_extracted_context_scores_the_scale(llm_server: Any) -> None:
    llm_server.script({"evaluations": [], "missing_context": ["everything"]}, "r")
    scorer = create_context_relevance_scorer_llm(judge(llm_server), scale=5,
                                                 context_extractor=lambda i, o: [])
    assert scorer.run_sync(input="q", output="a").score == 5


def test_precision_run(llm_server: Any) -> None:
    llm_server.script({"verdicts": [{"context_index": 0, "verdict": "no", "reason": "r"},
                                    {"context_index": 1, "verdict": "yes", "reason": "r"}]},
                      "The score is 0.5 because the useful piece came second.")
    scorer = create_context_precision_scorer(judge(llm_server), context=CONTEXT[1::-1])
    result = scorer.run_sync(input="Which currency?", output="The krone.",
                             ground_truth="Norway uses the krone.")
    assert result.score == 0.5
    assert "Reference answer:\nNorway uses the krone." in (result.analyze_prompt or "")
    assert_recorded(result, ["analyze", "generate_reason"])


def test_precision_without_resolved_context_fails(llm_server: Any) -> None:
    scorer = create_context_precision_scorer(judge(llm_server),
                                             context_extractor=lambda i, o: [])
    with pytest.raises(ScorerRunError, match="No context available for evaluation"):
        scorer.run_sync(input="q", output="a")
    assert llm_server.requests == []


def test_recall_run(llm_server: Any) -> None:
    llm_server.script({"claims": ["Oslo is the capital.", "The krone is the currency.",
                                  "Norway has fjords."]},
                      {"verdicts": [{"claim": "Oslo is the capital.", "verdict": "yes"},
                                    {"claim": "The krone is the currency.", "verdict": "yes"},
                                    {"claim": "Norway has fjords.", "verdict": "no"}]},
                      "The score is 0.67 because fjords are not in the context.")
    scorer = create_context_recall_scorer(judge(llm_server), context=CONTEXT)
    result = scorer.run_sync(input="Tell me about Norway", output="...",
                             ground_truth="Oslo is the capital; the krone is the currency; "
                                          "Norway has fjords.")
    assert result.score == 0.67
    assert "Norway has fjords." in (result.preprocess_prompt or "")
    assert CONTEXT[2] in (result.analyze_prompt or "")
    assert_recorded(result, ["preprocess", "analyze", "generate_reason"])


def test_recall_without_ground_truth_scores_zero(llm_server: Any) -> None:
    llm_server.script({"claims": ["invented"]}, {"verdicts": [{"verdict": "yes"}]}, "r")
    result = create_context_recall_scorer(judge(llm_server), context=CONTEXT).run_sync(
        input="q", output="a")
    assert result.score == 0


def test_recall_judge_failure(llm_server: Any) -> None:
    llm_server.script({"claims": ["a"]}, error(500))
    with pytest.raises(ScorerRunError) as info:
        create_context_recall_scorer(judge(llm_server), context=CONTEXT).run_sync(
            input="q", output="a", ground_truth="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.preprocess_step_result == {"claims": ["a"]}


@pytest.mark.parametrize(("factory", "label"), [
    (create_context_relevance_scorer_llm, "Context Relevance"),
    (create_context_precision_scorer, "Context Precision"),
    (create_context_recall_scorer, "Context Recall"),
])
def test_construction_errors(factory: Any, label: str) -> None:
    with pytest.raises(ValueError, match=f"^Either context or contextExtractor is required for "
                                         f"{label} scoring$"):
        factory("openai/x")
    with pytest.raises(ValueError, match="^Context array cannot be empty if provided$"):
        factory("openai/x", context=[])
    assert factory("openai/x", options={"contextExtractor": lambda i, o: []}).id.startswith(
        "context-")


def test_penalty_errors() -> None:
    with pytest.raises(TypeError, match="penalties: unknown key 'unused'"):
        create_context_relevance_scorer_llm("openai/x", context=CONTEXT,
                                            penalties={"unused": 0.1})
