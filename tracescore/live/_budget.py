"""Judge spending caps over sliding windows, computed from the ``judge_executions`` table.

The spend of the last hour and day is read from the database (so a restart does not reset it),
then the spend of runs finished since that read is added in memory until the next read. A read
forgets only what was counted before it began (``begin_snapshot``; the scheduler first commits
the write-back, so that spend is in the table): spend counted while it runs stays counted.
When a cap is reached, judge scorers wait (decision ``over_budget``) and resume as the window
slides on.
Runs already in flight finish, so a cap can be passed by at most the runs in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ._config import BudgetSettings

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)

USAGE_SQL = """
SELECT
  coalesce(sum(cost_amount) FILTER (WHERE created_at >= $1
                                    AND coalesce(cost_unit, 'USD') = 'USD'), 0) AS cost_hour,
  coalesce(sum(cost_amount) FILTER (WHERE coalesce(cost_unit, 'USD') = 'USD'), 0) AS cost_day,
  coalesce(sum(coalesce(total_tokens, coalesce(input_tokens, 0) + coalesce(output_tokens, 0)))
           FILTER (WHERE created_at >= $1), 0) AS tokens_hour
FROM judge_executions
WHERE created_at >= $2
"""


@dataclass(frozen=True, slots=True)
class BudgetUsage:
    """Judge spend inside the budget windows."""

    cost_usd_hour: float = 0.0
    cost_usd_day: float = 0.0
    tokens_hour: int = 0

    def __add__(self, other: BudgetUsage) -> BudgetUsage:
        """Sum two usages."""
        return BudgetUsage(
            self.cost_usd_hour + other.cost_usd_hour,
            self.cost_usd_day + other.cost_usd_day,
            self.tokens_hour + other.tokens_hour,
        )


def usage_query(now_utc: datetime) -> tuple[str, list[Any]]:
    """The SQL and parameters reading the spend of the windows ending at ``now_utc`` (naive UTC)."""
    return USAGE_SQL, [now_utc - HOUR, now_utc - DAY]


def over_budget_reason(settings: BudgetSettings, usage: BudgetUsage) -> str | None:
    """Say which cap the usage reached, or None when judge runs may go on."""
    caps = (
        (settings.max_judge_cost_usd_per_hour, usage.cost_usd_hour, "judge cost of the last hour",
         "max_judge_cost_usd_per_hour", "${:.4f}"),
        (settings.max_judge_cost_usd_per_day, usage.cost_usd_day, "judge cost of the last 24 h",
         "max_judge_cost_usd_per_day", "${:.4f}"),
        (settings.max_judge_tokens_per_hour, usage.tokens_hour, "judge tokens of the last hour",
         "max_judge_tokens_per_hour", "{:.0f}"),
    )
    for cap, spent, what, key, fmt in caps:
        if cap and spent >= cap:
            return (
                f"over budget: {what} is {fmt.format(spent)}, the cap is {fmt.format(cap)} "
                f"([live.budget] {key}); waiting for the window to move on"
            )
    return None


class BudgetGuard:
    """The budget state of one live scorer: a snapshot from the tables plus spend since then."""

    def __init__(self, settings: BudgetSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._snapshot = BudgetUsage()
        self._reading = BudgetUsage()
        self._since = BudgetUsage()

    @property
    def active(self) -> bool:
        """True when at least one cap is set."""
        s = self.settings
        return bool(
            s.max_judge_cost_usd_per_hour or s.max_judge_cost_usd_per_day
            or s.max_judge_tokens_per_hour
        )

    def begin_snapshot(self) -> None:
        """Say a read of the tables' spend begins now: the spend counted so far is what the
        next ``set_snapshot`` replaces (it must be stored by then)."""
        with self._lock:
            self._reading = self._reading + self._since
            self._since = BudgetUsage()

    def set_snapshot(self, usage: BudgetUsage) -> None:
        """Replace the spend read from the tables (forgetting the spend counted before
        ``begin_snapshot``, which it holds; spend counted since is kept)."""
        with self._lock:
            self._snapshot = usage
            self._reading = BudgetUsage()

    def add(self, *, cost_usd: float | None, tokens: int | None) -> None:
        """Count a finished run's spend until the next snapshot."""
        extra = BudgetUsage(cost_usd or 0.0, cost_usd or 0.0, tokens or 0)
        with self._lock:
            self._since = self._since + extra

    def usage(self) -> BudgetUsage:
        """The spend the caps are compared with."""
        with self._lock:
            return self._snapshot + self._reading + self._since

    def exceeded(self) -> str | None:
        """Which cap is reached, or None."""
        if not self.active:
            return None
        return over_budget_reason(self.settings, self.usage())


def over_budget_update(
    versions: Sequence[tuple[str, str]], *, reason: str, now: datetime
) -> Callable[[Any], None]:
    """A store write marking the due pending/retrying pairs of these (scorer id, version) as
    ``over_budget`` with ``reason``."""
    values = ", ".join("(?, ?)" for _ in versions)
    sql = ("UPDATE scoring_decisions SET decision = 'over_budget', last_error = ?, updated_at = ? "
           "WHERE decision IN ('pending', 'retrying') "
           "AND (next_attempt_at IS NULL OR next_attempt_at <= ?) "
           f"AND (scorer_id, scorer_version) IN (VALUES {values})")
    params = [reason, now, now, *[x for pair in versions for x in pair]]

    def mark(conn: Any) -> None:
        conn.execute(sql, params)

    return mark
