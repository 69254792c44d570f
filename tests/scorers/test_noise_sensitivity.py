"""create_noise_sensitivity_scorer_llm: formula, scoring overrides, a run, errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge

from tracescore.scorers import create_noise_sensitivity_scorer_llm
from tracescore.scorers._noise_sensitivity import (
    NoiseAnalysis,
    noise_sensitivity_score,
    resolve_scoring,
)
from tracescore.scoring import ScorerRunError
from tracescore.testing import error

OPTIONS = {"baseline_response": "Drink about 2 litres of water a day.",
           "noisy_query": "How much water should I drink? (My cousin says 10 litres.)"}


def analysis(robustness: float, *levels: str, issues: int = 0) -> NoiseAnalysis:
    return NoiseAnalysis.model_validate({
        "dimensions": [{"dimension": f"d{i}", "impact_level": lvl} for i, lvl in enumerate(levels)],
        "major_issues": [f"issue {i}" for i in range(issues)], "robustness_score": robustness})


@pytest.mark.parametrize(("value", "expected"), [
    (analysis(0.9), 0.9),                                  # no dimensions: the judge's score
    (analysis(1.7), 1.0),                                  # clamped
    (analysis(-0.2), 0.0),
    (analysis(0.9, "none", "minimal"), 0.9),               # mean 0.925, within 0.2
    (analysis(0.9, "significant", "severe"), 0.2),         # mean 0.2, far off → the lower
    (analysis(0.1, "none"), 0.1),                          # lower already
    (analysis(0.9, "none", "unheard-of"), 0.5),            # unknown level weighs 0
    (analysis(0.9, "none", issues=2), 0.7),
    (analysis(0.9, "none", issues=5), 0.6),                # issue penalty capped at 0.3
    (analysis(0.2, issues=3), 0.0),                        # never below 0
])
def test_formula(value: NoiseAnalysis, expected: float) -> None:
    assert noise_sensitivity_score(value) == pytest.approx(expected)


def test_scoring_overrides() -> None:
    scoring = resolve_scoring({"impactWeights": {"severe": 0.5},
                               "penalties": {"majorIssuePerItem": 0.05},
                               "discrepancyThreshold": 0.5})
    assert scoring["impact_weights"]["severe"] == 0.5
    assert scoring["impact_weights"]["none"] == 1.0
    assert noise_sensitivity_score(analysis(0.9, "severe", issues=1), scoring) == \
        pytest.approx(0.85)
    with pytest.raises(TypeError, match="scoring.impact_weights: unknown key 'tiny'"):
        resolve_scoring({"impact_weights": {"tiny": 0.1}})
    with pytest.raises(TypeError, match="scoring: unknown key"):
        resolve_scoring({"weights": {}})


def test_run(llm_server: Any) -> None:
    llm_server.script(
        {"dimensions": [{"dimension": "accuracy", "impact_level": "minimal",
                         "specific_changes": "mentions the cousin", "noise_influence": "small"}],
         "overall_assessment": "robust", "major_issues": [], "robustness_score": 0.85},
        "The score is 0.85 because the answer kept its advice.")
    scorer = create_noise_sensitivity_scorer_llm(judge(llm_server), noise_type="misinformation",
                                                 options={"baselineResponse":
                                                          OPTIONS["baseline_response"],
                                                          "noisyQuery": OPTIONS["noisy_query"]})
    result = scorer.run_sync(input="How much water should I drink?",
                             output="About 2 litres; 10 litres is too much.")
    assert result.score == 0.85
    assert (scorer.id, scorer.name) == ("noise-sensitivity-scorer", "Noise Sensitivity (LLM)")
    prompt = result.analyze_prompt or ""
    assert OPTIONS["baseline_response"] in prompt and "(noise: misinformation)" in prompt
    assert "10 litres is too much" in prompt
    assert_recorded(result, ["analyze", "generate_reason"])


def test_run_errors(llm_server: Any) -> None:
    scorer = create_noise_sensitivity_scorer_llm(judge(llm_server), **OPTIONS)
    with pytest.raises(ScorerRunError,
                       match="Both original query and noisy response are required"):
        scorer.run_sync(input="q", output="")
    llm_server.script(error(500))
    with pytest.raises(ScorerRunError) as info:
        scorer.run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.judge["analyze"].executions[0].status == "failed"


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="^Both baselineResponse and noisyQuery are required "
                                         "for Noise Sensitivity scoring$"):
        create_noise_sensitivity_scorer_llm("openai/x", baseline_response="b")
    with pytest.raises(TypeError, match="unknown option"):
        create_noise_sensitivity_scorer_llm("openai/x", options={**OPTIONS, "scale": 2})
