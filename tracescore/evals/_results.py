"""What ``run_evals`` returns: averages, gate and threshold outcomes, a verdict, every item."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Verdict = Literal["passed", "scored", "failed"]
ErrorPhase = Literal["target", "scoring", "completion"]


class _ResultModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=False,
        arbitrary_types_allowed=True,
    )


class GateResult(_ResultModel):
    """A gate's outcome: it passes when it averages 1.0 over the items that scored it."""

    id: str
    """The gate scorer's id."""
    passed: bool
    """True when the average is 1.0."""
    score: float
    """The average score over the items that produced a number."""


class ThresholdResult(_ResultModel):
    """A tracked scorer's outcome against its threshold (inclusive bounds)."""

    id: str
    """The scorer's id."""
    passed: bool
    """True when ``min <= average_score <= max``."""
    average_score: float
    """The average score over the items that produced a number."""
    threshold: float | dict[str, float]
    """The threshold as given: a minimum, or ``{"min": ..., "max": ...}``."""
    group: str | None = None
    """Where the scorer sits in a config form (``agent``, ``trajectory``, ``workflow``,
    ``steps.<step_id>``); None for a flat scorer list."""


class TurnResult(_ResultModel):
    """Per-turn assertions of ``turns`` items, aggregated across items by turn index."""

    index: int
    """The turn's position (0-based)."""
    gate_results: list[GateResult] = Field(default_factory=list)
    """This turn's gates."""
    threshold_results: list[ThresholdResult] = Field(default_factory=list)
    """This turn's scorers that carry a threshold."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Per scorer id (gates excluded: see ``gate_results``), the mean over items that produced
    a number."""


class EvalSummary(_ResultModel):
    """Counts over the whole run."""

    total_items: int
    """Every item, errored ones included."""
    errors: int = 0
    """Items on which the target, a scorer or ``on_item_complete`` failed."""
    not_scorable: dict[str, int] = Field(default_factory=dict)
    """Per scorer id, how many runs ended not scorable (only ids with a non-zero count)."""


class ItemTurnResult(_ResultModel):
    """One turn of one ``turns`` item."""

    index: int
    """The turn's position (0-based)."""
    input: Any = None
    """The turn's input as given."""
    output: Any = None
    """What this turn's assertions saw as output (this turn's messages)."""
    scorer_results: dict[str, Any] = Field(default_factory=dict)
    """Per scorer id, its ``ScorerRunResult`` on this turn."""
    gate_results: dict[str, Any] = Field(default_factory=dict)
    """Per gate id, its ``ScorerRunResult`` on this turn."""


class ItemResult(_ResultModel):
    """One data item's outcome, in data order."""

    index: int
    """The item's position in ``data``."""
    input: Any = None
    """The item's input (``input``, the ``inputs`` list, or the turns' inputs)."""
    output: Any = None
    """What the scorers saw as output: the agent's messages (all turns) or the workflow result."""
    scorer_results: dict[str, Any] = Field(default_factory=dict)
    """Per scorer id, its ``ScorerRunResult``; nested per config key for the config forms."""
    gate_results: dict[str, Any] = Field(default_factory=dict)
    """Per gate id, its ``ScorerRunResult``."""
    turn_results: list[ItemTurnResult] | None = None
    """For ``turns`` items, each turn's input, output and assertion results."""
    trace_id: str | None = None
    """The target's trace id (the last turn's, for multi-turn items), when it returned one."""
    error: str | None = None
    """What went wrong on this item (``"<ExceptionType>: <message>"``), or None."""
    error_phase: ErrorPhase | None = None
    """Where it went wrong: running the target, a scorer, or ``on_item_complete``."""

    @property
    def status(self) -> Literal["success", "failed"]:
        """``failed`` when the item recorded an error."""
        return "failed" if self.error else "success"

    def __repr__(self) -> str:
        scores = {k: getattr(v, "score", None) for k, v in self.scorer_results.items()}
        error = f", error={self.error!r}" if self.error else ""
        return f"ItemResult(index={self.index}, status={self.status!r}, scores={scores}{error})"

    __str__ = __repr__


class EvalResult(_ResultModel):
    """The outcome of ``run_evals``."""

    scores: dict[str, Any] = Field(default_factory=dict)
    """Per scorer id, the mean over items that produced a number; for the config forms nested
    per key (``agent``/``trajectory`` or ``workflow``/``steps``/``trajectory``)."""
    summary: EvalSummary
    """Item, error and not-scorable counts."""
    verdict: Verdict | None = None
    """``failed`` if a gate averaged below 1.0 (or an item errored while gates or thresholds
    were set), else ``scored`` if a threshold was missed, else ``passed``; None when no gate or
    threshold produced a number."""
    gate_results: list[GateResult] | None = None
    """Top-level gates (None when no gates were given)."""
    threshold_results: list[ThresholdResult] | None = None
    """Scorers with a threshold (None when no thresholds were given)."""
    turn_results: list[TurnResult] | None = None
    """Per-turn assertions aggregated by turn index (None when no item has ``turns``)."""
    items: list[ItemResult] = Field(default_factory=list)
    """Every item, in data order."""
    eval_run_id: str
    """This run's id; the ``eval_run_id`` of its rows in the ``scores`` table."""
    store_errors: list[str] = Field(default_factory=list)
    """Writes to ``store=`` that failed (the results above are complete regardless)."""
    experiment_id: str | None = None
    """The recorded experiment's id when ``experiment=`` was given (``experiments``)."""
    agreement_warnings: list[str] = Field(default_factory=list)
    """With ``store=``: gating scorers (gates and scorers with a threshold) whose agreement
    with people (``judge_agreement``) is unknown or below ``agreement_floor``."""

    def __repr__(self) -> str:
        """Verdict, counts and averages; ``.items`` holds the rest."""
        def rounded(value: Any) -> Any:
            if isinstance(value, float):
                return round(value, 4)
            if isinstance(value, dict):
                return {k: rounded(v) for k, v in value.items()}
            return value

        s = self.summary
        parts = [f"verdict={self.verdict!r}", f"items={s.total_items}", f"errors={s.errors}",
                 f"scores={rounded(self.scores)}"]
        if s.not_scorable:
            parts.append(f"not_scorable={s.not_scorable}")
        failed = [g.id for g in self.gate_results or () if not g.passed]
        failed += [t.id for t in self.threshold_results or () if not t.passed]
        if failed:
            parts.append(f"failed={failed}")
        return f"EvalResult({', '.join(parts)})"

    __str__ = __repr__
