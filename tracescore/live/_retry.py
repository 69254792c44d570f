"""What to do after a failed scorer run: retry when, spend an attempt or not, pause the scorer.

Judge errors come classified by ``tracescore.scoring.classify_error``:

- ``rate_limit`` and ``transient`` (429, 5xx, timeouts, connection errors, malformed provider
  answers): retry after the provider's ``Retry-After`` when it sent one, else after a jittered
  exponential backoff; no attempt is spent. Such a failure ``transient_deadline_s`` (``[live]
  transient_retry_deadline_seconds``) or more after the pair's first failure is final (``failed``
  with the last error): a provider that never recovers cannot keep a pair forever.
- ``permanent`` (and any error that is not the judge's): one attempt is spent; the next try waits
  ``retry_base_seconds`` doubled per attempt already spent; after ``max_attempts`` the decision
  is final (``failed``).
- ``auth``: the scorer is paused (a key is missing or wrong; every run would fail the same way)
  and the pair waits, with no attempt spent.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

ErrorKind = Literal["rate_limit", "transient", "auth", "permanent"]


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """The policy's answer for one failure."""

    kind: ErrorKind
    attempts: int
    """Attempts spent on the pair, this failure included when it spent one."""
    final: bool
    """No more tries: record the pair as ``failed``."""
    delay_s: float
    """Wait this long before the next try (0 when final)."""
    pause_scorer: bool = False
    """Stop running this scorer until it is resumed (authentication errors)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Backoff rules of the live scorer (see the module docstring)."""

    max_attempts: int = 3
    retry_base_s: float = 30.0
    transient_base_s: float = 1.0
    transient_max_s: float = 300.0
    transient_deadline_s: float = 3600.0
    """A rate limit or transient error this long after the pair's first failure ends it."""
    jitter: float = 0.1
    """Delays are stretched by a random factor in [1, 1 + jitter) so retries do not align."""

    def decide(
        self,
        kind: ErrorKind,
        *,
        attempts: int,
        transient_streak: int = 0,
        transient_elapsed_s: float = 0.0,
        retry_after_s: float | None = None,
        rng: random.Random | None = None,
    ) -> RetryDecision:
        """Decide after a failure; ``attempts`` were spent before it, ``transient_streak``
        transient failures came in a row just before it, and the pair's first failure was
        ``transient_elapsed_s`` ago."""
        roll = (rng or random).random()
        stretch = 1.0 + self.jitter * roll
        if kind in ("rate_limit", "transient"):
            if transient_elapsed_s >= self.transient_deadline_s:
                return RetryDecision(kind, attempts + 1, final=True, delay_s=0.0)
            if retry_after_s is not None and retry_after_s >= 0:
                delay = min(retry_after_s, self.transient_max_s)
            else:
                delay = min(self.transient_base_s * 2.0**transient_streak, self.transient_max_s)
                delay *= stretch
            return RetryDecision(kind, attempts, final=False, delay_s=delay)
        if kind == "auth":
            return RetryDecision(kind, attempts, final=False, delay_s=0.0, pause_scorer=True)
        spent = attempts + 1
        if spent >= self.max_attempts:
            return RetryDecision(kind, spent, final=True, delay_s=0.0)
        delay = self.retry_base_s * 2.0 ** (spent - 1) * stretch
        return RetryDecision(kind, spent, final=False, delay_s=delay)
