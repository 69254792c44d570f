"""What ``compare_experiments`` returns: per scorer averages, pass rates and deltas, and per
item the scorers whose score dropped by more than the threshold, with both outputs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field


class ExperimentInfo(BaseModel):
    """One ``experiments`` row."""

    experiment_id: str
    """Unique per run."""
    name: str
    """The label given as ``run_evals(experiment=...)``."""
    dataset_id: str | None = None
    """The dataset the run used, if any."""
    dataset_version: int | None = None
    """Its version."""
    created_at: datetime | None = None
    """When the run started (UTC)."""
    finished_at: datetime | None = None
    """When it ended (UTC); None while running."""
    status: str | None = None
    """``running``, ``completed`` or ``failed``."""
    target_name: str | None = None
    """The agent's or workflow's name."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """git commit, model, thresholds, lower-is-better scorers and the user's dict."""
    item_count: int | None = None
    """Items that ran."""
    error_count: int | None = None
    """Items with an error."""
    verdict: str | None = None
    """``run_evals``' verdict."""


class ScorerComparison(BaseModel):
    """One scorer across the two experiments."""

    scorer_id: str
    """The scorer's id (its key in ``run_evals``)."""
    lower_is_better: bool
    """True for scorers that measure a fault (hallucination, bias, toxicity, ...)."""
    baseline_avg: float | None
    """Mean of the baseline's non-null scores (None when it has none)."""
    candidate_avg: float | None
    """Mean of the candidate's non-null scores."""
    delta: float | None
    """``candidate_avg - baseline_avg`` (None when either is None)."""
    baseline_pass_rate: float | None
    """Share of the baseline's runs that passed; a null score (an error) does not pass."""
    candidate_pass_rate: float | None
    """The same for the candidate."""
    baseline_errors: int = 0
    """Baseline runs without a score (errors, not scorable, failed targets)."""
    candidate_errors: int = 0
    """Candidate runs without a score."""
    baseline_count: int = 0
    """Baseline runs of this scorer."""
    candidate_count: int = 0
    """Candidate runs of this scorer."""
    regressed: bool = False
    """The average moved the wrong way by more than the threshold, or the error rate rose by
    more than the threshold."""


class ItemScoreChange(BaseModel):
    """One scorer on one item in both experiments."""

    scorer_id: str
    """The scorer."""
    baseline_score: float | None
    """The baseline's score (None: an error)."""
    candidate_score: float | None
    """The candidate's score (None: an error)."""
    drop: float | None
    """How much worse the candidate is (positive = worse, for either direction of scorer);
    None when the candidate errored."""
    baseline_reason: str | None = None
    """The baseline's reason."""
    candidate_reason: str | None = None
    """The candidate's reason."""
    candidate_error: str | None = None
    """The candidate's error, when it has no score."""


class ItemComparison(BaseModel):
    """An item on which some scorer got worse by more than the threshold."""

    item_id: str
    """The dataset item (or the item's position when the data was a plain list)."""
    drops: list[ItemScoreChange]
    """The scorers that got worse, largest drop first."""
    baseline_output: Any = None
    """What the baseline's target answered."""
    candidate_output: Any = None
    """What the candidate's target answered."""


class ExperimentComparison(BaseModel):
    """``compare_experiments``' answer."""

    baseline: ExperimentInfo
    """The experiment compared against."""
    candidate: ExperimentInfo
    """The new experiment."""
    threshold: float
    """The tolerated change."""
    scorers: dict[str, ScorerComparison]
    """Per scorer id."""
    items: list[ItemComparison]
    """Items with a drop, sorted by the largest drop (candidate errors first)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def regressed_scorers(self) -> list[str]:
        """Ids of the scorers that regressed."""
        return [s.scorer_id for s in self.scorers.values() if s.regressed]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def regressed(self) -> bool:
        """True when any scorer regressed (the CI gate)."""
        return bool(self.regressed_scorers)


__all__ = ["ExperimentComparison", "ExperimentInfo", "ItemComparison", "ItemScoreChange",
           "ScorerComparison"]
