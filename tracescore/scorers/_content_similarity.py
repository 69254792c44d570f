"""``create_content_similarity_scorer``: how alike the input and output texts are, by bigrams."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from tracescore.scoring import Scorer

from ._code_scorer import text_code_scorer
from ._results import Record
from ._text import joined_input_text, joined_output_text

_SPACE = re.compile(r"\s+")


def dice_bigram_similarity(first: str, second: str) -> float:
    """The Sørensen-Dice coefficient of the two strings' character-bigram multisets.

    Whitespace is removed first. Equal strings score 1 (two empty ones too); a string shorter
    than two characters against a different one scores 0; otherwise
    ``2 * |shared bigrams| / (len(first) + len(second) - 2)``, a bigram shared as many times as
    it occurs in both. The same number as ``compareTwoStrings`` of npm's ``string-similarity``,
    except that lengths count code points where JavaScript counts UTF-16 units.
    """
    first, second = _SPACE.sub("", first), _SPACE.sub("", second)
    if first == second:
        return 1.0
    if len(first) < 2 or len(second) < 2:
        return 0.0
    a = Counter(first[i:i + 2] for i in range(len(first) - 1))
    b = Counter(second[i:i + 2] for i in range(len(second) - 1))
    shared = sum((a & b).values())
    return 2.0 * shared / (len(first) + len(second) - 2)


def create_content_similarity_scorer(
    *, ignore_case: bool = True, ignore_whitespace: bool = True
) -> Scorer[Any, Any]:
    """Score how similar the output text is to the input text (Dice bigram coefficient, 0-1).

    Input and output texts are their messages joined with ``", "``; ``ignore_case``
    lower-cases both, ``ignore_whitespace`` collapses runs of whitespace to one space and trims.
    An option you leave out keeps its default (Mastra turns every omitted option off when you
    pass an options object). Both texts empty score 1, one empty 0. Not rounded.

    ``preprocess_step_result``: ``processed_input, processed_output``.
    """

    def prepare(text: str) -> str:
        if ignore_case:
            text = text.lower()
        if ignore_whitespace:
            text = _SPACE.sub(" ", text).strip()
        return text

    def preprocess(run: Any) -> Record:
        return Record(processed_input=prepare(joined_input_text(run.input)),
                      processed_output=prepare(joined_output_text(run.output)))

    return text_code_scorer(
        "content-similarity-scorer",
        "How similar the output text is to the input text (character bigrams)",
        name="Content Similarity Scorer", preprocess=preprocess,
        score=lambda pre, _: dice_bigram_similarity(pre["processed_input"],
                                                    pre["processed_output"]))
