"""``create_trajectory_accuracy_scorer_llm``: was the agent's path through its steps a good one?"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from tracescore.model import ExpectedStep, get_assistant_message
from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    Compute,
    Judged,
    LLMScorerSpec,
    Loose,
    build_llm_scorer,
    merge_options,
)
from ._compare import as_trajectory
from ._llm import ModelLike, as_json, numbered
from ._results import Record
from ._trajectory_scorers import as_expectation

TRAJECTORY_INSTRUCTIONS = """\
You review the path an AI agent took to fulfil a request: the tool calls, model calls and \
workflow steps, in order. For each step you decide whether it was needed and whether it came at \
a sensible point; you also notice steps that are missing or redundant. When an expected path is \
given, it is the reference; otherwise judge from the request. \
Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Evaluate each step the agent took (top-level steps; nested steps belong to their parent).

- was_necessary: true when the step helps fulfil the request (false for redundant, repeated or \
unrelated steps);
- was_in_order: true when the step comes at a sensible point of the sequence (after what it \
depends on, before what depends on it).
Then list missing_steps (steps the request{expected_hint} needed that the agent never took), \
extra_steps (steps that were not needed) and an overall_assessment.

Return a JSON object: {{"step_evaluations": [{{"step_name": "<name>", "was_necessary": true | \
false, "was_in_order": true | false, "reasoning": "<one sentence>"}}, ...], "missing_steps": \
["<step>", ...], "extra_steps": ["<step>", ...], "overall_assessment": "<one or two \
sentences>"}}

User request:
{input}

Agent's answer:
{output}

Steps taken:
{trajectory}
{expected}"""

REASON_PROMPT = """\
Explain a trajectory accuracy score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to 1: 70 % the share of necessary steps, 30 % the share \
of steps in a sensible order, lowered for missing steps. Name unnecessary, misplaced and \
missing steps. Begin with "The score is {score} because".

User request:
{input}

Step evaluations:
{evaluations}

Missing steps:
{missing}

Extra steps:
{extra}"""

NECESSARY_WEIGHT = 0.7
ORDER_WEIGHT = 0.3
MISSING_WEIGHT = 0.1


class StepEvaluation(Loose):
    """One step's judgement."""

    step_name: str | None = None
    was_necessary: bool
    was_in_order: bool
    reasoning: str | None = None


class TrajectoryAnalysis(Loose):
    """The analyze step's reply."""

    step_evaluations: list[StepEvaluation]
    missing_steps: list[str] = Field(default_factory=list)
    extra_steps: list[str] = Field(default_factory=list)
    overall_assessment: str | None = None


def trajectory_accuracy_score(analysis: TrajectoryAnalysis) -> float:
    """The path's accuracy in [0, 1].

    No evaluations → 0 with missing steps, 0.5 with extra steps only, else 1. Otherwise
    0.7 × necessary/n + 0.3 × in order/n − 0.1 × missing/(n + missing), clamped: a perfect
    path scores 1 (Mastra weighs necessity 0.6, so its best score is 0.9).
    """
    evaluations = analysis.step_evaluations
    missing = len(analysis.missing_steps)
    if not evaluations:
        if missing:
            return 0.0
        return 0.5 if analysis.extra_steps else 1.0
    n = len(evaluations)
    necessary = sum(1 for e in evaluations if e.was_necessary) / n
    in_order = sum(1 for e in evaluations if e.was_in_order) / n
    value = NECESSARY_WEIGHT * necessary + ORDER_WEIGHT * in_order
    value -= MISSING_WEIGHT * missing / (n + missing)
    return min(1.0, max(0.0, value))


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _details(step: Any) -> str:
    kind = step.step_type
    parts = []
    if kind in ("tool_call", "mcp_tool_call", "provider_tool_call"):
        if step.tool_args is not None:
            parts.append(f"args: {_shown(step.tool_args)}")
        if step.tool_result is not None:
            parts.append(f"result: {_shown(step.tool_result)}")
    elif kind == "model_generation" and step.model_id:
        parts.append(f"model: {step.model_id}")
    elif kind == "workflow_step" and step.output is not None:
        parts.append(f"output: {_shown(step.output)}")
    return f" ({', '.join(parts)})" if parts else ""


def format_steps(steps: Sequence[Any], depth: int = 0) -> list[str]:
    """``<i>. [<step_type>] <name> (args: …, result: …)`` lines; children indented 2 spaces."""
    lines = []
    for i, step in enumerate(steps, start=1):
        lines.append(f"{'  ' * depth}{i}. [{step.step_type}] {step.name}{_details(step)}")
        if step.children:
            lines.extend(format_steps(step.children, depth + 1))
    return lines


def format_expected(steps: Sequence[ExpectedStep]) -> list[str]:
    """``<i>. [<step_type>] <name> (<fields as JSON>)`` lines of the expected steps."""
    lines = []
    for i, step in enumerate(steps, start=1):
        kind = f"[{step.step_type}] " if step.step_type else ""
        fields = step.expected_fields()
        lines.append(f"{i}. {kind}{step.name}" + (f" ({_shown(fields)})" if fields else ""))
    return lines


def _format(j: Judged) -> Record:
    trajectory = as_trajectory(j.run.output)
    expectation = j.options["expected"] or as_expectation(j.run.expected_trajectory)
    expected = list(expectation.steps or []) if expectation is not None else []
    return Record(
        actual_trajectory_formatted="\n".join(format_steps(trajectory.steps)),
        expected_trajectory_formatted="\n".join(format_expected(expected)) if expected else None,
        has_steps=bool(trajectory.steps),
        step_count=len(trajectory.steps),
    )


def _agent_answer(j: Judged) -> str:
    output = j.run.output
    raw = getattr(output, "raw_output", None)
    if raw is None and isinstance(output, Mapping):
        raw = output.get("raw_output")
    return get_assistant_message(raw) if raw is not None else ""


def _analyze_prompt(j: Judged) -> str:
    expected = j.preprocess["expected_trajectory_formatted"]
    return ANALYZE_PROMPT.format(
        input=j.input_text, output=_agent_answer(j) or "(no text answer)",
        trajectory=j.preprocess["actual_trajectory_formatted"] or "(no steps taken)",
        expected_hint=" or the expected path" if expected else "",
        expected=f"\nExpected path:\n{expected}" if expected else "")


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, input=j.input_text,
                                evaluations=as_json(j.analyze.step_evaluations),
                                missing=numbered(j.analyze.missing_steps, "(none)"),
                                extra=numbered(j.analyze.extra_steps, "(none)"))


TRAJECTORY_ACCURACY_LLM = LLMScorerSpec(
    id="llm-trajectory-accuracy-scorer",
    name="Trajectory Accuracy (LLM)",
    description="Evaluates the quality and order of the agent's steps with an LLM judge",
    instructions=TRAJECTORY_INSTRUCTIONS,
    preprocess=Compute(_format),
    analyze=Ask("Judge each step of the trajectory", _analyze_prompt, TrajectoryAnalysis),
    score=lambda j: trajectory_accuracy_score(j.analyze),
    reason=Ask("Explain the score", _reason_prompt),
    type="trajectory",
    scaled=False,
    option_names=("expected_trajectory",),
    factory="create_trajectory_accuracy_scorer_llm",
)


def create_trajectory_accuracy_scorer_llm(
    model: ModelLike,
    expected_trajectory: Any = None,
    *,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged accuracy of the agent's trajectory (``type="trajectory"``).

    Steps: preprocess (code) formats the trajectory as ``<i>. [<step_type>] <name> (args: …,
    result: …)`` lines (children indented two spaces) and the expected steps → ``{
    "actual_trajectory_formatted", "expected_trajectory_formatted", "has_steps",
    "step_count"}``; analyze judges each step → ``{"step_evaluations": [{"step_name",
    "was_necessary", "was_in_order", "reasoning"}], "missing_steps", "extra_steps",
    "overall_assessment"}``; the score is ``trajectory_accuracy_score`` (not scaled; a perfect
    path scores 1, where Mastra's best is 0.9); generate_reason explains it.

    ``expected_trajectory``: a list of expected steps (``ExpectedStep``, dicts or names), a
    ``TrajectoryExpectation`` or a ``Trajectory``; without it the run's
    ``expected_trajectory`` is used, and without either the judge goes by the request. The
    agent's answer shown to the judge is the trajectory's ``raw_output`` text.
    """
    opts = merge_options(TRAJECTORY_ACCURACY_LLM, {"expected_trajectory": expected_trajectory},
                         options)
    opts["expected"] = as_expectation(opts["expected_trajectory"])
    return build_llm_scorer(TRAJECTORY_ACCURACY_LLM, model, opts)
