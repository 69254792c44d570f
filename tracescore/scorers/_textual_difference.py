"""``create_textual_difference_scorer``: how much of the input text the output keeps, by
characters (rapidfuzz's longest common subsequence)."""

from __future__ import annotations

from typing import Any

from tracescore.scoring import Scorer

from ._code_scorer import text_code_scorer
from ._results import Record
from ._text import joined_input_text, joined_output_text


def lcs_ratio(first: str, second: str) -> float:
    """``2 * LCS / (len(first) + len(second))`` over characters: 1 for equal strings (two empty
    ones too), 0 when only one is empty. Case- and whitespace-sensitive."""
    from rapidfuzz.distance import Indel

    if first == second:
        return 1.0
    return float(Indel.normalized_similarity(first, second))


def word_changes(first: str, second: str) -> int:
    """How many runs of words were inserted, deleted or replaced to turn ``first`` into
    ``second`` (words split on whitespace)."""
    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.opcodes(first.split(), second.split())
    return sum(1 for op in ops if op.tag != "equal")


def create_textual_difference_scorer() -> Scorer[Any, Any]:
    """Score how close the output text is to the input text, character by character (0-1).

    Texts are the messages joined with ``", "``. The ratio is ``2 * LCS / (len_in + len_out)``
    with a character-level longest common subsequence; the score is the ratio, not rounded.

    ``preprocess_step_result``: ``ratio``; ``changes`` (word runs inserted, deleted or
    replaced); ``length_diff`` = ``|len_in - len_out| / max(len_in, len_out)`` (0 for two empty
    texts); ``confidence`` = ``1 - length_diff``.
    """

    def preprocess(run: Any) -> Record:
        first, second = joined_input_text(run.input), joined_output_text(run.output)
        longest = max(len(first), len(second))
        length_diff = abs(len(first) - len(second)) / longest if longest else 0.0
        return Record(ratio=lcs_ratio(first, second), changes=word_changes(first, second),
                      length_diff=length_diff, confidence=1.0 - length_diff)

    return text_code_scorer(
        "textual-difference-scorer",
        "How close the output text is to the input text, character by character",
        name="Textual Difference Scorer", preprocess=preprocess,
        score=lambda pre, _: pre["ratio"])
