"""The pytest helpers pass on good results and fail with messages naming the scorer, its
average and the items that pulled it down."""

from __future__ import annotations

import pytest
from evals_helpers import contains, fixed, matches_ground_truth

from tracescore.evals import AgentScorerConfig, EvalResult, run_evals
from tracescore.testing import (
    assert_passes_gates,
    assert_passes_thresholds,
    assert_score_above,
    assert_verdict,
)

DATA = [
    {"input": "Paris", "ground_truth": "PARIS"},
    {"input": "Rome", "ground_truth": "ROMA"},
    {"input": "Oslo", "ground_truth": "OSLO"},
]


def capitals(text: str) -> str:
    return text.upper()


async def _mixed() -> EvalResult:
    return await run_evals(
        capitals, DATA,
        scorers=[{"scorer": matches_ground_truth("exact"), "threshold": 0.9},
                 fixed("style", 0.8)],
        gates=[contains("mentions-paris", "PARIS")],
    )


async def test_helpers_pass_on_a_passing_result() -> None:
    result = await run_evals(capitals, DATA[:1],
                             scorers=[{"scorer": matches_ground_truth("exact"), "threshold": 0.9}],
                             gates=[fixed("gate", 1.0)])
    assert_verdict(result, "passed")
    assert_score_above(result, "exact", 0.9)
    assert_score_above(result, "exact", 1.0)  # inclusive
    assert_passes_gates(result)
    assert_passes_thresholds(result)


async def test_assert_verdict_explains_the_failure() -> None:
    result = await _mixed()
    with pytest.raises(AssertionError) as info:
        assert_verdict(result, "passed")
    text = str(info.value)
    assert "expected verdict 'passed', got 'failed'" in text
    assert "gate 'mentions-paris' averaged 0.333" in text
    assert "item 1 (input 'Rome')" in text and "item 2 (input 'Oslo')" in text
    assert "scorer 'exact' averaged 0.667" in text


async def test_assert_score_above_names_the_items_below() -> None:
    result = await _mixed()
    assert_score_above(result, "style", 0.8)
    with pytest.raises(AssertionError) as info:
        assert_score_above(result, "exact", 0.7)
    text = str(info.value)
    assert "scorer 'exact' averaged 0.667, below 0.7" in text
    assert "item 1 (input 'Rome'): score 0.000" in text
    assert "item 0" not in text


async def test_assert_score_above_for_unknown_and_nested_ids() -> None:
    result = await run_evals(capitals, DATA,
                             scorers=AgentScorerConfig(agent=[fixed("style", 0.8)]))
    assert_score_above(result, "style", 0.5)
    assert_score_above(result, "style", 0.5, group="agent")
    with pytest.raises(AssertionError, match="'missing' has no average score"):
        assert_score_above(result, "missing", 0.5)


async def test_assert_passes_gates_and_thresholds_fail_with_details() -> None:
    result = await _mixed()
    with pytest.raises(AssertionError) as gates:
        assert_passes_gates(result)
    assert "gate 'mentions-paris' averaged 0.333 (must be 1.0)" in str(gates.value)
    with pytest.raises(AssertionError) as thresholds:
        assert_passes_thresholds(result)
    assert "scorer 'exact' averaged 0.667, outside threshold 0.9" in str(thresholds.value)
    assert "item 1 (input 'Rome'): score 0.000" in str(thresholds.value)


async def test_errored_items_are_listed() -> None:
    def agent(text: str) -> str:
        if text == "Rome":
            raise RuntimeError("rate limited")
        return text.upper()

    result = await run_evals(agent, DATA, gates=[fixed("gate", 1.0)])
    with pytest.raises(AssertionError) as info:
        assert_passes_gates(result)
    assert "1 item(s) errored" in str(info.value) and "rate limited" in str(info.value)
    with pytest.raises(AssertionError, match="got 'failed'"):
        assert_verdict(result, "passed")
