"""create_keyword_coverage_scorer: keywords, coverage and the empty cases, by hand."""

from __future__ import annotations

import pytest
from mastra_shapes import agent_input, message

from tracescore.scorers import create_keyword_coverage_scorer
from tracescore.scorers._keyword_coverage import extract_keywords


def test_keywords_drop_stop_words_digits_and_repeats() -> None:
    assert extract_keywords("The quick brown fox jumps over the lazy dog near 42 rivers, "
                            "Python3 and state-of-the-art, the FOX again") == [
        "quick", "brown", "fox", "jumps", "lazy", "dog", "rivers", "python",
        "state-of-the-art"]


def test_agent_run_scores_the_matched_share() -> None:
    result = create_keyword_coverage_scorer().run_sync(
        input=agent_input("Explain photosynthesis with sunlight, water and chlorophyll"),
        output=[message("Plants turn sunlight and water into glucose.")])
    # reference: explain, photosynthesis, sunlight, water, chlorophyll -> sunlight, water used
    assert result.preprocess_step_result["reference_keywords"] == [
        "explain", "photosynthesis", "sunlight", "water", "chlorophyll"]
    assert result.analyze_step_result == {"total_keywords": 5, "matched_keywords": 2,
                                          "missing_keywords": ["explain", "photosynthesis",
                                                               "chlorophyll"]}
    assert result.score == 0.4
    assert result.scorer_id == "keyword-coverage-scorer"


@pytest.mark.parametrize(("input", "output", "expected"), [
    ("", "", 1.0),
    ("the and of", "glucose chlorophyll", 1.0),   # no reference keywords
    ("glucose", "", 0.0),
    ("Glucose!", "glucose", 1.0),
])
def test_edge_cases(input: str, output: str, expected: float) -> None:  # noqa: A002
    assert create_keyword_coverage_scorer().run_sync(input=input, output=output).score == expected
