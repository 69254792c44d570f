"""Errors of the scoring room.

::

    TracescoreError                     (tracescore.model)
    ├── ScorerDefinitionError           a scorer built wrongly (missing id, bad step, no judge)
    │   └── PipelineIncompleteError     also a ScorerRunError: found when a run starts
    ├── ScorerRunError                  a step of a scorer run failed; carries the snapshot
    ├── JudgeOutputError                the judge gave no valid answer (a ScorerRunError cause)
    │   └── ScoreOutOfRange             a prompt step's score outside its declared range
    └── JudgeTimeoutError               the judge did not answer within its timeout (also a
                                        TimeoutError: transient, retried)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tracescore.model import TracescoreError

if TYPE_CHECKING:
    from tracescore.model import ScorerRunResult


class ScorerDefinitionError(TracescoreError, ValueError):
    """A scorer or one of its steps was defined wrongly; the message names the scorer and step."""


class JudgeOutputError(TracescoreError):
    """The judge answered, but not with text or an object that matches the step's schema."""

    code = "invalid_output"

    def __init__(self, message: str, *, raw_output: str | None = None) -> None:
        super().__init__(message)
        self.raw_output = raw_output


class JudgeTimeoutError(TracescoreError, TimeoutError):
    """A judge request did not answer within the timeout of ``judge_options``; the message
    names the setting it came from."""

    code = "judge_timeout"

    @classmethod
    def after(cls, *, model: str | None, api_base: str | None, timeout_s: float,
              setting: str | None) -> JudgeTimeoutError:
        """The error of a request to ``model`` that waited ``timeout_s`` (from ``setting``)."""
        where = f" at {api_base}" if api_base else ""
        named = setting or f"a judge timeout of {timeout_s:g} s"
        return cls(f"the judge {model}{where} did not answer within {timeout_s:g} s "
                   f"({named}); raise that setting if the judge is only slow, else check the "
                   "judge")


class ScoreOutOfRange(JudgeOutputError, ValueError):
    """A prompt ``generate_score`` step's score lies outside the step's ``score_range`` (or is
    not a finite number): the step fails with the value in the message, never a success."""

    code = "score_out_of_range"

    def __init__(self, value: float, score_range: tuple[float, float], *,
                 raw_output: str | None = None) -> None:
        low, high = score_range
        super().__init__(
            f"the judge's score {value!r} is outside the step's score_range [{low:g}, {high:g}]"
            "; the step failed instead of storing it (give the PromptStep another score_range "
            "if the scale is meant to be different)", raw_output=raw_output)
        self.value = value
        self.score_range = score_range


def _error_code(exc: BaseException) -> str | int | None:
    code = getattr(exc, "status_code", None)
    if code is None:
        code = getattr(exc, "code", None)
    return code if isinstance(code, str | int) else None


class ScorerRunError(TracescoreError):
    """A step of a scorer run failed.

    Attributes:
        scorer_id: the scorer's id.
        failed_step: the step that failed (``prepare_run``, ``preprocess``, ``analyze``,
            ``generate_score`` or ``generate_reason``).
        completed_steps: the steps that finished before it, in order.
        result: a ``ScorerRunResult`` snapshot with the completed steps' outputs and every judge
            execution (the failed step's included); None when nothing ran.
        cause: the original exception (also ``__cause__``).
    """

    def __init__(
        self,
        failed_step: str,
        completed_steps: Sequence[str] = (),
        result: ScorerRunResult | None = None,
        cause: BaseException | None = None,
        *,
        scorer_id: str | None = None,
        message: str | None = None,
    ) -> None:
        self.scorer_id = scorer_id
        self.failed_step = failed_step
        self.completed_steps = list(completed_steps)
        self.result = result
        self.cause = cause
        if message is None:
            who = f"scorer {scorer_id!r}" if scorer_id else "scorer"
            done = ", ".join(self.completed_steps) or "none"
            why = f"{type(cause).__name__}: {cause}" if cause is not None else "unknown error"
            message = f"{who} failed at step {failed_step!r} (completed: {done}): {why}"
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_run_error,
            (type(self), self.failed_step, self.completed_steps, self.result, self.cause,
             self.scorer_id, self.message),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (no ``result``): what failed, after what, and why."""
        cause: dict[str, Any] | None = None
        if self.cause is not None:
            cause = {
                "name": type(self.cause).__name__,
                "message": str(self.cause),
                "code": _error_code(self.cause),
            }
        return {
            "name": type(self).__name__,
            "message": self.message,
            "scorer_id": self.scorer_id,
            "failed_step": self.failed_step,
            "completed_steps": list(self.completed_steps),
            "cause": cause,
        }


def _rebuild_run_error(cls: type[ScorerRunError], *args: Any) -> ScorerRunError:
    failed_step, completed, result, cause, scorer_id, message = args
    err = cls.__new__(cls)
    ScorerRunError.__init__(
        err, failed_step, completed, result, cause, scorer_id=scorer_id, message=message
    )
    return err


class PipelineIncompleteError(ScorerDefinitionError, ScorerRunError):
    """A run cannot start: no ``generate_score`` step, or a prompt step has no judge model or
    instructions. Raised by ``Scorer.run`` before any step runs (so ``result`` is None)."""

    def __init__(self, message: str, *, scorer_id: str | None, step: str) -> None:
        ScorerRunError.__init__(self, step, (), None, None, scorer_id=scorer_id, message=message)
