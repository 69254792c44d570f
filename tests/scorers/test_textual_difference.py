"""create_textual_difference_scorer: the character LCS ratio and its side figures, by hand."""

from __future__ import annotations

import pytest
from mastra_shapes import agent_input, message

from tracescore.scorers import create_textual_difference_scorer
from tracescore.scorers._textual_difference import lcs_ratio, word_changes


@pytest.mark.parametrize(("first", "second", "expected"), [
    ("abcde", "ace", 0.75),          # LCS ace: 2*3/(5+3)
    ("kitten", "sitting", 8 / 13),   # LCS ittn
    ("Hello", "hello", 0.8),         # case-sensitive: LCS ello
    ("a b", "ab", 0.8),              # whitespace-sensitive: LCS ab, 2*2/(3+2)
    ("same", "same", 1.0),
    ("", "", 1.0),
    ("", "text", 0.0),
    ("text", "", 0.0),
])
def test_lcs_ratio(first: str, second: str, expected: float) -> None:
    assert lcs_ratio(first, second) == pytest.approx(expected)


def test_word_changes() -> None:
    assert word_changes("the cat sat", "the dog sat down") == 2   # one replace, one insert
    assert word_changes("a b c", "a b c") == 0
    assert word_changes("", "new words") == 1


def test_agent_run() -> None:
    result = create_textual_difference_scorer().run_sync(
        input=agent_input("the cat sat"), output=[message("the dog sat down")])
    pre = result.preprocess_step_result
    # "the cat sat" (11) and "the dog sat down" (16) share "the " + " sat": LCS 8 -> 16/27
    assert pre["ratio"] == pytest.approx(16 / 27)
    assert result.score == pre["ratio"]
    assert pre["changes"] == 2
    assert pre["length_diff"] == pytest.approx(5 / 16)
    assert pre["confidence"] == pytest.approx(11 / 16)
    assert result.scorer_id == "textual-difference-scorer"


def test_empty_texts() -> None:
    scorer = create_textual_difference_scorer()
    both = scorer.run_sync(input="", output="")
    assert both.score == 1.0 and both.preprocess_step_result["length_diff"] == 0.0
    assert scorer.run_sync(input="words", output=[]).score == 0.0
