"""``StoreJudgeCache``: judge answers kept in the database's ``judge_cache`` table.

The judge-call cache of ``tracescore.scoring`` (its ``JudgeCache`` protocol) backed by the
store, so live scoring, backfill, rescore and ``run_evals`` on the same database share answers,
across restarts. A lookup is a point read on its own cursor (in a worker thread: ``key`` is the
primary key, an index lookup). Stores go through the store's single writer: answers wait up to
``linger_s`` for others and are written together in one transaction (a commit costs
milliseconds; one per answer would cost the writer more than the answers), and an answer waiting
to be written already answers lookups.

The table is bounded: an answer older than ``max_age_s`` is not used and is deleted, and when
the answers' JSON passes ``max_bytes`` the oldest are deleted until it fits. Both are enforced
in a write transaction at most every ``prune_every_s``, so the table can briefly exceed the
bound by what was written meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import orjson

from ._arrow import rows_table
from ._experiment_rows import insert_arrow

if TYPE_CHECKING:
    from ._protocol import StoreLike

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_AGE_S = 30 * 24 * 3600.0

_GET_SQL = "SELECT answer, created_at FROM judge_cache WHERE key = ?"
_PRUNE_AGE_SQL = "DELETE FROM judge_cache WHERE created_at < ?"
_PRUNE_SIZE_SQL = """
DELETE FROM judge_cache WHERE key IN (
    SELECT key FROM (
        SELECT key, sum(bytes) OVER (ORDER BY created_at DESC, key
                                     ROWS UNBOUNDED PRECEDING) AS kept
        FROM judge_cache)
    WHERE kept > ?)
"""


_Entry = tuple[bytes, str | None, float | None]
"""An answer waiting to be written: its JSON, model and cost."""


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class StoreJudgeCache:
    """A ``tracescore.scoring.JudgeCache`` on a store (see the module docstring)."""

    def __init__(self, store: StoreLike, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_age_s: float = DEFAULT_MAX_AGE_S, linger_s: float = 0.1,
                 prune_every_s: float = 60.0) -> None:
        self._store = store
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self._linger_s = linger_s
        self._prune_every_s = prune_every_s
        self._pruned_at: datetime | None = None
        self._pending: dict[str, _Entry] = {}
        self._writing: dict[str, _Entry] = {}
        self._task: asyncio.Task[None] | None = None
        self.stored = 0
        """Answers written since this object was made."""

    async def get(self, key: str) -> dict[str, Any] | None:
        """The answer stored under ``key`` (None when missing or older than ``max_age_s``)."""
        waiting = self._pending.get(key) or self._writing.get(key)
        if waiting is not None:
            answer: dict[str, Any] = orjson.loads(waiting[0])
            return answer
        stored = await asyncio.to_thread(self._lookup, key)
        if stored is None:
            return None
        found, created = stored
        if created is not None and created < _now() - timedelta(seconds=self.max_age_s):
            return None
        value = orjson.loads(found) if isinstance(found, str | bytes) else found
        return value if isinstance(value, dict) else None

    async def put(self, key: str, answer: dict[str, Any]) -> None:
        """Queue ``answer`` for the next write (within ``linger_s``)."""
        model, cost = answer.get("model"), answer.get("cost")
        self._pending[key] = (orjson.dumps(answer, default=str),
                              model if isinstance(model, str) else None,
                              float(cost) if isinstance(cost, int | float) else None)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self) -> None:
        """Wait until every answer queued so far is written."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _drain(self) -> None:
        await asyncio.sleep(self._linger_s)
        while self._pending:
            self._writing, self._pending = self._pending, {}
            try:
                await self._write(self._writing)
                self.stored += len(self._writing)
            except Exception as exc:  # noqa: BLE001 - a cache that cannot write only misses
                log.warning("could not store %d judge answer(s) in judge_cache: %s",
                            len(self._writing), exc)
            finally:
                self._writing = {}

    def _lookup(self, key: str) -> tuple[Any, datetime | None] | None:
        """Worker thread: the stored (answer, created_at) of ``key``, or None. A cache kept
        elsewhere (a cluster's PostgreSQL) overrides this and ``_write``."""
        rows = self._store.read(_GET_SQL, [key])
        return (rows[0]["answer"], rows[0]["created_at"]) if rows else None

    async def _write(self, answers: dict[str, _Entry]) -> None:
        """Write answers in one transaction of the store's writer (pruning when due)."""
        await self._store.write(await asyncio.to_thread(self._writer, answers))

    def answer_rows(self, answers: dict[str, _Entry]) -> tuple[list[dict[str, Any]], bool]:
        """The ``judge_cache`` rows of queued answers, and whether to prune with them (at most
        every ``prune_every_s``)."""
        now = _now()
        rows = [{"key": key, "model": model, "answer": orjson.Fragment(text), "cost": cost,
                 "bytes": len(text) + len(key), "created_at": now}
                for key, (text, model, cost) in answers.items()]
        prune = self._pruned_at is None or (
            now - self._pruned_at).total_seconds() >= self._prune_every_s
        if prune:
            self._pruned_at = now
        return rows, prune

    def _writer(self, answers: dict[str, _Entry]) -> Callable[[Any], None]:
        """The write transaction: insert (or replace) the answers, prune when due."""
        rows, prune = self.answer_rows(answers)
        table = rows_table("judge_cache", rows)
        oldest = _now() - timedelta(seconds=self.max_age_s)

        def write(conn: Any) -> None:
            insert_arrow(conn, "judge_cache", table, "INSERT OR REPLACE")
            if prune:
                conn.execute(_PRUNE_AGE_SQL, [oldest])
                conn.execute(_PRUNE_SIZE_SQL, [self.max_bytes])

        return write


__all__ = ["DEFAULT_MAX_AGE_S", "DEFAULT_MAX_BYTES", "StoreJudgeCache"]
