"""Compare an actual trajectory with expected steps: ``compare_trajectories``.

Three orderings, with Mastra's numbers:

- ``strict``: position by position; a step out of place does not match; when there are more
  actual steps than expected, the score loses ``0.5 × extra / expected``.
- ``relaxed`` (default): the expected steps must appear in order, other steps may sit between.
- ``unordered``: each expected step must appear somewhere (each actual step used once).

Without ``allow_repeated_steps`` each tool name the actual trajectory repeats costs 0.1.
Scores clamp to [0, 1] and round to two decimals.

An expected step matches an actual one on ``name``, on ``step_type`` when given, and on every
other field it sets (``tool_args``, ``tool_result``, ``status``, ``output``, …), compared by
value. An expected step's ``children`` expectation is compared with the matched step's
children; the parent then earns that comparison's score instead of a full point.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from tracescore.model import ExpectedStep, Message, Trajectory, TrajectoryExpectation

from ._results import Record, clamp_score

Ordering = Literal["strict", "relaxed", "unordered"]
ORDERINGS: tuple[str, ...] = ("strict", "relaxed", "unordered")

# Data fields compared per step type when the expectation is a full Trajectory (its steps carry
# durations and ids that must not take part).
COMPARABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "tool_call": ("tool_args", "tool_result", "success"),
    "mcp_tool_call": ("tool_args", "tool_result", "mcp_server", "success"),
    "provider_tool_call": ("tool_args", "tool_result", "success"),
    "model_generation": ("model_id", "prompt_tokens", "completion_tokens", "finish_reason"),
    "agent_run": ("agent_id",),
    "workflow_run": ("workflow_id", "status"),
    "workflow_step": ("step_id", "status", "output"),
    "workflow_conditional": ("condition_count", "selected_steps"),
    "workflow_parallel": ("branch_count", "parallel_steps"),
    "workflow_loop": ("loop_type", "total_iterations"),
    "workflow_sleep": ("sleep_duration_ms", "sleep_type"),
    "workflow_wait_event": ("event_name", "event_received"),
    "processor_run": ("processor_id",),
}

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


@dataclass(frozen=True)
class Expect:
    """One normalised expected step."""

    name: str
    step_type: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    children: TrajectoryExpectation | None = None


def as_trajectory(value: Any) -> Trajectory:
    """Coerce a Trajectory, its dict form, a list of steps or agent messages into a Trajectory."""
    if isinstance(value, Trajectory):
        return value
    if value is None:
        return Trajectory()
    if isinstance(value, Mapping):
        return Trajectory.model_validate(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = list(value)
        if items and all(isinstance(i, Message) or (isinstance(i, Mapping) and "role" in i)
                         for i in items):
            from ._extract import extract_trajectory

            return extract_trajectory(items)
        return Trajectory(steps=[s if isinstance(s, BaseModel) else dict(s) for s in items])
    raise TypeError(
        f"expected a Trajectory, a dict with 'steps' or a list of steps, got {type(value).__name__}"
    )


def _from_expected_step(step: ExpectedStep, compare_step_data: bool | None) -> Expect:
    fields: dict[str, Any] = {}
    if compare_step_data is not False:
        for key, value in step.expected_fields().items():
            key = _snake(key)
            if key == "data":
                continue
            if value is not None:
                fields[key] = value
    if compare_step_data:
        data = (step.model_extra or {}).get("data")
        if isinstance(data, Mapping):
            if data.get("input") is not None:
                fields["tool_args"] = data["input"]
            if data.get("output") is not None:
                key = "output" if step.step_type == "workflow_step" else "tool_result"
                fields[key] = data["output"]
    children = step.children if step.children is not None and step.children.steps else None
    return Expect(step.name, step.step_type, fields, children)


def _from_trajectory_step(step: Any, compare_step_data: bool | None) -> Expect:
    fields: dict[str, Any] = {}
    if compare_step_data is not False:
        for key in COMPARABLE_FIELDS.get(step.step_type, ()):
            value = getattr(step, key, None)
            if value is not None:
                fields[key] = value
    return Expect(step.name, step.step_type, fields, None)


def normalize_expected(expected: Any, compare_step_data: bool | None = None) -> list[Expect]:
    """Turn expected steps of any accepted shape into ``Expect`` records."""
    if expected is None:
        return []
    if isinstance(expected, Trajectory):
        return [_from_trajectory_step(s, compare_step_data) for s in expected.steps]
    if isinstance(expected, TrajectoryExpectation):
        return [_from_expected_step(s, compare_step_data) for s in expected.steps or []]
    if isinstance(expected, Mapping):
        if "steps" not in expected:
            raise TypeError("an expected trajectory given as a dict needs a 'steps' list")
        return normalize_expected(expected["steps"], compare_step_data)
    if isinstance(expected, Sequence) and not isinstance(expected, str | bytes):
        out: list[Expect] = []
        for item in expected:
            if isinstance(item, ExpectedStep):
                out.append(_from_expected_step(item, compare_step_data))
            elif isinstance(item, BaseModel) and hasattr(item, "step_type"):
                out.append(_from_trajectory_step(item, compare_step_data))
            elif isinstance(item, Mapping):
                step = ExpectedStep.model_validate(item)
                out.append(_from_expected_step(step, compare_step_data))
            elif isinstance(item, str):
                out.append(Expect(item))
            else:
                raise TypeError(f"cannot read an expected step from {type(item).__name__}")
        return out
    raise TypeError(
        "expected steps must be a list of ExpectedStep (or dicts), a TrajectoryExpectation or a "
        f"Trajectory, got {type(expected).__name__}"
    )


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def step_matches(actual: Any, expected: Expect) -> bool:
    """True when the actual step has the expected name, step type and every given field."""
    if actual.name != expected.name:
        return False
    if expected.step_type is not None and actual.step_type != expected.step_type:
        return False
    for key, want in expected.fields.items():
        got = getattr(actual, key, None)
        if got is None and actual.metadata and key in actual.metadata:
            got = actual.metadata[key]
        if got is None or _plain(got) != _plain(want):
            return False
    return True


def _repeated(names: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [name for name, count in counts.items() if count > 1]


def resolve_options(
    expected: Any,
    ordering: str | None,
    allow_repeated_steps: bool | None,
    compare_step_data: bool | None,
    strict_order: bool | None,
) -> tuple[str, bool, bool | None]:
    """Explicit arguments win, then a TrajectoryExpectation's own settings, then defaults."""
    exp = expected if isinstance(expected, TrajectoryExpectation) else None
    if ordering is None and strict_order is not None:
        ordering = "strict" if strict_order else "relaxed"
    if ordering is None:
        ordering = exp.ordering if exp is not None else "relaxed"
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering must be one of {', '.join(ORDERINGS)}; got {ordering!r}")
    if allow_repeated_steps is None:
        allow_repeated_steps = exp.allow_repeated_steps if exp is not None else True
    if compare_step_data is None and exp is not None:
        compare_step_data = exp.compare_step_data
    return ordering, bool(allow_repeated_steps), compare_step_data


def compare_trajectories(
    actual: Any,
    expected: Any,
    ordering: Ordering | None = None,
    allow_repeated_steps: bool | None = None,
    *,
    compare_step_data: bool | None = None,
    strict_order: bool | None = None,
) -> Record:
    """Compare the steps an agent took with the steps it should have taken.

    ``expected`` is a list of ``ExpectedStep`` (or dicts, or plain names), a
    ``TrajectoryExpectation`` (its ``ordering``/``allow_repeated_steps`` apply unless given here)
    or a ``Trajectory`` (its steps' data fields are compared). ``ordering`` defaults to
    ``relaxed``; ``strict_order=True`` is an alias of ``ordering="strict"``.
    ``compare_step_data``: None compares every field an expected step sets; True also reads the
    legacy ``data={"input": ..., "output": ...}``; False compares names and step types only.

    Returns a ``Record``: ``score, matched_steps, total_expected_steps, total_actual_steps,
    missing_steps, extra_steps, out_of_order_steps, repeated_steps`` (names), plus ``nested``
    (``step_name, score, accuracy`` per expected step with ``children``) when there are any.
    """
    resolved, allow_repeats, data_mode = resolve_options(
        expected, ordering, allow_repeated_steps, compare_step_data, strict_order
    )
    return compare_steps(
        list(as_trajectory(actual).steps),
        normalize_expected(expected, data_mode),
        ordering=resolved,
        allow_repeated_steps=allow_repeats,
        credit_children=True,
    )


def compare_steps(
    actual_steps: list[Any],
    expected: list[Expect],
    *,
    ordering: str,
    allow_repeated_steps: bool,
    credit_children: bool,
) -> Record:
    """The comparison itself, over normalised inputs (see ``compare_trajectories``)."""
    actual_names = [s.name for s in actual_steps]
    expected_names = [e.name for e in expected]
    repeated = _repeated(actual_names)
    if not expected:
        return Record(
            score=1.0 if not actual_steps else 0.0,
            matched_steps=0,
            total_expected_steps=0,
            total_actual_steps=len(actual_steps),
            missing_steps=[],
            extra_steps=actual_names,
            out_of_order_steps=[],
            repeated_steps=repeated,
        )

    pairs: dict[int, int] = {}  # expected index -> actual index
    out_of_order: list[str] = []
    if ordering == "strict":
        for i in range(max(len(actual_steps), len(expected))):
            a_name = actual_names[i] if i < len(actual_steps) else None
            e_name = expected_names[i] if i < len(expected) else None
            if a_name is not None and a_name == e_name:
                if step_matches(actual_steps[i], expected[i]):
                    pairs[i] = i
            elif a_name is not None and a_name in expected_names:
                out_of_order.append(a_name)
    elif ordering == "unordered":
        used: set[int] = set()
        for i, exp in enumerate(expected):
            for j, step in enumerate(actual_steps):
                if j not in used and step_matches(step, exp):
                    pairs[i] = j
                    used.add(j)
                    break
    else:
        last = -1
        for i, exp in enumerate(expected):
            for j in range(last + 1, len(actual_steps)):
                if step_matches(actual_steps[j], exp):
                    pairs[i] = j
                    last = j
                    break
            else:
                if any(step_matches(step, exp) for step in actual_steps):
                    out_of_order.append(exp.name)

    nested: list[Record] = []
    credit = 0.0
    for i, exp in enumerate(expected):
        if i not in pairs:
            continue
        if exp.children is None:
            credit += 1.0
            continue
        child = nested_accuracy(actual_steps[pairs[i]], exp)
        nested.append(Record(step_name=exp.name, score=child["score"], accuracy=child))
        credit += child["score"] if credit_children else 1.0

    score = credit / len(expected)
    if ordering == "strict" and len(actual_steps) > len(expected):
        score = max(0.0, score - 0.5 * (len(actual_steps) - len(expected)) / len(expected))
    if not allow_repeated_steps and repeated:
        score = max(0.0, score - 0.1 * len(repeated))

    expected_set = set(expected_names)
    result = Record(
        score=clamp_score(score),
        matched_steps=len(pairs),
        total_expected_steps=len(expected),
        total_actual_steps=len(actual_steps),
        missing_steps=[e.name for i, e in enumerate(expected) if i not in pairs],
        extra_steps=[n for n in actual_names if n not in expected_set],
        out_of_order_steps=out_of_order,
        repeated_steps=repeated,
    )
    if any(e.children is not None for e in expected):
        result["nested"] = nested
    return result


def nested_accuracy(actual_step: Any, expected: Expect) -> Record:
    """Compare a matched step's children with the expected step's ``children`` expectation."""
    assert expected.children is not None
    child_exp = expected.children
    children = list(actual_step.children or [])
    return compare_steps(
        children,
        normalize_expected(child_exp, child_exp.compare_step_data),
        ordering=child_exp.ordering,
        allow_repeated_steps=child_exp.allow_repeated_steps,
        credit_children=True,
    )
