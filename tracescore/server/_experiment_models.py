"""The bodies of ``POST /api/experiments``, validated on write so every stored row reads back.

An ``experiments`` row needs ``experiment_id`` and ``name`` (both follow the name rule of
``tracescore.model.NAME_RULE``), ``metadata`` is an object and counts fit the stored INTEGER; a
result needs ``item_id`` and ``scorer_id``. Anything else is a 400 with a sentence, before
anything is written.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tracescore.model import NAME_RULE, name_problem

INT32_MAX = 2**31 - 1
"""Largest value of an INTEGER column."""


def _named(value: str, what: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"{what}: {problem} (a name is {NAME_RULE})")
    return value


class ExperimentRow(BaseModel):
    """One ``experiments`` row as ``run_evals(experiment=...)`` sends it."""

    model_config = ConfigDict(extra="forbid")

    experiment_id: str
    """Unique per run (``run_evals`` makes a uuid hex)."""
    name: str
    """The label of the run."""
    dataset_id: str | None = Field(None, max_length=200)
    """The dataset run, if any."""
    dataset_version: int | None = Field(None, ge=1, le=INT32_MAX)
    """Its version."""
    created_at: datetime | None = None
    """When the run started (left out or null: when the server received the row, so the
    listing and its chart can place every run)."""
    finished_at: datetime | None = None
    """When it ended."""
    status: Literal["running", "completed", "failed"] | None = None
    """Where the run is."""
    target_name: str | None = Field(None, max_length=1000)
    """The agent or workflow."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """git commit, model, thresholds, the user's dict: an object."""
    item_count: int | None = Field(None, ge=0, le=INT32_MAX)
    """Items run."""
    error_count: int | None = Field(None, ge=0, le=INT32_MAX)
    """Items with an error."""
    verdict: str | None = Field(None, max_length=1000)
    """The run's verdict."""

    @field_validator("experiment_id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        return _named(value, "experiment_id")

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return _named(value, "name")


class ExperimentResult(BaseModel):
    """One ``experiment_results`` row; (experiment, item, scorer, repetition) is its key."""

    model_config = ConfigDict(extra="forbid")

    experiment_id: str | None = None
    """The experiment (default: the body's); another one's id is refused."""
    item_id: str = Field(min_length=1, max_length=1000)
    """The dataset item (or the item's position)."""
    scorer_id: str = Field(min_length=1, max_length=1000)
    """The scorer."""
    repetition: int = Field(0, ge=0, le=INT32_MAX)
    """0 for the (item, scorer)'s first result, then 1, 2, ..."""
    score: float | None = None
    """The score (null: an error, or not scorable)."""
    reason: str | None = None
    """The reason."""
    error: str | None = None
    """The scorer's or the target's error."""
    not_scorable: bool | None = None
    """Ended without a score and without an error."""
    output: Any = None
    """What the target answered."""
    trace_id: str | None = None
    """The target's trace."""
    span_id: str | None = None
    """Its agent run span."""
    duration_ms: float | None = None
    """Scorer run time."""
    judge_cost_usd: float | None = None
    """Judge cost."""
    agent_cost_usd: float | None = None
    """The agent's model cost."""


class ExperimentRequest(BaseModel):
    """Body of POST /api/experiments (what ``run_evals(store=URL, experiment=...)`` sends)."""

    experiment: ExperimentRow
    results: list[ExperimentResult] = Field(default_factory=list)

    def rows(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The experiment row and the result rows to store; ``ValueError`` names a result
        whose ``experiment_id`` is another experiment's."""
        experiment_id = self.experiment.experiment_id
        results = []
        for index, result in enumerate(self.results):
            row = result.model_dump()
            if row["experiment_id"] not in (None, experiment_id):
                raise ValueError(f"results[{index}].experiment_id is not the experiment's "
                                 f"({experiment_id!r}); leave it out")
            row["experiment_id"] = experiment_id
            results.append(row)
        experiment = self.experiment.model_dump()
        experiment["created_at"] = experiment["created_at"] or datetime.now(UTC)
        return experiment, results


__all__ = ["ExperimentRequest", "ExperimentResult", "ExperimentRow"]
