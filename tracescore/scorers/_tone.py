"""``create_tone_scorer``: does the output keep one tone, or the tone of a reference text?

Sentiment comes from VADER (``vaderSentiment``, its lexicon bundled): the compound score of a
text, from -1 (negative) to 1 (positive), with negation ("not good"), intensifiers and
punctuation taken into account. Mastra uses the ``sentiment`` package's AFINN ``comparative``
(word scores summed, divided by the number of words); the formulas are the same, the sentiment
numbers are not, so scores differ from Mastra's, mostly lower where tones differ.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tracescore.scoring import Scorer

from ._code_scorer import text_code_scorer
from ._results import Record
from ._text import joined_output_text

_SENTENCE = re.compile(r"[^.!?]+[.!?]+")


@functools.lru_cache(maxsize=1)
def _analyzer() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def sentiment(text: str) -> float:
    """The text's VADER compound sentiment, -1 to 1 (0 for an empty or neutral text)."""
    return float(_analyzer().polarity_scores(text)["compound"])


def tone_analysis(message: str, reference_tone: str | None = None) -> Record:
    """The tone scorer's numbers for one message (see ``create_tone_scorer``)."""
    response = sentiment(message)
    if reference_tone:
        reference = sentiment(reference_tone)
        difference = abs(response - reference)
        return Record(score=max(0.0, 1.0 - difference), response_sentiment=response,
                      reference_sentiment=reference, difference=difference)
    sentences = _SENTENCE.findall(message) or [message]
    values = [sentiment(s) for s in sentences]
    average = sum(values) / len(values)
    variance = sum((v - average) ** 2 for v in values) / len(values)
    return Record(score=max(0.0, 1.0 - variance), avg_sentiment=average,
                  sentiment_variance=variance)


def create_tone_scorer(*, reference_tone: str | None = None) -> Scorer[Any, Any]:
    """Score tone: agreement with ``reference_tone``, or steadiness across sentences (0-1).

    The message is the output messages' texts joined with ``", "``.

    - With ``reference_tone``: ``max(0, 1 - |sentiment(message) - sentiment(reference)|)``.
    - Without: the message is split into sentences (runs ending in ``.``, ``!`` or ``?``; the
      whole message when there are none) and the score is
      ``max(0, 1 - population variance of the sentence sentiments)``.

    Sentiment is VADER's compound score (-1 to 1). Not rounded.
    ``preprocess_step_result``: ``score`` and ``response_sentiment, reference_sentiment,
    difference`` (with a reference) or ``avg_sentiment, sentiment_variance`` (without).
    """

    if reference_tone is not None and not isinstance(reference_tone, str):
        raise TypeError(f"reference_tone is a text whose tone the output should match, got "
                        f"{type(reference_tone).__name__}")

    def preprocess(run: Any) -> Record:
        return tone_analysis(joined_output_text(run.output), reference_tone)

    return text_code_scorer(
        "tone-scorer", "Whether the output keeps a steady tone, or the tone of a reference text",
        name="Tone Scorer", preprocess=preprocess, score=lambda pre, _: pre["score"])
