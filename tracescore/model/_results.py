"""Scorer runs and their results, with the judge execution records behind them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import Model
from ._ids import new_run_id

ExecutionStatus = Literal["success", "failed"]
StepName = Literal["preprocess", "analyze", "generate_score", "generate_reason"]


class JudgeUsage(Model):
    """Token usage of judge calls, normalised across providers."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        """Sum two usages field by field."""
        return JudgeUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in JudgeUsage.model_fields}
        )


Usage = JudgeUsage


class JudgeCost(Model):
    """What judge calls cost, when it can be priced."""

    amount: float
    unit: Literal["USD"] = "USD"
    source: str = "litellm"
    """Where the price came from: ``litellm`` (its price map), ``config`` (``[pricing]``) or
    ``cache`` (an answer from the judge-call cache, 0)."""


class JudgeError(Model):
    """Why a judge execution failed."""

    name: str
    message: str
    code: str | int | None = None


class JudgeExecution(Model):
    """One prompt step's judge work: every attempt it sent, what came back, and what it cost."""

    status: ExecutionStatus
    prompt: str | None = None
    judge_model_id: str | None = None
    judge_provider: str | None = None
    attempt_count: int = 0
    """Requests sent to the provider for this step (retries and structured-output fallback)."""
    model_call_count: int = 0
    """Requests that returned a completion."""
    duration_ms: float = 0.0
    output: Any = None
    raw_output: str | None = None
    usage: JudgeUsage | None = None
    cost: JudgeCost | None = None
    finish_reason: str | None = None
    error: JudgeError | None = None
    response_model: str | None = None
    """The model the provider said answered (the reply's ``model``), for drift checks."""
    system_fingerprint: str | None = None
    """The provider's ``system_fingerprint`` of the reply, where it sends one."""
    cached: bool = False
    """True when the answer came from the judge-call cache: no request was sent, cost 0."""
    saved_cost: float | None = None
    """For a cached answer, what the original call cost in USD (None when it was unpriced)."""
    confidence: float | None = None
    """The reply's confidence from its token log-probabilities (the probability of its least
    likely token), when they were asked for and the provider gave them."""

    @property
    def unpriced(self) -> bool:
        """True when the provider answered but no price is known for the judge's model."""
        return not self.cached and self.cost is None and self.model_call_count > 0


class StepJudge(Model):
    """The judge executions of one step."""

    executions: list[JudgeExecution] = Field(default_factory=list)


class ScorerRun(Model):
    """What a scorer is asked to score."""

    run_id: str = Field(default_factory=new_run_id)
    input: Any = None
    output: Any = None
    ground_truth: Any = None
    expected_trajectory: Any = None
    request_context: dict[str, Any] | None = None
    trace_id: str | None = None
    span_id: str | None = None


class NotScorable(Model):
    """Why a run ended without a score."""

    step: str
    reason: str | None = None


class ScorerRunResult(Model):
    """A scorer run's outcome: score, reason, each step's result and prompt, judge executions."""

    run_id: str
    scorer_id: str | None = None
    score: float | None = None
    reason: str | None = None
    preprocess_step_result: Any = None
    analyze_step_result: Any = None
    preprocess_prompt: str | None = None
    analyze_prompt: str | None = None
    generate_score_prompt: str | None = None
    generate_reason_prompt: str | None = None
    judge: dict[str, StepJudge] = Field(default_factory=dict)
    """Per step name, the judge executions it made."""
    not_scorable: NotScorable | None = None
    input: Any = None
    output: Any = None
    ground_truth: Any = None
    expected_trajectory: Any = None
    request_context: dict[str, Any] | None = None
    decided_by: str | None = None
    """Which judge decided the score, for scorers that choose between judges (a cascade:
    ``cheap`` or ``expensive``); None otherwise."""

    def judge_usage(self) -> JudgeUsage:
        """Total token usage of every judge execution of the run."""
        total = JudgeUsage()
        for step in self.judge.values():
            for ex in step.executions:
                if ex.usage is not None:
                    total = total + ex.usage
        return total

    def judge_cost(self) -> float | None:
        """Total priced cost in USD, or None when no execution could be priced."""
        amounts = [
            ex.cost.amount
            for s in self.judge.values()
            for ex in s.executions
            if ex.cost is not None
        ]
        return sum(amounts) if amounts else None
