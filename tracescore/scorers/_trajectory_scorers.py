"""Code scorers over trajectories: accuracy against expected steps, and the multi-dimension
trajectory scorer (accuracy, efficiency, tool failures, blacklist, nested expectations).

Both are ``type="trajectory"`` scorers: ``run.output`` is a ``Trajectory`` (or its dict form, or
agent messages, which are turned into a trajectory with ``extract_trajectory``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracescore.model import ExpectedStep, Trajectory, TrajectoryExpectation
from tracescore.scoring import Scorer, create_scorer

from ._checks_trajectory import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from ._compare import (
    Expect,
    as_trajectory,
    compare_steps,
    normalize_expected,
    resolve_options,
    step_matches,
)
from ._results import Record, round_score

NO_EXPECTED = (
    "No expected trajectory provided: pass expected_trajectory to the scorer or set the run's "
    "expected_trajectory"
)
DEFAULT_WEIGHTS: dict[str, float] = {
    "accuracy": 0.4,
    "efficiency": 0.3,
    "tool_failures": 0.2,
    "blacklist": 0.1,
}
_EFFICIENCY_KEYS = ("max_steps", "max_total_tokens", "max_total_duration_ms")


def _dump_expect(e: Expect) -> dict[str, Any]:
    out: dict[str, Any] = {"name": e.name}
    if e.step_type is not None:
        out["step_type"] = e.step_type
    out.update(e.fields)
    if e.children is not None:
        out["children"] = e.children.model_dump(exclude_none=True)
    return out


def _dump_trajectory(t: Trajectory) -> dict[str, Any]:
    return t.model_dump(exclude_none=True, exclude={"raw_output", "raw_workflow_result"})


def as_expectation(value: Any) -> TrajectoryExpectation | None:
    """Coerce an expectation of any accepted shape (None stays None).

    A ``TrajectoryExpectation`` or its dict; a list of expected steps (``ExpectedStep``, dicts
    or names); a ``Trajectory`` (each step expected with its name, type and data fields).
    """
    if value is None:
        return None
    if isinstance(value, TrajectoryExpectation):
        return value
    if isinstance(value, Trajectory):
        steps = [ExpectedStep.model_validate({"name": e.name, "step_type": e.step_type, **e.fields})
                 for e in normalize_expected(value)]
        return TrajectoryExpectation(steps=steps)
    if isinstance(value, Mapping):
        return TrajectoryExpectation.model_validate(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        steps = [ExpectedStep(name=s) if isinstance(s, str) else s for s in value]
        return TrajectoryExpectation.model_validate({"steps": steps})
    raise TypeError(
        "an expected trajectory must be a TrajectoryExpectation, a dict, a list of expected "
        f"steps or a Trajectory; got {type(value).__name__}"
    )


def create_trajectory_accuracy_scorer_code(
    expected_trajectory: Any = None,
    ordering: str | None = None,
    allow_repeated_steps: bool | None = None,
    *,
    compare_step_data: bool | None = None,
    strict_order: bool | None = None,
    comparison_options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """Score how closely a trajectory follows the expected steps (``compare_trajectories``).

    The expected steps come from ``expected_trajectory`` (a list of ``ExpectedStep``/dicts, a
    ``TrajectoryExpectation`` or a ``Trajectory``), else from the run's ``expected_trajectory``.
    ``ordering`` (default ``relaxed``), ``allow_repeated_steps`` (default True) and
    ``compare_step_data`` apply unless the run's expectation sets its own. With no expected
    steps at all the score is 0 and ``preprocess_step_result["error"]`` says why.

    ``preprocess_step_result``: ``actual_trajectory, expected_trajectory, comparison,
    actual_step_names, expected_step_names``.
    """
    opts = {_snake_opt(k): v for k, v in (comparison_options or {}).items()}
    ordering = ordering if ordering is not None else opts.get("ordering")
    strict_order = strict_order if strict_order is not None else opts.get("strict_order")
    if allow_repeated_steps is None:
        allow_repeated_steps = opts.get("allow_repeated_steps")
    if compare_step_data is None:
        compare_step_data = opts.get("compare_step_data")
    static = as_expectation(expected_trajectory)
    static_steps = static.steps if static is not None and static.steps else None
    base_ordering, base_repeats, base_data = resolve_options(
        static, ordering, allow_repeated_steps, compare_step_data, strict_order)

    if static_steps:
        path = " → ".join(s.name for s in static_steps)
        description = (f"Evaluates whether the trajectory matches the expected path: [{path}] "
                       f"({base_ordering} ordering)")
    else:
        description = ("Evaluates trajectory accuracy against the expected trajectory of each "
                       f"run ({base_ordering} ordering)")

    def preprocess(run: Any) -> Record:
        actual = as_trajectory(run.output)
        item = as_expectation(run.expected_trajectory)
        steps = static_steps or (item.steps if item is not None else None)
        actual_names = [s.name for s in actual.steps]
        if not steps:
            return Record(actual_trajectory=_dump_trajectory(actual), expected_trajectory=None,
                          comparison=None, actual_step_names=actual_names,
                          expected_step_names=[], error=NO_EXPECTED, reason=NO_EXPECTED)
        set_fields = item.model_fields_set if item is not None else set()
        eff_ordering = item.ordering if item is not None and "ordering" in set_fields \
            else base_ordering
        eff_repeats = item.allow_repeated_steps if item is not None and \
            "allow_repeated_steps" in set_fields else base_repeats
        eff_data = item.compare_step_data if item is not None and \
            item.compare_step_data is not None else base_data
        expects = normalize_expected(steps, eff_data)
        comparison = compare_steps(list(actual.steps), expects, ordering=eff_ordering,
                                   allow_repeated_steps=eff_repeats, credit_children=True)
        return Record(
            actual_trajectory=_dump_trajectory(actual),
            expected_trajectory={"steps": [_dump_expect(e) for e in expects]},
            comparison=comparison,
            actual_step_names=actual_names,
            expected_step_names=[e.name for e in expects],
            ordering=eff_ordering,
        )

    def generate_score(run: Any, results: Any) -> float:
        comparison = results.preprocess_step_result["comparison"]
        return float(comparison["score"]) if comparison else 0.0

    def generate_reason(run: Any, results: Any, score: float) -> str:
        pre = results.preprocess_step_result
        comparison = pre["comparison"]
        if not comparison:
            return str(pre["error"])
        parts = [f"Matched {comparison['matched_steps']} of {comparison['total_expected_steps']} "
                 f"expected steps ({pre['ordering']} ordering); score {score}."]
        for key, label in (("missing_steps", "missing"), ("out_of_order_steps", "out of order"),
                           ("extra_steps", "extra")):
            if comparison[key]:
                parts.append(f"{label.capitalize()}: {', '.join(comparison[key])}.")
        return " ".join(parts)

    return (
        create_scorer("code-trajectory-accuracy-scorer", description,
                      name="Trajectory Accuracy Scorer", type="trajectory")
        .preprocess(preprocess)
        .generate_score(generate_score)
        .generate_reason(generate_reason)
    )


def _snake_opt(key: str) -> str:
    return {"strictOrder": "strict_order", "allowRepeatedSteps": "allow_repeated_steps",
            "compareStepData": "compare_step_data"}.get(key, key)


# ─── the multi-dimension scorer ──────────────────────────────────────────────────────────────


def _merge(defaults: TrajectoryExpectation | None,
           item: TrajectoryExpectation | None) -> TrajectoryExpectation:
    values: dict[str, Any] = {}
    for source in (defaults, item):
        if source is not None:
            values.update({k: getattr(source, k) for k in source.model_fields_set})
    return TrajectoryExpectation(**values)


def _efficiency_active(config: TrajectoryExpectation) -> bool:
    return any(getattr(config, k) is not None for k in _EFFICIENCY_KEYS) or (
        "no_redundant_calls" in config.model_fields_set and config.no_redundant_calls
    )


def _weighted(parts: list[tuple[str, float]], weights: Mapping[str, float]) -> float | None:
    total = sum(weights[name] for name, _ in parts)
    if not parts or total <= 0:
        return None
    return sum(weights[name] * value for name, value in parts) / total


def _evaluate_level(
    steps: list[Any], config: TrajectoryExpectation, total_duration_ms: float | None,
    weights: Mapping[str, float],
) -> Record:
    trajectory = Trajectory(steps=steps, total_duration_ms=total_duration_ms)
    accuracy = None
    expected_steps = list(config.steps or [])
    if expected_steps:
        expects = normalize_expected(expected_steps, config.compare_step_data)
        accuracy = compare_steps(steps, expects, ordering=config.ordering,
                                 allow_repeated_steps=config.allow_repeated_steps,
                                 credit_children=False)
        accuracy.pop("nested", None)
    efficiency = None
    if _efficiency_active(config):
        efficiency = check_trajectory_efficiency(
            trajectory, max_steps=config.max_steps, max_total_tokens=config.max_total_tokens,
            max_total_duration_ms=config.max_total_duration_ms,
            no_redundant_calls=config.no_redundant_calls)
    blacklist = None
    if config.blacklisted_tools or config.blacklisted_sequences:
        blacklist = check_trajectory_blacklist(trajectory, config.blacklisted_tools,
                                               config.blacklisted_sequences)
    tool_failures = analyze_tool_failures(trajectory, config.max_retries_per_tool)
    nested = _evaluate_nested(expected_steps, steps, weights)

    parts: list[tuple[str, float]] = []
    if accuracy is not None:
        parts.append(("accuracy", accuracy["score"]))
    if efficiency is not None:
        parts.append(("efficiency", efficiency["score"]))
    if tool_failures["patterns"]:
        parts.append(("tool_failures", tool_failures["score"]))
    if blacklist is not None:
        parts.append(("blacklist", blacklist["score"]))
    if blacklist is not None and blacklist["score"] == 0:
        score = 0.0
    else:
        level = _weighted(parts, weights)
        score = 1.0 if level is None else level
        if nested:
            score = 0.7 * score + 0.3 * sum(n["score"] for n in nested) / len(nested)
    return Record(score=round_score(score), accuracy=accuracy, efficiency=efficiency,
                  blacklist=blacklist, tool_failures=tool_failures, nested=nested or None)


def _has_config(children: TrajectoryExpectation) -> bool:
    return bool(children.steps or children.blacklisted_tools or children.blacklisted_sequences
                or _efficiency_active(children))


def _evaluate_nested(expected_steps: list[ExpectedStep], actual_steps: list[Any],
                     weights: Mapping[str, float]) -> list[Record]:
    results: list[Record] = []
    for exp in expected_steps:
        children = exp.children
        if children is None or not _has_config(children):
            continue
        matcher = Expect(exp.name, exp.step_type)
        actual = next((s for s in actual_steps if step_matches(s, matcher)), None)
        if actual is None or not actual.children:
            names = [s.name for s in children.steps or []]
            missing = Record(score=0.0, matched_steps=0, total_expected_steps=len(names),
                             total_actual_steps=0, missing_steps=names, extra_steps=[],
                             out_of_order_steps=[], repeated_steps=[])
            results.append(Record(step_name=exp.name, score=0.0, accuracy=missing,
                                  efficiency=None, blacklist=None, tool_failures=None,
                                  nested=None))
            continue
        level = _evaluate_level(list(actual.children), children, actual.duration_ms, weights)
        results.append(Record(step_name=exp.name, **level))
    return results


def create_trajectory_scorer_code(
    defaults: Any = None,
    weights: Mapping[str, float] | None = None,
) -> Scorer[Any, Any]:
    """Score a trajectory on several dimensions at once, weighted.

    ``defaults`` is a ``TrajectoryExpectation`` (or its dict) for every run; the run's
    ``expected_trajectory`` overrides it field by field (its ``steps`` replace the default steps).
    Dimensions and default ``weights``: accuracy 0.4 (when expected steps exist), efficiency 0.3
    (when a budget is set or ``no_redundant_calls`` is set to True explicitly), tool failures 0.2
    (when a tool was retried), blacklist 0.1 (when a blacklist is non-empty). The score is the
    weighted mean of the active dimensions (1 when none is); a blacklist violation scores 0.
    Expected steps with ``children`` are evaluated against the matched step's children the same
    way, and the level's score becomes 70 % its own and 30 % the mean of the nested scores.

    ``preprocess_step_result``: ``accuracy, efficiency, blacklist, tool_failures, nested, config``.
    A budget the trajectory cannot be measured against fails the run (``ScorerRunError``).
    """
    merged_weights = dict(DEFAULT_WEIGHTS)
    for key, value in (weights or {}).items():
        key = {"toolFailures": "tool_failures"}.get(key, key)
        if key not in DEFAULT_WEIGHTS:
            raise ValueError(f"unknown weight {key!r}; use {sorted(DEFAULT_WEIGHTS)}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"weight {key!r} must be a number of 0 or more, got {value!r}")
        merged_weights[key] = float(value)
    if sum(merged_weights.values()) <= 0:
        raise ValueError("at least one trajectory weight must be above 0")
    base = as_expectation(defaults)

    def preprocess(run: Any) -> Record:
        actual = as_trajectory(run.output)
        config = _merge(base, as_expectation(run.expected_trajectory))
        level = _evaluate_level(list(actual.steps), config, actual.total_duration_ms,
                                merged_weights)
        return Record(accuracy=level["accuracy"], efficiency=level["efficiency"],
                      blacklist=level["blacklist"], tool_failures=level["tool_failures"],
                      nested=level["nested"], config=config.model_dump(exclude_none=True),
                      score=level["score"])

    def generate_score(run: Any, results: Any) -> float:
        return float(results.preprocess_step_result["score"])

    def generate_reason(run: Any, results: Any, score: float) -> str:
        pre = results.preprocess_step_result
        bits = []
        for key in ("accuracy", "efficiency", "tool_failures", "blacklist"):
            if pre[key] is not None and (key != "tool_failures" or pre[key]["patterns"]):
                bits.append(f"{key.replace('_', ' ')} {pre[key]['score']}")
        if pre["blacklist"] is not None and pre["blacklist"]["score"] == 0:
            bad = pre["blacklist"]["violated_tools"] + [
                " → ".join(s) for s in pre["blacklist"]["violated_sequences"]]
            return f"Score 0: blacklisted {', '.join(bad)} used."
        if pre["nested"]:
            bits.append("nested " + ", ".join(f"{n['step_name']} {n['score']}"
                                              for n in pre["nested"]))
        detail = "; ".join(bits) if bits else "no dimension configured"
        return f"Score {score} ({detail})."

    return (
        create_scorer("code-trajectory-scorer",
                      "Multi-dimensional trajectory evaluation: accuracy, efficiency, blacklist "
                      "and tool failures", name="Trajectory Scorer", type="trajectory")
        .preprocess(preprocess)
        .generate_score(generate_score)
        .generate_reason(generate_reason)
    )
