"""Trajectory checks beyond step matching: efficiency budgets, blacklists, tool failures.

Numbers follow Mastra: over a budget a dimension scores ``max(0, 1 − (value − max) / max)``;
each redundant call (the same tool with the same args right after itself) costs 0.2; a
blacklist violation scores 0; each retry above ``max_retries_per_tool`` costs 0.2. Scores clamp
to [0, 1] and round to two decimals half up.

Unlike Mastra, a budget that is not a positive number, or a budget the trajectory carries no
measurement for (no token counts, no durations), raises ``TrajectoryCheckError`` instead of
silently passing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from ._compare import as_trajectory
from ._errors import TrajectoryCheckError
from ._results import Record, clamp_score

TOOL_STEP_TYPES = frozenset({"tool_call", "mcp_tool_call", "provider_tool_call"})


def _positive(name: str, value: Any, *, integer: bool) -> float | None:
    if value is None:
        return None
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type or not value > 0:
        kind = "a positive integer" if integer else "a positive number"
        raise TrajectoryCheckError(f"{name} must be {kind} or None; got {value!r}")
    return float(value)


def _walk(steps: Iterable[Any]) -> Iterator[Any]:
    for step in steps:
        yield step
        if step.children:
            yield from _walk(step.children)


def _plain(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


def _over(value: float, budget: float) -> float:
    return max(0.0, 1.0 - (value - budget) / budget)


def check_trajectory_efficiency(
    trajectory: Any,
    max_steps: int | None = None,
    max_total_tokens: int | None = None,
    max_total_duration_ms: float | None = None,
    no_redundant_calls: bool = True,
) -> Record:
    """Score a trajectory against step, token and time budgets and for redundant calls.

    Steps are the top-level steps. Tokens are ``prompt_tokens + completion_tokens`` of every
    ``model_generation`` step at any depth. Duration is ``total_duration_ms``, else the sum of the
    top-level steps' ``duration_ms``. A redundant call is a tool call with the same name, type and
    args as the step right before it. The score is the mean of the active dimensions (each
    budget given, and redundancy when ``no_redundant_calls``); 1 when none is active.

    Returns ``score, total_steps, over_step_budget, total_tokens, over_token_budget,
    total_duration_ms, over_duration_budget, redundant_calls`` (``[{name, index}]``).
    Raises ``TrajectoryCheckError`` for a budget that is not positive, or a token / duration
    budget the trajectory has no measurement for.
    """
    steps_budget = _positive("max_steps", max_steps, integer=True)
    tokens_budget = _positive("max_total_tokens", max_total_tokens, integer=True)
    duration_budget = _positive("max_total_duration_ms", max_total_duration_ms, integer=False)
    traj = as_trajectory(trajectory)
    steps = list(traj.steps)

    total_tokens = 0
    measured_tokens = False
    for step in _walk(steps):
        if step.step_type != "model_generation":
            continue
        for count in (step.prompt_tokens, step.completion_tokens):
            if count is not None:
                total_tokens += count
                measured_tokens = True
    if tokens_budget is not None and not measured_tokens:
        raise TrajectoryCheckError(
            "max_total_tokens is set but no model_generation step in the trajectory reports "
            "prompt_tokens or completion_tokens; record token usage or drop the token budget"
        )

    durations = [s.duration_ms for s in steps if s.duration_ms is not None]
    if traj.total_duration_ms is not None:
        total_duration: float | None = float(traj.total_duration_ms)
    elif durations:
        total_duration = float(sum(durations))
    else:
        total_duration = None
    if duration_budget is not None and total_duration is None:
        raise TrajectoryCheckError(
            "max_total_duration_ms is set but the trajectory has no total_duration_ms and no "
            "step carries duration_ms; record durations or drop the duration budget"
        )

    redundant: list[Record] = []
    if no_redundant_calls:
        for i in range(1, len(steps)):
            prev, cur = steps[i - 1], steps[i]
            if (
                cur.step_type in TOOL_STEP_TYPES
                and prev.step_type == cur.step_type
                and prev.name == cur.name
                and _plain(getattr(prev, "tool_args", None))
                == _plain(getattr(cur, "tool_args", None))
            ):
                redundant.append(Record(name=cur.name, index=i))

    total_steps = len(steps)
    over_steps = steps_budget is not None and total_steps > steps_budget
    over_tokens = tokens_budget is not None and total_tokens > tokens_budget
    over_duration = (
        duration_budget is not None and total_duration is not None
        and total_duration > duration_budget
    )
    dimensions: list[float] = []
    if steps_budget is not None:
        dimensions.append(_over(total_steps, steps_budget) if over_steps else 1.0)
    if tokens_budget is not None:
        dimensions.append(_over(total_tokens, tokens_budget) if over_tokens else 1.0)
    if duration_budget is not None and total_duration is not None:
        dimensions.append(_over(total_duration, duration_budget) if over_duration else 1.0)
    if no_redundant_calls:
        dimensions.append(max(0.0, 1.0 - 0.2 * len(redundant)))
    score = sum(dimensions) / len(dimensions) if dimensions else 1.0
    return Record(
        score=clamp_score(score),
        total_steps=total_steps,
        over_step_budget=over_steps,
        total_tokens=total_tokens,
        over_token_budget=over_tokens,
        total_duration_ms=total_duration if total_duration is not None else 0.0,
        over_duration_budget=over_duration,
        redundant_calls=redundant,
    )


def _levels(steps: Sequence[Any]) -> Iterator[list[str]]:
    """The step names of each level: the top level, then every step's children in turn."""
    yield [s.name for s in steps]
    for step in steps:
        if step.children:
            yield from _levels(step.children)


def _contains_run(names: list[str], seq: list[str]) -> bool:
    n = len(seq)
    return any(names[i : i + n] == seq for i in range(len(names) - n + 1))


def check_trajectory_blacklist(
    trajectory: Any,
    blacklisted_tools: Sequence[str] = (),
    blacklisted_sequences: Sequence[Sequence[str]] = (),
) -> Record:
    """Score 0 when a forbidden tool or a forbidden run of steps appears, else 1.

    A blacklisted tool is found at any depth (a nested agent calling it counts). A blacklisted
    sequence must appear contiguously within one level (the top level, or one step's children);
    empty sequences are ignored. Returns ``score, violated_tools, violated_sequences`` (each
    violation listed once, in the order given).
    """
    if isinstance(blacklisted_tools, str) or any(isinstance(s, str) for s in blacklisted_sequences):
        raise TypeError(
            "blacklisted_tools is a list of names and blacklisted_sequences a list of lists of "
            "names (wrap a single name in a list)"
        )
    traj = as_trajectory(trajectory)
    all_names = {s.name for s in _walk(traj.steps)}
    levels = list(_levels(traj.steps))
    violated_tools = [t for t in dict.fromkeys(blacklisted_tools) if t in all_names]
    violated_sequences: list[list[str]] = []
    for seq in blacklisted_sequences:
        seq_list = list(seq)
        if seq_list and seq_list not in violated_sequences and any(
            _contains_run(level, seq_list) for level in levels
        ):
            violated_sequences.append(seq_list)
    violated = bool(violated_tools or violated_sequences)
    return Record(
        score=0.0 if violated else 1.0,
        violated_tools=violated_tools,
        violated_sequences=violated_sequences,
    )


def analyze_tool_failures(trajectory: Any, max_retries_per_tool: int = 2) -> Record:
    """Find retries of failed tool calls, fallbacks to other tools, and eventual success.

    Among the top-level tool steps, consecutive calls of the same tool form a group; each call
    after a failed one (``success is False``) is a retry. A group with retries is a pattern:
    ``tool_name, retry_count, fell_back_to_alternative`` (the last call still failed and another
    tool came next), ``alternative_tool``, ``eventually_succeeded`` (the last call did not fail).
    The score loses 0.2 for each retry beyond ``max_retries_per_tool``.

    Returns ``score, patterns, total_retries, excessive_retry_tools``.
    """
    if isinstance(max_retries_per_tool, bool) or not isinstance(max_retries_per_tool, int) or (
        max_retries_per_tool < 0
    ):
        raise TrajectoryCheckError(
            f"max_retries_per_tool must be an integer of 0 or more; got {max_retries_per_tool!r}"
        )
    tool_steps = [s for s in as_trajectory(trajectory).steps if s.step_type in TOOL_STEP_TYPES]
    patterns: list[Record] = []
    i = 0
    while i < len(tool_steps):
        j = i + 1
        retries = 0
        while j < len(tool_steps) and tool_steps[j].name == tool_steps[i].name:
            if getattr(tool_steps[j - 1], "success", None) is False:
                retries += 1
            j += 1
        if retries:
            succeeded = getattr(tool_steps[j - 1], "success", None) is not False
            fallback = tool_steps[j] if j < len(tool_steps) and not succeeded else None
            patterns.append(
                Record(
                    tool_name=tool_steps[i].name,
                    retry_count=retries,
                    fell_back_to_alternative=fallback is not None,
                    alternative_tool=fallback.name if fallback is not None else None,
                    eventually_succeeded=succeeded,
                )
            )
        i = j
    excess = sum(max(0, p["retry_count"] - max_retries_per_tool) for p in patterns)
    return Record(
        score=clamp_score(1.0 - 0.2 * excess),
        patterns=patterns,
        total_retries=sum(p["retry_count"] for p in patterns),
        excessive_retry_tools=[
            p["tool_name"] for p in patterns if p["retry_count"] > max_retries_per_tool
        ],
    )
