"""``create_rubric_scorer``: does the output meet every required criterion of a rubric?

The rubric is given to the factory or, per run, as ``rubric`` in the request context or the
input dict. The judge grades each criterion; the score is 1 only when every gating criterion
(the required ones, or all when none is required) is met. With no rubric the check passes
without asking the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    Compute,
    Judged,
    LLMScorerSpec,
    Loose,
    Unscaled,
    build_llm_scorer,
    merge_options,
)
from ._llm import ModelLike

NO_RUBRIC = "No rubric was provided, so the rubric check passed by default."
_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")

RUBRIC_INSTRUCTIONS = """\
You check an AI assistant's output against a rubric: a list of criteria, each required or \
optional. Grade every criterion on its own, strictly: a criterion is satisfied only when the \
output clearly meets it, not when it merely hints at it. Base each decision on the output \
itself; the task is there to tell you what was asked."""

ANALYZE_PROMPT = """\
Grade the output against each numbered criterion below. Give exactly one result per criterion, \
in the same order, repeating the criterion's text, with a one-sentence reason.

Task:
{task}

Output:
\"\"\"
{output}
\"\"\"

Criteria:
{criteria}

Return a JSON object: {{"criteria": [{{"criterion": "<text>", "satisfied": true | false, \
"reasoning": "<why>"}}, ...], "overall_assessment": "<one sentence>"}}"""


class RubricCriterion(BaseModel):
    """One criterion of a rubric."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    """An optional stable identifier."""
    description: str
    """What the output must do, e.g. "Includes a recommendations section"."""
    required: bool = True
    """Whether it gates the score; optional criteria are graded and reported only."""


class CriterionResult(Loose):
    """The judge's grade of one criterion."""

    criterion: str | None = None
    satisfied: bool
    reasoning: str | None = None


class RubricGrades(Loose):
    """The analyze step's reply."""

    criteria: list[CriterionResult]
    overall_assessment: str | None = Field(default=None)


def parse_rubric(rubric: str | Sequence[Any] | None) -> list[RubricCriterion]:
    """A rubric as criteria: a string is one required criterion per non-empty line, with list
    markers (``-``, ``*``, ``•``, ``1.``, ``1)``) stripped; a list holds criteria, their dicts
    or plain strings (required)."""
    if rubric is None:
        return []
    if isinstance(rubric, str):
        lines = (_MARKER.sub("", line).strip() for line in rubric.splitlines())
        return [RubricCriterion(description=line) for line in lines if line]
    criteria = []
    for item in rubric:
        if isinstance(item, str):
            item = {"description": item}
        criterion = RubricCriterion.model_validate(item)
        if not criterion.description.strip():
            raise ValueError("every rubric criterion needs a description")
        criteria.append(criterion)
    return criteria


def _rubric_of(source: Any) -> Any:
    if isinstance(source, Mapping):
        value = source.get("rubric")
        if isinstance(value, str | list | tuple):
            return value
    return None


def resolve_rubric(static: list[RubricCriterion], run: Any) -> list[RubricCriterion]:
    """The factory's rubric, else a ``rubric`` in the run's request context, else in its input
    dict (none: an empty rubric)."""
    if static:
        return static
    dynamic = _rubric_of(run.request_context)
    if dynamic is None:
        dynamic = _rubric_of(run.input)
    return parse_rubric(dynamic)


def _gating(rubric: Sequence[Mapping[str, Any]], grades: RubricGrades
            ) -> list[tuple[Mapping[str, Any], CriterionResult | None]]:
    pairs = [(c, grades.criteria[i] if i < len(grades.criteria) else None)
             for i, c in enumerate(rubric)]
    required = [p for p in pairs if p[0]["required"]]
    return required or pairs


def rubric_score(rubric: Sequence[Mapping[str, Any]], grades: RubricGrades | None) -> float:
    """1 when every gating criterion is satisfied, else 0; no rubric: ``Unscaled(1)``.

    Grades are matched to the rubric by position (a criterion the judge left out is not
    satisfied); ``required`` comes from the rubric, not the judge's reply.
    """
    if not rubric:
        return Unscaled(1.0)
    if grades is None:
        return 0.0
    return 1.0 if all(g is not None and g.satisfied for _, g in _gating(rubric, grades)) else 0.0


def rubric_reason(rubric: Sequence[Mapping[str, Any]], grades: RubricGrades | None,
                  score: float | None) -> str:
    """Which criteria were met, and each unmet one with the judge's reasoning."""
    if not rubric or grades is None:
        return NO_RUBRIC
    met = [i for i, _ in enumerate(rubric) if i < len(grades.criteria)
           and grades.criteria[i].satisfied]
    passed = rubric_score(rubric, grades) == 1.0
    head = ("✅ Rubric satisfied" if passed else "❌ Rubric not satisfied") + (
        f" (score: {score:g}): {len(met)} of {len(rubric)} criteria met." if score is not None
        else f": {len(met)} of {len(rubric)} criteria met.")
    unmet = []
    for i, criterion in enumerate(rubric):
        if i in met:
            continue
        grade = grades.criteria[i] if i < len(grades.criteria) else None
        why = (grade.reasoning or "").strip() if grade is not None else "not graded by the judge"
        kind = "required" if criterion["required"] else "optional"
        unmet.append(f"- {criterion['description']} ({kind}): {why or 'no reasoning given'}")
    return head + ("\n\nNot met:\n" + "\n".join(unmet) if unmet else "")


def _resolve(j: Judged) -> dict[str, Any]:
    rubric = resolve_rubric(j.options["criteria"], j.run)
    return {"criteria": [c.model_dump() for c in rubric]}


def _analyze_prompt(j: Judged) -> str | None:
    rubric = j.preprocess["criteria"]
    if not rubric:
        return None  # nothing to grade: no judge call
    listed = "\n".join(f"{i}. [{'required' if c['required'] else 'optional'}] {c['description']}"
                       for i, c in enumerate(rubric, 1))
    return ANALYZE_PROMPT.format(task=j.input_text or "(not given)", output=j.output_text,
                                 criteria=listed)


RUBRIC = LLMScorerSpec(
    id="rubric-scorer",
    name="Rubric (LLM)",
    description=("Grades an agent output against a rubric of criteria, returning 1 only when "
                 "every required criterion is satisfied"),
    instructions=RUBRIC_INSTRUCTIONS,
    preprocess=Compute(_resolve),
    analyze=Ask("Judge the output against each rubric criterion",
                cast(Callable[[Judged], str], _analyze_prompt), RubricGrades),
    score=lambda j: rubric_score(j.preprocess["criteria"], j.analyze),
    reason=Compute(lambda j: rubric_reason(j.preprocess["criteria"], j.analyze, j.score)),
    type=None,
    option_names=("criteria",),
)


def create_rubric_scorer(
    model: ModelLike,
    criteria: str | Sequence[RubricCriterion | Mapping[str, Any] | str] | None = None,
    *,
    scale: float = 1,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM judge of the output against a rubric: 1 (× scale) only when every gating
    criterion is met, else 0.

    ``criteria``: ``RubricCriterion`` items (or ``{"id", "description", "required"}`` dicts, or
    strings), or one string with a criterion per line (list markers stripped; each required).
    Without one, each run's ``request_context["rubric"]`` or ``input["rubric"]`` is used. The
    gating criteria are the required ones, or all when none is required. No rubric at all:
    score 1 (unscaled), no judge call, reason ``No rubric was provided, so the rubric check
    passed by default.``

    Steps: preprocess (code) resolves the rubric → ``{"criteria": [...]}``; analyze asks the
    judge → ``{"criteria": [{"criterion", "satisfied", "reasoning"}], "overall_assessment"}``
    (matched to the rubric by position); score and reason are code.
    """
    opts = merge_options(RUBRIC, {"scale": scale, "criteria": criteria}, options)
    opts["criteria"] = parse_rubric(opts["criteria"])
    return build_llm_scorer(RUBRIC, model, opts)
