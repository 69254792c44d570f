"""``SharedCoordination``: live's coordination steps on a cluster's shared queue.

It is the asynchronous face of a storage-level ``tracescore.cluster.Coordination`` (in
practice ``PgCoordination``: PostgreSQL, one transaction per call), so the scheduler runs the
same code on one node and on many. What changes against ``LocalCoordination``:

- A pair is held by a claim (owner, fence, lease) taken ``FOR UPDATE SKIP LOCKED``; the
  scheduler renews the leases of its pairs in flight every quarter lease, and a pair whose
  lease ended (the node paused, partitioned or killed) is claimed by another node with a new
  fence. A node takes the pairs it decided itself (their traces are in its file and cache)
  first; another node's once they have waited a lease (a node behind, or gone).
- A run's end (``complete``) is fenced on owner and fence in the score's own transaction: a
  node that lost the pair writes only its judge executions (they were paid for).
- Judge executions are committed as they arrive (no linger): they queue for the coordination
  thread, which takes everything queued by the time it is free (executions, completions) in
  one statement (one round trip; each completion still fenced on its own claim). A run's
  end takes back its rows still queued and carries them in its completion, and waits for
  those being written (the completion, on the same thread, would wait for them anyway), so
  each row is sent to PostgreSQL once. There is no ``retrying`` in-flight note: a pair
  claimed before (fence > 1) reads its earlier spend.
- New decisions go in with ``ON CONFLICT DO NOTHING``: the first node to decide a pair wins,
  and a code scorer's score goes in only with its own decision.

Every call runs on one thread of its own (the storage object has one connection behind a
lock), so PostgreSQL round trips never take the default worker threads that store reads use.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from ._budget import BudgetUsage
from ._coordination import PairId, Prepared, Rows, pair_id
from ._rows import PairKey, SpendTotals, WorkItem

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_LEASE_S = 30.0
"""How long a claim holds a pair unless renewed (``[cluster] lease_seconds``)."""

OPEN_STATS_SHARE = 0.02
"""At most this share of a node's time goes to reading the cluster's open backlog for the
gauges (``open_stats`` counts every open pair: its cost grows with the backlog)."""


@dataclass(slots=True)
class CostPaced:
    """A value read from the shared store, read again only once its last read's cost allows:
    a read that took ``t`` seconds is kept ``t / share`` seconds (a cheap read every time it
    is asked for, a dear one less often). Times are ``time.monotonic()`` seconds."""

    share: float
    key: Any = None
    value: Any = None
    kept_until: float = float("-inf")

    def fresh(self, key: Any, now: float) -> bool:
        """True when the value kept for ``key`` may still be used at ``now``."""
        return key == self.key and now < self.kept_until

    def keep(self, key: Any, value: Any, *, started: float, ended: float) -> None:
        """Keep ``value``, read for ``key`` from ``started`` to ``ended``."""
        self.key, self.value = key, value
        self.kept_until = ended + (ended - started) / self.share


def _item(claim: Any) -> WorkItem:
    key = PairKey(claim.trace_id, claim.span_id, claim.scorer_id, claim.scorer_version,
                  session_id=claim.session_id)
    return WorkItem(key, claim.decision, int(claim.attempts or 0), claim.created_at,
                    claim=claim)


End = tuple[Any, dict[str, Any], Rows]
"""A completion: the claim, its decision row, its score rows."""


@dataclass(slots=True)
class _Queued:
    """A write waiting for the coordination thread: execution rows, and a completion or
    None; ``outcome`` (None, the completion's held flag, or an exception) once written."""

    future: asyncio.Future[Any]
    rows: Rows
    end: End | None
    outcome: Any = None


class SharedCoordination:
    """``LiveCoordination`` over a cluster's ``Coordination`` (see the module docstring)."""

    shared = True

    def __init__(self, coordination: Any, *, owner: str, lease_s: float = DEFAULT_LEASE_S,
                 control: Any = None) -> None:
        self.coordination = coordination
        """Records rows: decisions, executions, completions (the busy path)."""
        self.control = control if control is not None else coordination
        """Takes, renews and gives back claims, asks what is decided, who leads: on a
        connection and a thread of its own when given, so a renewal never queues behind a
        burst of judge executions."""
        self.owner = owner
        self.lease_s = lease_s
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="tracescore-coordination")
        self._control_executor = (
            self._executor if self.control is coordination
            else ThreadPoolExecutor(1, thread_name_prefix="tracescore-claims"))
        self._queue: list[_Queued] = []
        """Executions and completions waiting for the coordination thread."""
        self._queue_lock = threading.Lock()
        self._draining = False
        """A write of the queue is on its way to the coordination thread (or on it)."""
        self._writing: dict[str, asyncio.Future[None]] = {}
        """Execution id → its early write, from ``submit_executions`` until that resolves."""
        self._open_stats = CostPaced(OPEN_STATS_SHARE)
        self.counts = {"claimed": 0, "released": 0, "renewed": 0, "leases_lost": 0,
                       "taken_over": 0}
        """What this node did with claims since it started (``GET /api/cluster``):
        ``leases_lost`` renewals that found the pair held by another node, ``taken_over`` runs
        whose completion was fenced out (their result dropped)."""

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        executor = (self._control_executor if getattr(fn, "__self__", None) is self.control
                    else self._executor)
        return await loop.run_in_executor(executor, lambda: fn(*args, **kwargs))

    async def decided(self, trace_ids: Sequence[str]) -> set[tuple[str, str, str]]:
        """See ``LiveCoordination.decided``."""
        if not trace_ids:
            return set()
        found: set[tuple[str, str, str]] = await self._call(self.control.decided,
                                                             list(trace_ids))
        return found

    def prepare(self, decisions: Rows, scores: Rows) -> Prepared:
        """The rows, each decision marked with this node as its ``home`` (the node whose file
        and cache hold the trace: other nodes take its pairs only once they waited)."""
        return Prepared([{**row, "home": self.owner} for row in decisions], scores)

    async def record_decisions(self, prepared: Prepared) -> Collection[PairId] | None:
        """``ON CONFLICT DO NOTHING``: the pairs this node decided first."""
        if not prepared.decisions:
            return set()
        inserted: set[PairId] = await self._call(self.coordination.record_decisions,
                                                 prepared.decisions, prepared.scores)
        return inserted

    async def write(self, scores: Rows, executions: Rows, decisions: Rows) -> None:
        """New decisions (with their scores) and executions; nothing here holds a claim."""
        if executions:
            await self._call(self.coordination.record_executions, executions)
        if decisions:
            await self._call(self.coordination.record_decisions,
                             self.prepare(decisions, scores).decisions, scores)

    async def claim(self, versions: Sequence[tuple[str, str]], *, now: datetime,
                    limit: int) -> list[WorkItem]:
        """``FOR UPDATE SKIP LOCKED`` with a lease of ``lease_s``."""
        claims = await self._call(self.control.claim, list(versions), owner=self.owner,
                                  now=now, limit=limit, lease_s=self.lease_s,
                                  steal_after_s=self.lease_s)
        self.counts["claimed"] += len(claims)
        return [_item(c) for c in claims]

    async def claim_pairs(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Claims for pairs handed to this node directly (a backfill's)."""
        held = [i for i in items if i.claim is not None]
        wanted = [(i.key.trace_id, i.key.span_id, i.key.scorer_id, i.key.scorer_version)
                  for i in items if i.claim is None]
        if not wanted:
            return held
        claims = await self._call(self.control.claim_pairs, wanted, owner=self.owner,
                                  now=now, lease_s=self.lease_s)
        self.counts["claimed"] += len(claims)
        by_pair = {c.pair: c for c in claims}
        out = list(held)
        for item in items:
            claim = by_pair.get((item.key.trace_id, item.key.span_id, item.key.scorer_id,
                                 item.key.scorer_version))
            if item.claim is None and claim is not None:
                fresh = _item(claim)
                out.append(WorkItem(item.key, fresh.decision, fresh.attempts,
                                    fresh.created_at, claim=claim))
        return out

    async def renew(self, items: Sequence[WorkItem], *, now: datetime) -> list[WorkItem]:
        """Extend the leases still held; the lost ones are logged and left out."""
        claims = [i.claim for i in items if i.claim is not None]
        if not claims:
            return []
        renewed = await self._call(self.control.renew, claims, now=now,
                                   lease_s=self.lease_s)
        held = {c.pair: c for c in renewed}
        out = []
        for item in items:
            claim = held.get(item.claim.pair) if item.claim is not None else None
            if claim is None:
                self.counts["leases_lost"] += 1
                logger.warning("lost the lease on trace %s span %s (%s): another node may "
                               "score it; this run's result will be dropped",
                               item.key.trace_id, item.key.span_id, item.key.scorer_id)
                continue
            out.append(WorkItem(item.key, item.decision, item.attempts, item.created_at,
                                claim=claim))
        self.counts["renewed"] += len(out)
        return out

    async def release(self, items: Sequence[WorkItem]) -> None:
        """Give the claims back (others may claim the pairs at once)."""
        claims = [i.claim for i in items if i.claim is not None]
        if claims:
            await self._call(self.control.release, claims)
            self.counts["released"] += len(claims)

    def submit_executions(self, scores: Rows, executions: Rows,
                          decisions: Rows) -> asyncio.Future[None]:
        """Commit the executions now: queued for the coordination thread, which writes every
        row queued by then in one statement (the decisions, a one-node in-flight note, are
        not written: a claim's fence tells the next holder to read earlier spend)."""
        rows = list(executions)
        future: asyncio.Future[None] = self._enqueue(rows, None)
        for row in rows:
            self._writing[row["execution_id"]] = future
        future.add_done_callback(lambda _: self._forget(rows, future))
        return future

    def _enqueue(self, rows: Rows, end: End | None) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._queue_lock:
            self._queue.append(_Queued(future, rows, end))
            start, self._draining = not self._draining, True
        if start:
            self._drain(loop)
        return future

    def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            job = loop.run_in_executor(self._executor, self._write_queued)
        except RuntimeError as exc:  # closed (stopping): nothing is written any more
            with self._queue_lock:
                taken, self._queue, self._draining = self._queue, [], False
            for queued in taken:
                queued.outcome = exc
            self._resolve(taken)
            return
        job.add_done_callback(self._drained)

    def _write_queued(self) -> list[_Queued]:
        """On the coordination thread: everything queued by now in one statement (the
        completions with every execution row); should it fail, each part on its own, so one
        pair's bad row fails only that pair's write."""
        with self._queue_lock:
            taken, self._queue = self._queue, []
        try:
            self._write(taken)
        except Exception as exc:  # noqa: BLE001 - each write's future carries it
            if len(taken) == 1:
                taken[0].outcome = exc
                return taken
            for queued in taken:
                try:
                    self._write([queued])
                except Exception as own:  # noqa: BLE001
                    queued.outcome = own
        return taken

    def _write(self, taken: list[_Queued]) -> None:
        ends = [q for q in taken if q.end is not None]
        rows = [row for q in taken for row in q.rows]
        if not ends:
            self.coordination.record_executions(rows)
            return
        held = set(self.coordination.complete_many([q.end for q in ends], executions=rows))
        for index, queued in enumerate(ends):
            queued.outcome = index in held

    def _drained(self, job: asyncio.Future[list[_Queued]]) -> None:
        self._resolve(job.result())
        with self._queue_lock:
            again = self._draining = bool(self._queue)
        if again:
            self._drain(asyncio.get_running_loop())

    @staticmethod
    def _resolve(taken: list[_Queued]) -> None:
        for queued in taken:
            if queued.future.done():
                continue
            if isinstance(queued.outcome, BaseException):
                queued.future.set_exception(queued.outcome)
            else:
                queued.future.set_result(queued.outcome)

    def _forget(self, rows: Rows, future: asyncio.Future[None]) -> None:
        for row in rows:
            if self._writing.get(row["execution_id"]) is future:
                del self._writing[row["execution_id"]]

    def withdraw(self, future: asyncio.Future[None]) -> bool:
        """Take back executions still queued (the run's completion carries them); False once
        the coordination thread has taken them."""
        with self._queue_lock:
            for index, queued in enumerate(self._queue):
                if queued.future is future and queued.end is None:
                    del self._queue[index]
                    break
            else:
                return False
        future.cancel()
        return True

    async def _unwritten(self, executions: Rows) -> Rows:
        """``executions`` less the rows their early write commits: waits for the writes under
        way (taken by the coordination thread, so a completion would wait behind them)."""
        writes = {row["execution_id"]: self._writing.get(row["execution_id"])
                  for row in executions}
        under_way = {id(f): f for f in writes.values() if f is not None and not f.done()}
        if under_way:
            await asyncio.wait(under_way.values())
        return [row for row in executions
                if (write := writes[row["execution_id"]]) is None or write.cancelled()
                or write.exception() is not None]

    async def complete(self, item: WorkItem, *, scores: Rows, executions: Rows,
                       decisions: Rows) -> bool:
        """Fenced on the claim's owner and fence, in the score's transaction."""
        executions = await self._unwritten(executions)
        if item.claim is None or not decisions:  # not held (the scheduler claims first)
            await self.write([], executions, [])
            return False
        # Queued with the executions: completions (and execution rows) queued while the
        # coordination thread is busy go in one statement when it gets to them.
        done: bool = await self._enqueue(executions, (item.claim, decisions[-1], scores))
        if not done:
            self.counts["taken_over"] += 1
        return done

    async def mark_over_budget(self, versions: Sequence[tuple[str, str]], *, reason: str,
                               now: datetime) -> None:
        """See ``Coordination.mark_over_budget``."""
        if versions:
            await self._call(self.coordination.mark_over_budget, list(versions),
                             reason=reason, now=now)

    async def spend(self, now: datetime) -> BudgetUsage:
        """Every node's executions (each committed as it arrived)."""
        found = await self._call(self.coordination.spend, now)
        return BudgetUsage(found.cost_usd_hour, found.cost_usd_day, found.tokens_hour)

    async def prior_spend(self, key: PairKey, *, besides: Sequence[str] = ()) -> SpendTotals:
        """Summed from the pair's stored executions."""
        skip = set(besides)
        rows = await self._call(self.coordination.executions, key.score_id)
        return SpendTotals.of(r for r in rows if r["execution_id"] not in skip)

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = ()
                            ) -> datetime | None:
        """From the pair's stored executions (authentication errors aside)."""
        skip = set(besides)
        rows = await self._call(self.coordination.executions, key.score_id)
        times = [r["created_at"] for r in rows
                 if r["execution_id"] not in skip and r["status"] == "failed"
                 and (r["error_code"] or "") not in ("401", "403") and r["created_at"]]
        return min(times) if times else None

    async def version_starts(self) -> dict[tuple[str, str], datetime]:
        """See ``Coordination.version_starts``."""
        found: dict[tuple[str, str], datetime] = await self._call(
            self.coordination.version_starts)
        return found

    async def open_stats(self, versions: Sequence[tuple[str, str]]
                         ) -> tuple[int, datetime | None]:
        """See ``Coordination.open_stats``; read again at a pace its cost sets
        (``OPEN_STATS_SHARE``: the read counts every open pair, so with a large backlog it is
        made every few seconds instead of every tick on every node)."""
        key = tuple(versions)
        started = time.monotonic()
        if self._open_stats.fresh(key, started):
            kept: tuple[int, datetime | None] = self._open_stats.value
            return kept
        found: tuple[int, datetime | None] = await self._call(self.coordination.open_stats,
                                                              list(key))
        self._open_stats.keep(key, found, started=started, ended=time.monotonic())
        return found

    async def leads(self, role: str) -> bool:
        """One node at a time (a PostgreSQL advisory lock held while it runs)."""
        try:
            led: bool = await self._call(self.control.lead, role)
        except Exception as exc:  # noqa: BLE001 - PostgreSQL away: nobody leads this tick
            logger.warning("could not ask PostgreSQL who does %s: %s", role, exc)
            return False
        return led

    async def close(self) -> None:
        """Close the storage objects' connections and stop the coordination threads."""
        for part in {id(self.coordination): self.coordination, id(self.control): self.control
                     }.values():
            close = getattr(part, "close", None)
            if close is not None:
                await self._call(close)
        self._executor.shutdown(wait=True)
        self._control_executor.shutdown(wait=True)


__all__ = ["DEFAULT_LEASE_S", "OPEN_STATS_SHARE", "CostPaced", "SharedCoordination", "pair_id"]
