"""create_content_similarity_scorer: the Dice bigram coefficient and its options, by hand."""

from __future__ import annotations

import pytest
from mastra_shapes import agent_input, message

from tracescore.scorers import create_content_similarity_scorer
from tracescore.scorers._content_similarity import dice_bigram_similarity


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("night", "nacht", 0.25),        # ni ig gh ht / na ac ch ht: 1 shared, 2*1/(5+5-2)
    ("aaaa", "aa", 0.5),             # aa x3 / aa x1: 1 shared, 2/(4+2-2)
    ("abc", "abc", 1.0),
    ("a b c", "abc", 1.0),           # whitespace removed before comparing
    ("", "", 1.0),
    ("", "ab", 0.0),
    ("a", "ab", 0.0),                # shorter than two characters
    ("ab", "cd", 0.0),
])
def test_dice_bigram_similarity(first: str, second: str, expected: float) -> None:
    assert dice_bigram_similarity(first, second) == expected


def test_agent_run_ignores_case_and_whitespace_by_default() -> None:
    scorer = create_content_similarity_scorer()
    result = scorer.run_sync(input=agent_input("Hello   World", "again"),
                             output=[message("hello world, AGAIN")])
    assert result.preprocess_step_result == {"processed_input": "hello world, again",
                                             "processed_output": "hello world, again"}
    assert result.score == 1.0
    assert result.scorer_id == "content-similarity-scorer"


def test_case_sensitive() -> None:
    scorer = create_content_similarity_scorer(ignore_case=False)
    # He el ll lo oW Wo or rl ld / he el ll lo ow wo or rl ld: 6 shared, 12/(10+10-2)
    result = scorer.run_sync(input="Hello World", output="hello world")
    assert result.score == pytest.approx(12 / 18)


def test_an_omitted_option_keeps_its_default() -> None:
    result = create_content_similarity_scorer(ignore_whitespace=False).run_sync(
        input="Hello  World ", output="hello world")
    assert result.preprocess_step_result["processed_input"] == "hello  world "
    assert result.score == 1.0   # lower-cased (default kept); the coefficient drops spaces


def test_empty_texts() -> None:
    scorer = create_content_similarity_scorer()
    assert scorer.run_sync(input="", output=[]).score == 1.0
    assert scorer.run_sync(input="some text", output="").score == 0.0
