"""What an attempt at a pair came to, as rows: the recording stage of live scoring.

``Outcome`` is what a run of a pair (``_worker``) or of an inline pair (``_inline``) leaves to
write: its decision and the ``scores``, ``judge_executions`` and ``scoring_decisions`` rows.
``retry_outcome`` records a failed attempt that will be tried again (``retrying``, with the
retry policy's verdict: a backoff, a rate-limit cool-down or an authentication pause).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._registry import RegisteredScorer
from ._rows import WorkItem, decision_row, short_error
from ._spend import SpendRecorder

if TYPE_CHECKING:
    from ._context import LiveContext

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Outcome:
    """What a run came to: the rows to write and the decision they record."""

    decision: str
    scores: list[dict[str, Any]] = field(default_factory=list)
    executions: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None
    """The ``scores.status`` written, when the pair ended with a score row."""
    recorder: SpendRecorder | None = None
    """The run's judge-execution recorder (its early writes may still be queued)."""
    result: Any = None
    """The run's ``ScorerRunResult`` when it ended with a score row."""


def retry_outcome(
    live: LiveContext,
    item: WorkItem,
    reg: RegisteredScorer,
    failure: BaseException,
    verdict: Any,
    executions: list[dict[str, Any]],
    now: datetime,
    since: datetime,
) -> Outcome:
    """A failed attempt that runs again: its ``retrying`` decision (after the backoff of
    ``verdict``; none after an authentication error, which pauses the scorer)."""
    key = item.key
    message = short_error(failure)
    next_at: datetime | None = now + timedelta(seconds=verdict.delay_s)
    if verdict.pause_scorer:
        next_at = None
        live.control.pause(reg.id, f"authentication failed: {message}")
        last_error = f"scorer paused (authentication failed): {message}"
    elif verdict.kind in ("rate_limit", "transient"):
        live.control.bump_streak(key, since=since)
        if verdict.kind == "rate_limit":
            live.control.cool_down(reg.id, until=next_at)
        last_error = (f"{verdict.kind.replace('_', ' ')}: {message}; retrying in "
                      f"{verdict.delay_s:.1f}s (no attempt spent)")
    else:
        last_error = (f"attempt {verdict.attempts} of {live.policy.max_attempts} failed: "
                      f"{message}; retrying in {verdict.delay_s:.0f}s")
    logger.info("scorer %s on trace %s span %s: %s", reg.id, key.trace_id, key.span_id,
                last_error)
    row = decision_row(key, "retrying", now=now, attempts=verdict.attempts,
                       last_error=last_error, next_attempt_at=next_at, score_id=key.score_id,
                       created_at=item.created_at)
    return Outcome("retrying", executions=executions, decisions=[row])


__all__ = ["Outcome", "WorkItem", "retry_outcome"]
