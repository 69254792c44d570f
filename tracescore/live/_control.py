"""Holds on scorers and pairs: authentication pauses, rate-limit cool-downs, transient streaks."""

from __future__ import annotations

import logging
from datetime import datetime

from ._rows import PairKey

logger = logging.getLogger(__name__)


class RunControl:
    """What the scheduler must not run right now, and how often a pair failed transiently."""

    def __init__(self) -> None:
        self.paused: dict[str, str] = {}
        """scorer id → why it is paused (an authentication error)."""
        self.cooldown: dict[str, datetime] = {}
        """scorer id → until when its pairs wait (the provider's Retry-After)."""
        self._streaks: dict[PairKey, int] = {}
        self._since: dict[PairKey, datetime] = {}

    def pause(self, scorer_id: str, reason: str) -> None:
        """Stop running a scorer until ``resume``."""
        if scorer_id not in self.paused:
            logger.error("scorer %s paused: %s; fix the judge's credentials, then restart "
                         "tracescore (or POST /api/live/scorers/%s/resume)", scorer_id, reason,
                         scorer_id)
        self.paused[scorer_id] = reason

    def resume(self, scorer_id: str) -> bool:
        """Run a paused scorer again; False when it was not paused."""
        return self.paused.pop(scorer_id, None) is not None

    def cool_down(self, scorer_id: str, *, until: datetime | None) -> None:
        """Hold a rate-limited scorer's pairs until the provider's wait is over."""
        if until is not None:
            self.cooldown[scorer_id] = max(until, self.cooldown.get(scorer_id, until))

    def held(self, scorer_id: str, now: datetime) -> bool:
        """True while a scorer is paused or cooling down."""
        return scorer_id in self.paused or self.cooldown.get(scorer_id, now) > now

    def streak(self, key: PairKey) -> int:
        """Transient failures of a pair in a row."""
        return self._streaks.get(key, 0)

    def streak_since(self, key: PairKey) -> datetime | None:
        """When the pair's transient-retry window began, i.e. its first failure (None: not
        known to this process yet; the worker then reads it from ``judge_executions``)."""
        return self._since.get(key)

    def bump_streak(self, key: PairKey, *, since: datetime) -> None:
        """Count one more transient failure of a pair; ``since`` is when its retry window
        began, kept from the first call."""
        self._streaks[key] = self._streaks.get(key, 0) + 1
        self._since.setdefault(key, since)

    def forget_streak(self, key: PairKey) -> None:
        """A pair ended: forget its transient failures."""
        self._streaks.pop(key, None)
        self._since.pop(key, None)
