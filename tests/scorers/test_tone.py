"""create_tone_scorer: reference agreement and sentence steadiness over VADER sentiment."""

from __future__ import annotations

import pytest
from mastra_shapes import message

from tracescore.scorers import create_tone_scorer
from tracescore.scorers._tone import sentiment


def test_vader_reads_negation() -> None:
    assert sentiment("This is not good.") < 0 < sentiment("This is good.")
    assert sentiment("") == 0.0
    assert sentiment("The sky is blue.") == 0.0


def test_neutral_sentences_are_steady() -> None:
    result = create_tone_scorer().run_sync(input="q", output=[message("The sky is blue."),
                                                              message("The grass is green.")])
    assert result.score == 1.0
    assert result.preprocess_step_result == {"score": 1.0, "avg_sentiment": 0.0,
                                             "sentiment_variance": 0.0}


def test_mixed_sentences_score_one_minus_variance() -> None:
    text = "I love it! I hate it."
    a, b = sentiment("I love it!"), sentiment(" I hate it.")
    average = (a + b) / 2
    variance = ((a - average) ** 2 + (b - average) ** 2) / 2
    result = create_tone_scorer().run_sync(input="q", output=text)
    assert a > 0 > b
    assert result.preprocess_step_result["avg_sentiment"] == pytest.approx(average)
    assert result.preprocess_step_result["sentiment_variance"] == pytest.approx(variance)
    assert result.score == pytest.approx(1 - variance)


def test_no_sentence_end_means_one_sentence() -> None:
    result = create_tone_scorer().run_sync(input="q", output="I love it and I hate it")
    assert result.preprocess_step_result["sentiment_variance"] == 0.0
    assert result.score == 1.0


def test_reference_tone() -> None:
    happy = create_tone_scorer(reference_tone="What a wonderful, happy day!")
    close = happy.run_sync(input="q", output="I am glad, this is great!")
    far = happy.run_sync(input="q", output="This is terrible and I am sad.")
    pre = close.preprocess_step_result
    assert pre["difference"] == pytest.approx(abs(pre["response_sentiment"]
                                                  - pre["reference_sentiment"]))
    assert close.score == pytest.approx(1 - pre["difference"])
    assert close.score > far.score


def test_opposite_tones_clip_at_zero() -> None:
    scorer = create_tone_scorer(reference_tone="I love this wonderful amazing day!")
    result = scorer.run_sync(input="q", output="I hate this horrible awful day!")
    assert result.preprocess_step_result["difference"] > 1
    assert result.score == 0.0


def test_empty_output() -> None:
    assert create_tone_scorer().run_sync(input="q", output="").score == 1.0
    assert create_tone_scorer(reference_tone="Great!").run_sync(
        input="q", output=[]).score == pytest.approx(1 - sentiment("Great!"))


def test_reference_tone_must_be_text() -> None:
    with pytest.raises(TypeError, match="reference_tone is a text"):
        create_tone_scorer(reference_tone=0.5)  # type: ignore[arg-type]
