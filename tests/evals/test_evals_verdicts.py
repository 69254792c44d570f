"""Gates, thresholds and the verdict; not_scorable runs counted and left out of averages."""

from __future__ import annotations

from typing import Any

import pytest
from evals_helpers import contains, fixed, scorable_when

from tracescore.evals import run_evals
from tracescore.model import get_user_message
from tracescore.scoring import create_scorer


def echo(text: str) -> str:
    return f"echo {text}"


PASS_GATE = fixed("always-pass-gate", 1.0)
FAIL_GATE = fixed("always-fail-gate", 0.0)


@pytest.mark.parametrize(
    ("scorers", "gates", "verdict"),
    [
        ([fixed("quality", 0.9)], [PASS_GATE], "passed"),
        ([fixed("quality", 0.9)], [FAIL_GATE], "failed"),
        ([fixed("filler", 0.5)], [PASS_GATE, FAIL_GATE], "failed"),
        ([{"scorer": fixed("quality", 0.85), "threshold": 0.7}], None, "passed"),
        ([{"scorer": fixed("quality", 0.3), "threshold": 0.7}], None, "scored"),
        ([{"scorer": fixed("quality", 0.3), "threshold": 0.7}], [PASS_GATE], "scored"),
        ([{"scorer": fixed("quality", 0.9), "threshold": 0.7}], [FAIL_GATE], "failed"),
        ([{"scorer": fixed("quality", 0.9), "threshold": 0.7}], [PASS_GATE], "passed"),
        ([{"scorer": fixed("quality", 0.7), "threshold": 0.7}], None, "passed"),  # inclusive
        ([{"scorer": fixed("low-is-good", 0.4), "threshold": {"max": 0.2}}], None, "scored"),
        ([{"scorer": fixed("band", 0.5), "threshold": {"min": 0.4, "max": 0.6}}], None, "passed"),
    ],
)
async def test_verdict_from_gates_and_thresholds(scorers: Any, gates: Any, verdict: str) -> None:
    result = await run_evals(echo, [{"input": "Test"}], scorers=scorers, gates=gates)
    assert result.verdict == verdict


async def test_gate_and_threshold_results_carry_their_numbers() -> None:
    result = await run_evals(
        echo, [{"input": "Test"}],
        scorers=[fixed("bare", 0.75), {"scorer": fixed("tracked", 0.9), "threshold": 0.8}],
        gates=[PASS_GATE, FAIL_GATE],
    )
    assert result.gate_results is not None and result.threshold_results is not None
    assert [(g.id, g.passed, g.score) for g in result.gate_results] == [
        ("always-pass-gate", True, 1.0), ("always-fail-gate", False, 0.0)]
    only = result.threshold_results
    assert [(r.id, r.passed, r.average_score, r.threshold) for r in only] == [
        ("tracked", True, 0.9, 0.8)]
    assert result.scores == {"bare": 0.75, "tracked": 0.9}
    assert set(result.items[0].gate_results) == {"always-pass-gate", "always-fail-gate"}


async def test_no_gates_or_thresholds_means_no_verdict() -> None:
    result = await run_evals(echo, [{"input": "hi"}], scorers=[fixed("quality", 0.8)])
    assert result.verdict is None
    assert result.gate_results is None
    assert result.threshold_results is None
    assert result.turn_results is None
    assert result.scores["quality"] == 0.8


async def test_gates_average_across_items() -> None:
    result = await run_evals(
        echo, [{"input": "Brooklyn"}, {"input": "Queens"}, {"input": "Brooklyn again"}],
        scorers=[fixed("quality", 0.8)], gates=[contains("mentions-brooklyn", "Brooklyn")],
    )
    assert result.gate_results is not None
    gate = result.gate_results[0]
    assert gate.score == pytest.approx(2 / 3) and not gate.passed
    assert result.verdict == "failed"
    assert result.summary.total_items == 3


async def test_not_scorable_runs_are_counted_and_excluded_from_averages() -> None:
    only_long = scorable_when("long-inputs", lambda run: len(get_user_message(run.input)) > 3,
                              score=0.4)
    result = await run_evals(
        echo, [{"input": "tiny"}, {"input": "a"}, {"input": "lengthy"}],
        scorers=[{"scorer": only_long, "threshold": 0.3}],
    )
    assert result.scores == {"long-inputs": 0.4}
    assert result.summary.not_scorable == {"long-inputs": 1}
    assert result.threshold_results is not None
    assert result.threshold_results[0].average_score == 0.4
    assert result.verdict == "passed"
    not_scored = result.items[1].scorer_results["long-inputs"]
    assert not_scored.score is None and not_scored.not_scorable is not None


async def test_a_never_scorable_scorer_is_left_out_everywhere() -> None:
    never = scorable_when("never", lambda run: False)
    result = await run_evals(
        echo, [{"input": "a"}, {"input": "b"}],
        scorers=[{"scorer": never, "threshold": 0.5}, fixed("other", 0.2)], gates=[never],
    )
    assert result.scores == {"other": 0.2}
    assert result.gate_results == []
    assert result.threshold_results == []
    assert result.summary.not_scorable == {"never": 4}
    assert result.verdict is None


async def test_summary_not_scorable_lists_only_nonzero_counts() -> None:
    result = await run_evals(echo, [{"input": "x"}], scorers=[fixed("f", 1.0)])
    assert result.summary.not_scorable == {}


async def test_per_turn_threshold_miss_scores_and_gate_pass_passes() -> None:
    result = await run_evals(
        echo,
        [{"turns": [{"input": "a", "gates": [PASS_GATE]},
                    {"input": "b", "scorers": [{"scorer": fixed("t", 0.1), "threshold": 0.5}]}]}],
    )
    assert result.turn_results is not None
    assert [t.index for t in result.turn_results] == [0, 1]
    assert result.turn_results[0].gate_results[0].passed
    assert not result.turn_results[1].threshold_results[0].passed
    assert result.verdict == "scored"
    assert result.gate_results is None and result.threshold_results is None
    assert result.scores == {}


async def test_gates_run_before_scorers_on_each_item() -> None:
    order: list[str] = []

    def make(scorer_id: str) -> Any:
        return create_scorer(scorer_id, "x").generate_score(
            lambda run, results: order.append(scorer_id) or 1.0)

    await run_evals(echo, [{"input": "x"}], scorers=[make("scorer")], gates=[make("gate")])
    assert order == ["gate", "scorer"]
