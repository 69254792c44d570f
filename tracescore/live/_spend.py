"""``SpendRecorder``: store each judge execution of a live run as soon as its step ends.

Judge spend is money: it must be in ``judge_executions`` once the provider has answered, not
only when the whole run ends. Before this, a ``kill -9`` during a multi-step judge scorer (or
while its rows waited for the write-back) lost the rows of every step that had answered, the
restart called the judge again, and budgets (summed from ``judge_executions``) under-counted.

The recorder is the run's ``observe_judge_executions`` callback. For each finished prompt step it
builds the ``judge_executions`` row and queues it on the write-back at once, without holding up
the run. With the run's first row it also writes the pair's decision as ``retrying`` ("in flight
since ..."), so a restart knows that spend of an unfinished run is on record and adds it to the
pair's final totals. The end-of-run write carries the rows again unless their early write has
committed by then (same ``execution_id``; a row stored meanwhile is left as it is), so an early
write that failed is made good then.

What can still be lost: a judge request that was sent but not answered when the process died
(its usage never reached us; at most ``concurrency`` requests), and a row whose early write had
not committed yet (the write-back's linger, at most 100 ms, and one group commit).

When the run ends while its early writes still wait in the write-back queue (a one-step judge
scorer ends right after its answer), the final write, queued at that same moment, carries the
rows instead (``withdraw_queued``): the store gets each row once rather than twice, and nothing
is stored later than before. Should the final write fail, the withdrawn rows are written on
their own.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from tracescore.model import JudgeExecution, ScorerRunResult
from tracescore.scoring import execution_row

from ._rows import PairKey, SpendTotals, decision_row, plain

if TYPE_CHECKING:
    from ._context import LiveContext

logger = logging.getLogger(__name__)

Row = dict[str, Any]


class SpendRecorder:
    """Writes one pair's judge executions as they finish (see the module docstring)."""

    def __init__(self, live: LiveContext, key: PairKey, *, scorer_id: str, attempts: int,
                 created_at: Any) -> None:
        self._live = live
        self._key = key
        self._scorer_id = scorer_id
        self._attempts = attempts
        self._created_at = created_at
        self._rows: dict[tuple[str, int], Row] = {}
        self._seen: Counter[str] = Counter()
        self._early: list[tuple[asyncio.Future[None], list[Row], list[Row]]] = []
        self._stored: set[str] = set()

    def __call__(self, step: str, execution: JudgeExecution) -> None:
        """The observer: build the row, count its spend, queue its write."""
        index = self._seen[step]
        self._seen[step] += 1
        live, key = self._live, self._key
        now = live.now()
        row = self._row(step, execution, now)
        self._rows[(step, index)] = row
        decisions = []
        if len(self._rows) == 1:
            decisions.append(decision_row(
                key, "retrying", now=now, attempts=self._attempts, score_id=key.score_id,
                created_at=self._created_at,
                last_error=f"in flight since {now:%Y-%m-%d %H:%M:%S}Z; its judge executions are "
                           "stored as they arrive (a restart resumes it)"))
        self._count([row])
        future = live.submit_write([], [row], decisions)
        future.add_done_callback(self._written)
        self._early.append((future, [row], decisions))

    def withdraw_queued(self, final: list[Row]) -> tuple[list[Row], list[Row]]:
        """Take back the early writes still waiting in the write-back queue whose rows are all
        among the run's ``final`` rows. Call right before queueing the final write (with no
        await in between, so nothing is stored later than it would have been): the store then
        gets one copy of each row instead of two. Returns the withdrawn (executions,
        decisions), to write on their own should the final write fail."""
        ids = {row["execution_id"] for row in final}
        executions: list[Row] = []
        decisions: list[Row] = []
        for future, rows, early_decisions in self._early:
            if future.done() and not future.cancelled() and future.exception() is None:
                self._stored.update(row["execution_id"] for row in rows)
            elif all(row["execution_id"] in ids for row in rows) and (
                    self._live.withdraw_write(future)):
                executions.extend(rows)
                decisions.extend(early_decisions)
        self._early.clear()
        return executions, decisions

    def unstored(self, final: list[Row]) -> list[Row]:
        """The run's ``final`` rows less those an early write has committed (seen by
        ``withdraw_queued``): the final write inserts its rows as new (``_writeback``)."""
        if not self._stored:
            return final
        return [row for row in final if row["execution_id"] not in self._stored]

    def rows(self, result: ScorerRunResult | None) -> list[Row]:
        """Every execution row of the run's result: the ones already recorded (same ids), and
        rows for executions the observer did not see (their spend is counted now)."""
        if result is None:
            return []
        now = self._live.now()
        out: list[Row] = []
        late: list[Row] = []
        for step, record in (result.judge or {}).items():
            for index, execution in enumerate(record.executions):
                row = self._rows.get((step, index))
                if row is None:
                    row = self._row(step, execution, now)
                    late.append(row)
                out.append(row)
        self._count(late)
        return out

    def _row(self, step: str, execution: JudgeExecution, now: Any) -> Row:
        key = self._key
        return execution_row(execution, step=step, score_id=key.score_id, trace_id=key.trace_id,
                             scorer_id=self._scorer_id, now=now, to_json=plain)

    def _count(self, rows: list[Row]) -> None:
        if rows:
            self._live.stats.record_spend(self._scorer_id, rows)
            spent = SpendTotals.of(rows)
            self._live.budget.add(cost_usd=spent.cost, tokens=spent.total_tokens)

    def _written(self, future: asyncio.Future[None]) -> None:
        if not future.cancelled() and future.exception() is not None:
            logger.warning("could not store a judge execution of trace %s span %s at once (%s); "
                           "it is written with the run's result", self._key.trace_id,
                           self._key.span_id, future.exception())


__all__ = ["SpendRecorder"]
