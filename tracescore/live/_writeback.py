"""Group commit of score write-backs: many pairs' rows in one store transaction.

A store ``write(fn)`` is one transaction (a DuckDB commit costs milliseconds), so scoring
hundreds of pairs per second needs their rows combined. Workers call ``write``; rows wait while
the previous transaction commits and then go together in the next one; each caller resumes
after the transaction holding its rows committed (their Arrow tables are built in a worker
thread, off the event loop). If a combined transaction fails, each part is written on its own,
so one bad row fails only its own pair.

A transaction's fixed cost dwarfs its rows' (~11 ms of writer CPU for the three inserts and the
commit here: 3 ms per pair in transactions of 4 pairs, 0.7 ms at 16, 0.2 ms at 64), so rows wait
up to ``LINGER_S`` (100 ms) for others before their transaction starts. Nobody waits on that:
a pair gives its concurrency slot back before its write (``_worker``).

The ``scores`` and ``judge_executions`` rows are new (a pair's one score row; executions with
fresh ids, less those an early write already stored, see ``_spend``), so they go in with plain
``INSERT``: DuckDB's ``INSERT OR IGNORE`` took about twice the writer's time (0.45 against
0.25 ms per score row in batches of ~20 pairs here). Should one be stored after all (an early
write that was committing when the final write was queued), the transaction is rolled back and
written again with ``OR IGNORE``; the decisions always replace their pending rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracescore.store import StoreLike

logger = logging.getLogger(__name__)

Rows = list[dict[str, Any]]
LINGER_S = 0.1
"""How long the first rows of a transaction wait for more (see the module docstring)."""


class WriteBack:
    """Batches ``store.write_scores`` calls (see the module docstring)."""

    def __init__(self, store: StoreLike, *, max_pairs: int = 512,
                 linger_s: float = LINGER_S) -> None:
        self._store = store
        self._max_pairs = max_pairs
        self._linger_s = linger_s
        self._queue: list[tuple[Rows, Rows, Rows, asyncio.Future[None], float]] = []
        self._task: asyncio.Task[None] | None = None
        self._committing: list[asyncio.Future[None]] = []
        self._hurry = 0
        self._wake: asyncio.Event | None = None
        self.transactions = 0
        self.rewrites = 0
        """Transactions written again with ``OR IGNORE`` after meeting a stored row."""

    async def write(self, scores: Rows, executions: Rows, decisions: Rows) -> None:
        """Write these rows in one transaction (shared with others); resolves after commit."""
        await self.submit(scores, executions, decisions)

    def submit(self, scores: Rows, executions: Rows, decisions: Rows) -> asyncio.Future[None]:
        """Queue these rows now (in call order with every other write) without waiting; the
        future resolves after their commit. Call from the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.append((scores, executions, decisions, future, loop.time()))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        return future

    def withdraw(self, future: asyncio.Future[None]) -> bool:
        """Take back rows queued with ``submit`` that no transaction has taken yet (their future
        is cancelled); False when they are already being written or are written."""
        for index, item in enumerate(self._queue):
            if item[3] is future:
                del self._queue[index]
                future.cancel()
                return True
        return False

    async def flush(self) -> None:
        """Commit every write queued so far without its linger, and wait for them (the budget
        reads spend from the table: what was counted before must be there)."""
        waiting = [item[3] for item in self._queue] + self._committing
        if not waiting:
            return
        self._hurry += 1
        try:
            if self._wake is not None:
                self._wake.set()
            await asyncio.wait(waiting)  # (cancelling the flush cancels none of them)
        finally:
            self._hurry -= 1

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        if self._wake is None:
            self._wake = asyncio.Event()
        while self._queue:
            wait_s = self._queue[0][4] + self._linger_s - loop.time()
            if wait_s > 0 and len(self._queue) < self._max_pairs and not self._hurry:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):  # the oldest rows wait at most linger_s
                    await asyncio.wait_for(self._wake.wait(), wait_s)
                continue
            batch = self._queue[: self._max_pairs]
            del self._queue[: self._max_pairs]
            self._committing = [item[3] for item in batch]
            try:
                await self._commit(batch)
            except Exception:  # noqa: BLE001 - retried part by part below
                for item in batch:
                    try:
                        await self._commit([item])
                    except Exception as exc:  # noqa: BLE001 - this part's own failure
                        if not item[3].done():
                            item[3].set_exception(exc)
            finally:
                self._committing = []

    async def _commit(self, batch: list[tuple[Rows, Rows, Rows, asyncio.Future[None], float]]
                      ) -> None:
        scores = [row for item in batch for row in item[0]]
        executions = [row for item in batch for row in item[1]]
        decisions = [row for item in batch for row in item[2]]
        from tracescore.store import DuplicateRows, score_rows_writer

        # The rows become Arrow tables in a worker thread, not on the event loop.
        writer = await asyncio.to_thread(
            functools.partial(score_rows_writer, new_results=True), scores, executions, decisions)
        try:
            await self._store.write(writer)
        except DuplicateRows:
            self.rewrites += 1
            await self._store.write(await asyncio.to_thread(
                score_rows_writer, scores, executions, decisions))
        self.transactions += 1
        for item in batch:
            if not item[3].done():
                item[3].set_result(None)
