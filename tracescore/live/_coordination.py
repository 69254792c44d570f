"""The coordination stage of live scoring: how a node takes, holds and ends pairs.

``LiveCoordination`` names the steps (``docs/cluster.md``, "Coordination"): which traces are
decided, inserting new decisions with the code scorers' scores, claiming due pairs, renewing
and releasing claims, recording judge executions as they arrive, completing a pair (fenced),
and the budget's spend. The scheduler calls only these; two implementations provide them:

- ``LocalCoordination`` (here): one node, its DuckDB file, today's behaviour. The pending rows
  are the queue, a pair in flight is known from memory (the scheduler's ``_inflight``), rows
  go through the write-back's group commit (``_writeback.py``), and nothing needs a lease.
- ``SharedCoordination`` (``_shared.py``): a cluster's PostgreSQL through
  ``tracescore.cluster.PgCoordination`` (claims ``FOR UPDATE SKIP LOCKED`` with a lease and a
  fence, completion fenced in the score's transaction).

``tracescore.cluster.Coordination`` is the storage-level protocol (synchronous, one
transaction per call) that ``PgCoordination`` implements; this one is its asynchronous face
for the scheduler, which a single node serves without any lease or extra transaction (a
synchronous protocol could not carry the write-back's group commit of many pairs' rows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from ._budget import BudgetUsage, over_budget_update, usage_query
from ._outcome import WorkItem
from ._rows import PairKey, SpendTotals
from ._selection import VERSION_STARTS_SQL, decided_query, due_query, open_stats_query
from ._writeback import WriteBack

if TYPE_CHECKING:
    from tracescore.store import StoreLike

Rows = list[dict[str, Any]]
PairId = tuple[str, str, str, str]
"""(trace id, span id, scorer id, scorer version)."""

PRIOR_SPEND_SQL = """
SELECT input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_input_tokens,
       cost_amount, cost_source
FROM judge_executions WHERE score_id = ? AND NOT list_contains(?::VARCHAR[], execution_id)
"""

FIRST_FAILURE_SQL = """
SELECT min(created_at) AS first FROM judge_executions
WHERE score_id = ? AND status = 'failed' AND coalesce(error_code, '') NOT IN ('401', '403')
  AND NOT list_contains(?::VARCHAR[], execution_id)
"""


def pair_id(row: dict[str, Any]) -> PairId:
    """The pair of a decision row."""
    return (row["trace_id"], row["span_id"], row["scorer_id"], row["scorer_version"])


@dataclass(slots=True)
class Prepared:
    """New decisions (and the code scorers' scores) made ready to record, in a worker thread:
    the rows, and what the implementation built from them (a store writer on one node)."""

    decisions: Rows
    scores: Rows
    built: Any = None
    rebuild: Callable[[bool], Any] | None = field(default=None, repr=False)


class LiveCoordination(Protocol):
    """The coordination steps the scheduler takes (see the module docstring)."""

    shared: bool
    """True when other nodes share the queue (claims hold leases; the node's file holds no
    decisions)."""
    owner: str
    """Who claims: the node id (``"local"`` on one node)."""

    async def decided(self, trace_ids: Sequence[str]) -> set[tuple[str, str, str]]:
        """(trace id, scorer id, version) already decided for these traces, by any node."""
        ...

    def prepare(self, decisions: Rows, scores: Rows) -> Prepared:
        """New decisions and scores ready to record (worker thread); raises for a row that does
        not fit its table."""
        ...

    async def record_decisions(self, prepared: Prepared) -> Collection[PairId] | None:
        """Insert prepared decisions and scores in one transaction (a pair already decided
        keeps its decision, and its new score is dropped); the pairs inserted now, or None
        when every one was."""
        ...

    async def write(self, scores: Rows, executions: Rows, decisions: Rows) -> None:
        """Record rows that hold no claim (new session decisions, withdrawn spend)."""
        ...

    async def claim(self, versions: Sequence[tuple[str, str]], *, now: datetime,
                    limit: int) -> list[WorkItem]:
        """Up to ``limit`` due pairs of these (scorer id, version)s, oldest first, held for
        this node."""
        ...

    async def claim_pairs(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Hold these pairs for this node (a backfill's, a rescore's); the ones another node
        holds or decided are left out."""
        ...

    async def renew(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Extend the holds of pairs in flight; returns them renewed (the lost are left out)."""
        ...

    async def release(self, items: Sequence[WorkItem]) -> None:
        """Give held pairs back undecided (a run cancelled at stop)."""
        ...

    def submit_executions(self, scores: Rows, executions: Rows,
                          decisions: Rows) -> asyncio.Future[None]:
        """Record a run's judge executions now, as they arrive (and, on one node, the pair's
        ``retrying`` in-flight note); resolves after their commit."""
        ...

    def withdraw(self, future: asyncio.Future[None]) -> bool:
        """Take back a ``submit_executions`` not yet being written (False: too late)."""
        ...

    async def complete(self, item: WorkItem, *, scores: Rows, executions: Rows,
                       decisions: Rows) -> bool:
        """End a held pair: its decision with its score and executions in one transaction;
        False when the pair was taken over meanwhile (only the executions are kept then)."""
        ...

    async def mark_over_budget(self, versions: Sequence[tuple[str, str]], *, reason: str,
                               now: datetime) -> None:
        """Mark these versions' due, unheld pairs ``over_budget``."""
        ...

    async def spend(self, now: datetime) -> BudgetUsage:
        """The judge spend of the hour and day before ``now`` (after the writes counted so far
        are committed)."""
        ...

    async def prior_spend(self, key: PairKey, *, besides: Sequence[str] = ()) -> SpendTotals:
        """Judge totals of earlier attempts of a pair (less the executions ``besides``)."""
        ...

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = ()
                            ) -> datetime | None:
        """When the pair's first failed judge call (authentication aside) was stored."""
        ...

    async def version_starts(self) -> dict[tuple[str, str], datetime]:
        """Each scorer version's first decision."""
        ...

    async def open_stats(self, versions: Sequence[tuple[str, str]]
                         ) -> tuple[int, datetime | None]:
        """Traces with open decisions of these versions, and the oldest open decision."""
        ...

    async def leads(self, role: str) -> bool:
        """True when this node is the one that does ``role`` (``"monitors"``) now."""
        ...

    async def close(self) -> None:
        """Commit what is queued and give back what is held."""
        ...


class LocalCoordination:
    """``LiveCoordination`` on one node's store: the behaviour of a single tracescore."""

    shared = False
    owner = "local"

    def __init__(self, store: StoreLike) -> None:
        self.store = store
        self.writeback = WriteBack(store)

    async def _read(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.store.read, sql, list(params))

    async def decided(self, trace_ids: Sequence[str]) -> set[tuple[str, str, str]]:
        """See ``LiveCoordination.decided``."""
        return {(r["trace_id"], r["scorer_id"], r["scorer_version"])
                for r in await self._read(*decided_query(trace_ids))}

    def prepare(self, decisions: Rows, scores: Rows) -> Prepared:
        """Build the store writer (every row new: plain ``INSERT``) and its rebuilder (for
        ``DuplicateRows``: a backfill that expanded the same trace meanwhile)."""
        from tracescore.store import score_rows_writer

        def build(fresh: bool) -> Any:
            return score_rows_writer(scores, (), decisions, fresh=fresh)

        return Prepared(decisions, scores, build(True), build)

    async def record_decisions(self, prepared: Prepared) -> Collection[PairId] | None:
        """Write the prepared rows; rows met stored are written again as replacements."""
        from tracescore.store import DuplicateRows

        assert prepared.rebuild is not None
        try:
            await self.store.write(prepared.built)
        except DuplicateRows:
            await self.store.write(await asyncio.to_thread(prepared.rebuild, False))
        return None

    async def write(self, scores: Rows, executions: Rows, decisions: Rows) -> None:
        """Through the write-back (one group commit with other pairs' rows)."""
        await self.writeback.write(scores, executions, decisions)

    async def claim(self, versions: Sequence[tuple[str, str]], *, now: datetime,
                    limit: int) -> list[WorkItem]:
        """The due pairs (the scheduler skips the ones in flight in this process)."""
        out = []
        for row in await self._read(*due_query(list(versions), now=now, limit=limit)):
            out.append(work_item(row))
        return out

    async def claim_pairs(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Every pair: one process, and the scheduler's in-flight set guards it."""
        return list(items)

    async def renew(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Nothing to renew: no lease on one node."""
        return list(items)

    async def release(self, items: Sequence[WorkItem]) -> None:
        """Nothing to release: a pending row is due again as it is."""

    def submit_executions(self, scores: Rows, executions: Rows,
                          decisions: Rows) -> asyncio.Future[None]:
        """Queued on the write-back now (in order with every later write)."""
        return self.writeback.submit(scores, executions, decisions)

    def withdraw(self, future: asyncio.Future[None]) -> bool:
        """See ``WriteBack.withdraw``."""
        return self.writeback.withdraw(future)

    async def complete(self, item: WorkItem, *, scores: Rows, executions: Rows,
                       decisions: Rows) -> bool:
        """Through the write-back; always True (nobody else takes the pair)."""
        await self.writeback.write(scores, executions, decisions)
        return True

    async def mark_over_budget(self, versions: Sequence[tuple[str, str]], *, reason: str,
                               now: datetime) -> None:
        """One update through the store's writer."""
        if versions:
            await self.store.write(over_budget_update(list(versions), reason=reason, now=now))

    async def spend(self, now: datetime) -> BudgetUsage:
        """Commit the write-back, then read ``judge_executions``."""
        await self.writeback.flush()  # spend counted so far is in judge_executions
        [row] = await self._read(*usage_query(now))
        return BudgetUsage(float(row["cost_hour"]), float(row["cost_day"]),
                           int(row["tokens_hour"]))

    async def prior_spend(self, key: PairKey, *, besides: Sequence[str] = ()) -> SpendTotals:
        """See ``LiveCoordination.prior_spend``."""
        return SpendTotals.of(await self._read(PRIOR_SPEND_SQL, [key.score_id, list(besides)]))

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = ()
                            ) -> datetime | None:
        """See ``LiveCoordination.first_failure``."""
        [row] = await self._read(FIRST_FAILURE_SQL, [key.score_id, list(besides)])
        first = row["first"]
        return first if isinstance(first, datetime) else None

    async def version_starts(self) -> dict[tuple[str, str], datetime]:
        """See ``LiveCoordination.version_starts``."""
        return {(r["scorer_id"], r["scorer_version"]): r["first_decided"]
                for r in await self._read(VERSION_STARTS_SQL, [])}

    async def open_stats(self, versions: Sequence[tuple[str, str]]
                         ) -> tuple[int, datetime | None]:
        """See ``LiveCoordination.open_stats``."""
        [row] = await self._read(*open_stats_query(list(versions)))
        return int(row["traces"] or 0), row["oldest"]

    async def leads(self, role: str) -> bool:
        """Always: one node."""
        return True

    async def close(self) -> None:
        """Commit what the write-back holds."""
        await self.writeback.flush()


def work_item(row: dict[str, Any], **extra: Any) -> WorkItem:
    """The ``WorkItem`` of a due decision row (``due_query``'s columns)."""
    key = PairKey(row["trace_id"], row["span_id"], row["scorer_id"], row["scorer_version"],
                  session_id=row["session_id"])
    if row["score_id"] and row["score_id"] != key.score_id:
        key = PairKey(key.trace_id, key.span_id, key.scorer_id, key.scorer_version,
                      session_id=key.session_id, rescored_as=row["score_id"])
    return WorkItem(key, row["decision"], int(row["attempts"] or 0), row["created_at"],
                    **extra)


__all__ = [
    "FIRST_FAILURE_SQL",
    "PRIOR_SPEND_SQL",
    "LiveCoordination",
    "LocalCoordination",
    "PairId",
    "Prepared",
    "pair_id",
    "work_item",
]
