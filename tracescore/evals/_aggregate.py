"""From per-item scorer runs to averages, gate and threshold outcomes and the verdict."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ._execute import ItemOutcome, ScorerOutcome
from ._plan import Assertion, Group, Plan
from ._results import EvalSummary, GateResult, ThresholdResult, TurnResult, Verdict

_EPSILON = 1e-9
# (turn index or None, gate?, group, scorer id)
_Key = tuple[int | None, bool, Group, str]


@dataclass(slots=True)
class _Series:
    assertion: Assertion
    scores: list[tuple[int, float]] = field(default_factory=list)

    def mean(self) -> float | None:
        if not self.scores:
            return None
        ordered = [score for _, score in sorted(self.scores, key=lambda p: p[0])]
        return sum(ordered) / len(ordered)


@dataclass(slots=True)
class Aggregate:
    """The run-level numbers of an ``EvalResult``."""

    scores: dict[str, Any]
    summary: EvalSummary
    verdict: Verdict | None
    gate_results: list[GateResult] | None
    threshold_results: list[ThresholdResult] | None
    turn_results: list[TurnResult] | None


def _key(assertion: Assertion, turn_index: int | None) -> _Key:
    return (turn_index, assertion.is_gate, assertion.group, assertion.id)


def aggregate(plan: Plan, outcomes: list[ItemOutcome]) -> Aggregate:
    """Average every scorer over the items that produced a number and decide the verdict."""
    series: dict[_Key, _Series] = {}
    # Configuration order first, so results list gates and scorers as they were given.
    for assertion in (*plan.gates, *plan.scorers):
        series.setdefault(_key(assertion, None), _Series(assertion))
    for item_plan in plan.items:
        for index, turn in enumerate(item_plan.turns):
            for assertion in (*turn.gates, *turn.scorers):
                series.setdefault(_key(assertion, index), _Series(assertion))
    not_scorable: Counter[str] = Counter()
    for outcome in outcomes:
        for run in outcome.runs:
            _add(series, run, not_scorable)

    scores: dict[str, Any] = {}
    gate_results: list[GateResult] = []
    threshold_results: list[ThresholdResult] = []
    turns: dict[int, TurnResult] = {}
    for (turn_index, is_gate, group, scorer_id), s in series.items():
        mean = s.mean()
        if mean is None:
            continue  # never scorable: left out of scores, gates and thresholds
        if turn_index is not None:
            turn_result = turns.setdefault(turn_index, TurnResult(index=turn_index))
            if is_gate:
                turn_result.gate_results.append(_gate(scorer_id, mean))
            else:
                turn_result.scores[scorer_id] = mean
                if s.assertion.threshold is not None:
                    turn_result.threshold_results.append(_threshold(s.assertion, mean))
            continue
        if is_gate:
            gate_results.append(_gate(scorer_id, mean))
            continue
        node = scores
        for part in group:
            node = node.setdefault(part, {})
        node[scorer_id] = mean
        if s.assertion.threshold is not None:
            threshold_results.append(_threshold(s.assertion, mean))

    errors = sum(1 for o in outcomes if o.result.error)
    turn_results = [turns[i] for i in sorted(turns)] if plan.has_turns else None
    has_thresholds = any(a.threshold for a in plan.scorers)
    return Aggregate(
        scores=scores,
        summary=EvalSummary(
            total_items=len(plan.items),
            errors=errors,
            not_scorable={k: v for k, v in not_scorable.items() if v},
        ),
        verdict=_verdict(plan, errors, gate_results, threshold_results, turn_results or []),
        gate_results=gate_results if plan.gates else None,
        threshold_results=threshold_results if has_thresholds else None,
        turn_results=turn_results,
    )


def _add(series: dict[_Key, _Series], run: ScorerOutcome, not_scorable: Counter[str]) -> None:
    key = _key(run.assertion, run.turn_index)
    target = series.setdefault(key, _Series(run.assertion))
    score = run.score
    if score is not None:
        target.scores.append((run.item_index, score))
    elif run.not_scorable:
        not_scorable[run.assertion.id] += 1


def _gate(scorer_id: str, mean: float) -> GateResult:
    return GateResult(id=scorer_id, passed=mean >= 1.0 - _EPSILON, score=mean)


def _threshold(assertion: Assertion, mean: float) -> ThresholdResult:
    assert assertion.threshold is not None
    return ThresholdResult(
        id=assertion.id,
        passed=assertion.threshold.passes(mean),
        average_score=mean,
        threshold=assertion.threshold.given,
        group=assertion.group_label,
    )


def _verdict(
    plan: Plan,
    errors: int,
    gates: list[GateResult],
    thresholds: list[ThresholdResult],
    turns: list[TurnResult],
) -> Verdict | None:
    all_gates = [*gates, *(g for t in turns for g in t.gate_results)]
    all_thresholds = [*thresholds, *(r for t in turns for r in t.threshold_results)]
    if errors and plan.has_verdict_inputs:
        return "failed"
    if any(not g.passed for g in all_gates):
        return "failed"
    if any(not r.passed for r in all_thresholds):
        return "scored"
    if all_gates or all_thresholds:
        return "passed"
    return None
