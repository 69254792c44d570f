"""``PgJudgeCache``: the judge-call cache of a cluster, in PostgreSQL's ``judge_cache``.

Judge answers are worth sharing: a node that meets the same judge call another node made
(the same prompt, model and settings: ``tracescore.scoring``'s cache key) gets its answer
instead of paying for it again. So in cluster mode the cache lives in PostgreSQL, next to the
scoring tables, with the same bounds and batching as a single node's (``StoreJudgeCache``,
whose queue and linger this reuses): a lookup is one primary-key read; answers are written
together (``ON CONFLICT (key) DO UPDATE``) and the table is pruned by age and size at most
every ``prune_every_s``, by whichever node writes then. ``scoring_decision_history`` lives in
PostgreSQL too (with the decisions it archives).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tracescore.store import StoreJudgeCache

from ._pg_rows import insert_rows
from ._pg_schema import SCHEMA, pg_tables

_GET_SQL = f"SELECT answer, created_at FROM {SCHEMA}.judge_cache WHERE key = %s"
_PRUNE_AGE_SQL = f"DELETE FROM {SCHEMA}.judge_cache WHERE created_at < %s"
_PRUNE_SIZE_SQL = f"""
DELETE FROM {SCHEMA}.judge_cache WHERE key IN (
    SELECT key FROM (
        SELECT key, sum(bytes) OVER (ORDER BY created_at DESC, key
                                     ROWS UNBOUNDED PRECEDING) AS kept
        FROM {SCHEMA}.judge_cache) k
    WHERE kept > %s)
"""


class PgJudgeCache(StoreJudgeCache):
    """``StoreJudgeCache`` whose table is PostgreSQL's (see the module docstring);
    ``connect`` opens a psycopg connection."""

    def __init__(self, connect: Callable[[], Any], **options: Any) -> None:
        super().__init__(None, **options)  # type: ignore[arg-type]  # no store: overridden
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()
        self._table = pg_tables()["judge_cache"]

    def _run(self, fn: Callable[[Any], Any]) -> Any:
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            try:
                with self._conn.transaction(), self._conn.cursor() as cur:
                    return fn(cur)
            except Exception:
                if self._conn.broken:
                    self._conn.close()
                    self._conn = None
                raise

    def _lookup(self, key: str) -> tuple[Any, datetime | None] | None:
        def get(cur: Any) -> Any:
            cur.execute(_GET_SQL, [key])
            return cur.fetchone()

        row = self._run(get)
        return (row[0], row[1]) if row else None

    async def _write(self, answers: dict[str, Any]) -> None:
        rows, prune = self.answer_rows(answers)
        oldest = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=self.max_age_s)

        def write(cur: Any) -> None:
            insert_rows(cur, self._table, rows, conflict="update")
            if prune:
                cur.execute(_PRUNE_AGE_SQL, [oldest])
                cur.execute(_PRUNE_SIZE_SQL, [self.max_bytes])

        await asyncio.to_thread(self._run, write)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


__all__ = ["PgJudgeCache"]
