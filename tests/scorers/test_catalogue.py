"""CATALOGUE: every prebuilt scorer by id, each factory building a scorer of that id."""

from __future__ import annotations

from typing import Any

import pytest

import tracescore
import tracescore.scorers as scorers
from tracescore.scorers import CATALOGUE

MODEL = "openai/gpt-4o-mini"
# the arguments each factory needs at the least (the judge scorers: a model)
ARGS: dict[str, dict[str, Any]] = {
    "check-called-tool": {"tool_name": "search"},
    "check-did-not-call": {"tool_name": "search"},
    "check-equals": {"expected": "x"},
    "check-excludes": {"unwanted": "x"},
    "check-includes": {"expected": "x"},
    "check-matches": {"pattern": "x"},
    "check-max-tool-calls": {"n": 3},
    "check-similarity": {"expected": "x"},
    "check-tool-order": {"tool_names": ["a", "b"]},
    "code-tool-call-accuracy-scorer": {"expected_tool": "search"},
    "multi-turn-judge-scorer": {"model": MODEL, "criterion": "The agent answered."},
    "context-precision-scorer": {"model": MODEL, "context": ["c"]},
    "context-recall-scorer": {"model": MODEL, "context": ["c"]},
    "context-relevance-scorer": {"model": MODEL, "context": ["c"]},
    "noise-sensitivity-scorer": {"model": MODEL, "baseline_response": "b", "noisy_query": "n"},
    "trace-judge": {"model": MODEL, "criterion": "Every tool call succeeded."},
    # a cascade of two LLM scorers: no judge of its own (its two scorers have theirs)
    "cascade": {"cheap": CATALOGUE["bias-scorer"](model=MODEL),
                "expensive": CATALOGUE["toxicity-scorer"](model=MODEL)},
}
LLM_IDS = {
    "answer-relevancy-scorer", "answer-similarity-scorer", "bias-scorer",
    "context-precision-scorer", "context-recall-scorer", "context-relevance-scorer",
    "faithfulness-scorer", "hallucination-scorer", "llm-tool-call-accuracy-scorer",
    "llm-trajectory-accuracy-scorer", "multi-turn-judge-scorer", "noise-sensitivity-scorer",
    "prompt-alignment-scorer", "rubric-scorer", "summarization-scorer", "toxicity-scorer",
    "goal-completion-scorer", "plan-adherence-scorer", "tool-argument-scorer", "trace-judge",
}


def test_ids_are_sorted_and_cover_the_llm_scorers() -> None:
    assert list(CATALOGUE) == sorted(CATALOGUE)
    assert LLM_IDS <= set(CATALOGUE)
    assert {"code-tool-call-accuracy-scorer", "code-trajectory-accuracy-scorer",
            "code-trajectory-scorer", "check-no-tool-errors"} <= set(CATALOGUE)
    assert {"completeness-scorer", "content-similarity-scorer", "keyword-coverage-scorer",
            "textual-difference-scorer", "tone-scorer"} <= set(CATALOGUE)


@pytest.mark.parametrize("scorer_id", sorted(CATALOGUE))
def test_each_factory_builds_a_scorer_with_its_id(scorer_id: str) -> None:
    args = ARGS.get(scorer_id, {"model": MODEL} if scorer_id in LLM_IDS else {})
    scorer = CATALOGUE[scorer_id](**args)
    assert scorer.id == scorer_id
    assert (scorer.judge is not None) == (scorer_id in LLM_IDS)


def test_every_factory_is_exported_from_the_room_and_the_package() -> None:
    for factory in CATALOGUE.values():
        if factory.__module__ == "tracescore.scorers.checks":
            continue
        name = factory.__name__
        assert getattr(scorers, name) is factory and name in scorers.__all__
        assert getattr(tracescore, name) is factory and name in tracescore.__all__


def test_lower_is_better_ids_are_catalogue_ids_that_measure_faults() -> None:
    from tracescore.scorers import CATALOGUE, LOWER_IS_BETTER

    assert LOWER_IS_BETTER <= set(CATALOGUE)
    assert {"hallucination-scorer", "bias-scorer", "toxicity-scorer"} == set(LOWER_IS_BETTER)
