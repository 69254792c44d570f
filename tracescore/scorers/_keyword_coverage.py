"""``create_keyword_coverage_scorer``: how many of the input's keywords the output uses."""

from __future__ import annotations

import functools
import re
from typing import Any

from tracescore.scoring import Scorer

from ._code_scorer import text_code_scorer
from ._results import Record
from ._text import joined_input_text, joined_output_text

_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
"""Runs of letters, with inner apostrophes or hyphens (``don't``, ``state-of-the-art``)."""


@functools.lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """The English stop-word list of the ``stop-words`` package (bundled, about 1,300 words)."""
    from stop_words import get_stop_words

    return frozenset(w.lower() for w in get_stop_words("en"))


def extract_keywords(text: str) -> list[str]:
    """The text's keywords in order of first use: words lower-cased, digits dropped, stop
    words removed, duplicates removed."""
    stop = english_stop_words()
    keywords: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower().replace("’", "'")):
        if token not in stop:
            keywords[token] = None
    return list(keywords)


def match_keywords(pre: Any) -> Record:
    """``total_keywords, matched_keywords, missing_keywords`` of the reference keywords."""
    response = set(pre["response_keywords"])
    reference = pre["reference_keywords"]
    return Record(total_keywords=len(reference),
                  matched_keywords=sum(1 for k in reference if k in response),
                  missing_keywords=[k for k in reference if k not in response])


def keyword_coverage(counts: Any) -> float:
    """matched / total; no reference keywords scores 1."""
    if not counts["total_keywords"]:
        return 1.0
    return float(counts["matched_keywords"]) / float(counts["total_keywords"])


def create_keyword_coverage_scorer() -> Scorer[Any, Any]:
    """Score the share of the input's keywords that the output uses (0-1, not rounded).

    Keywords are the words of the input (its messages joined with ``", "``) and of the output
    that are not English stop words. No input keywords scores 1 (also when the output has some,
    and when both texts are empty); an empty output against input keywords scores 0.

    ``preprocess_step_result``: ``reference_keywords, response_keywords``;
    ``analyze_step_result``: ``total_keywords, matched_keywords, missing_keywords``.
    """

    def preprocess(run: Any) -> Record:
        return Record(reference_keywords=extract_keywords(joined_input_text(run.input)),
                      response_keywords=extract_keywords(joined_output_text(run.output)))

    return text_code_scorer(
        "keyword-coverage-scorer", "How many of the input's keywords the output uses",
        name="Keyword Coverage Scorer", preprocess=preprocess, analyze=match_keywords,
        score=lambda _, counts: keyword_coverage(counts))
