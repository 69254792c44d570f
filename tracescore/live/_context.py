"""``LiveContext``: the scheduler as the stages that run and record a pair see it.

The stages of live scoring import one way (selection → execution → recording, with the
coordination behind one protocol, ``_coordination.py``); ``_scheduler.py`` wires them and
passes itself to them as a ``LiveContext``. Typing against this protocol rather than the
scheduler class keeps the stage modules from importing the scheduler (the import circle the
live room had: ``_scheduler`` ↔ ``_worker``, ``_inline``, ``_expand``, ``_spend``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tracescore.store import StoreLike

    from ._budget import BudgetGuard
    from ._config import LiveSettings
    from ._control import RunControl
    from ._retry import RetryPolicy
    from ._rows import PairKey, SpendTotals, WorkItem
    from ._stats import LiveStats


class LiveContext(Protocol):
    """What running and recording one pair needs of the scheduler."""

    settings: LiveSettings
    policy: RetryPolicy
    budget: BudgetGuard
    stats: LiveStats
    control: RunControl
    store: StoreLike
    """The node's own store (its spans; every scoring table on one node)."""
    judge_calls: Any
    """``JudgeCalls``: the judge requests in flight per scorer."""
    judge_price: Any
    """``[pricing]`` for judges (None: litellm's map alone)."""

    @property
    def judge_cache(self) -> Any:
        """The judge-call cache, or None."""
        ...

    @property
    def paused(self) -> dict[str, str]:
        """Scorers paused by an authentication error."""
        ...

    def now(self) -> datetime:
        """Now, naive UTC."""
        ...

    def slot(self) -> asyncio.Semaphore:
        """One of ``concurrency`` scorer-run slots."""
        ...

    async def trace(self, trace_id: str) -> Any:
        """A loaded trace (cached)."""
        ...

    async def load_session(self, key: PairKey) -> Any:
        """The conversation of a session decision as it was when decided."""
        ...

    async def prior_spend(self, key: PairKey, *, besides: Sequence[str] = ()) -> SpendTotals:
        """Judge totals of earlier attempts of a pair."""
        ...

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = (),
                            default: datetime) -> datetime:
        """When the pair's first failed judge call was stored."""
        ...

    async def write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                    decisions: list[dict[str, Any]]) -> None:
        """Write rows in one transaction (shared with other pairs' rows); after the commit."""
        ...

    async def complete(self, item: WorkItem, scores: list[dict[str, Any]],
                       executions: list[dict[str, Any]], decisions: list[dict[str, Any]]
                       ) -> bool:
        """End a held pair with its rows; False when another node took it over."""
        ...

    def submit_write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                     decisions: list[dict[str, Any]]) -> asyncio.Future[None]:
        """Queue rows now (judge executions as they arrive); resolves after their commit."""
        ...

    def withdraw_write(self, future: asyncio.Future[None]) -> bool:
        """Take back rows queued by ``submit_write`` that are not being written yet."""
        ...


__all__ = ["LiveContext"]
