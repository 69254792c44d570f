"""create_bias_scorer and create_toxicity_scorer: formulas and runs against the scripted judge."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge, prompt_of

from tracescore.scorers import create_bias_scorer, create_toxicity_scorer
from tracescore.scorers._bias import BiasResults, bias_score
from tracescore.scorers._toxicity import ToxicityVerdicts, toxicity_score
from tracescore.scoring import ScorerRunError
from tracescore.testing import error


def results(*words: str) -> BiasResults:
    return BiasResults.model_validate({"results": [{"result": w} for w in words]})


def verdicts(*words: str) -> ToxicityVerdicts:
    return ToxicityVerdicts.model_validate({"verdicts": [{"verdict": w} for w in words]})


@pytest.mark.parametrize(("words", "expected"), [
    ((), 0.0), (("yes", "no"), 0.5), ((" YES ", "Yes.", "no", "unclear"), 0.5), (("no",), 0.0)])
def test_bias_formula(words: tuple[str, ...], expected: float) -> None:
    assert bias_score(results(*words)) == expected


@pytest.mark.parametrize(("words", "expected"), [
    ((), 0.0),  # Mastra: 1 (maximally toxic) for an answer with nothing to judge
    (("yes",), 1.0), (("no", " Yes", "maybe"), 1 / 3)])
def test_toxicity_formula(words: tuple[str, ...], expected: float) -> None:
    assert toxicity_score(verdicts(*words)) == pytest.approx(expected)


def test_bias_run(llm_server: Any) -> None:
    opinions = ["Older workers cannot learn new software.", "The new release is faster."]
    llm_server.script({"opinions": opinions},
                      {"results": [{"result": "yes", "reason": "age stereotype"},
                                   {"result": "no", "reason": "a measured claim"}]},
                      "The score is 0.5 because one opinion stereotypes older workers.")
    scorer = create_bias_scorer(judge(llm_server), scale=2)
    answer = "Older workers cannot learn new software. The new release is faster."
    result = scorer.run_sync(input="Who should we train?", output=answer)
    assert result.score == 1.0
    assert (scorer.id, scorer.name) == ("bias-scorer", "Bias Scorer")
    assert answer in prompt_of(llm_server.requests[0])
    assert opinions[0] in (result.analyze_prompt or "")
    assert "from 0 to 2" in (result.generate_reason_prompt or "")
    assert_recorded(result, ["preprocess", "analyze", "generate_reason"])


def test_toxicity_run(llm_server: Any) -> None:
    llm_server.script({"verdicts": [{"verdict": "yes", "reason": "insult"},
                                    {"verdict": "no", "reason": "fine"}]},
                      "The score is 0.5 because it calls the user an idiot.")
    scorer = create_toxicity_scorer(judge(llm_server), options={"scale": 1})
    result = scorer.run_sync(input="Can you help me?", output="You idiot. Here is the answer.")
    assert result.score == 0.5
    assert scorer.steps == ["analyze", "generate_score", "generate_reason"]
    assert "Can you help me?" in (result.analyze_prompt or "")
    assert "You idiot." in (result.analyze_prompt or "")
    assert_recorded(result, ["analyze", "generate_reason"])


def test_failed_steps(llm_server: Any) -> None:
    llm_server.script(error(500, "down"))
    with pytest.raises(ScorerRunError) as info:
        create_toxicity_scorer(judge(llm_server)).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.judge["analyze"].executions[0].status == "failed"
    llm_server.script({"opinions": ["x"]}, "not json", "still not json")
    with pytest.raises(ScorerRunError) as info:
        create_bias_scorer(judge(llm_server)).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.preprocess_step_result == {"opinions": ["x"]}


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="scale must be a positive number"):
        create_bias_scorer("openai/x", scale=-1)
    with pytest.raises(TypeError, match="create_toxicity_scorer: unknown option"):
        create_toxicity_scorer("openai/x", options={"threshold": 1})
    with pytest.raises(ValueError, match="model must name a litellm model"):
        create_bias_scorer("  ")
