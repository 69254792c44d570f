"""``PgWrites``: store-style writes (``write(fn)``, ``fn(conn)`` on a DuckDB connection) that
land in PostgreSQL's ``tracescore`` tables.

Live scoring's monitors record their events the way they do on one node: a function that
registers an Arrow table and runs ``INSERT``/``UPDATE`` on ``monitor_events``. In cluster mode
that table is PostgreSQL's, so the function runs on a private in-memory DuckDB connection with
PostgreSQL attached read-write and ``USE``d. It is never the node's store: users' SQL reaches
PostgreSQL only through the read-only attachment (a read-write one would let a ``SELECT`` call
``postgres_execute``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ._config import ClusterSettings
from ._lake import load_extensions, quote
from ._pg_schema import SCHEMA

T = TypeVar("T")


class PgWrites:
    """``write(fn)`` on PostgreSQL's tables (see the module docstring)."""

    def __init__(self, settings: ClusterSettings) -> None:
        self._settings = settings
        self._conn: Any = None
        self._lock = threading.Lock()

    def _connection(self) -> Any:
        if self._conn is None:
            import duckdb

            conn = duckdb.connect(":memory:")
            load_extensions(conn)
            conn.execute(f"ATTACH {quote(self._settings.postgres)} AS shared (TYPE postgres)")
            conn.execute(f"USE shared.{SCHEMA}")
            self._conn = conn
        return self._conn

    def write_sync(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(conn)`` with PostgreSQL's tables as the connection's default schema."""
        with self._lock:
            try:
                return fn(self._connection())
            except Exception:
                self.close_unlocked()
                raise

    async def write(self, fn: Callable[[Any], T]) -> T:
        """``write_sync`` in a worker thread."""
        return await asyncio.to_thread(self.write_sync, fn)

    def close_unlocked(self) -> None:
        """Drop the connection (the lock held)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        """Close the private connection."""
        with self._lock:
            self.close_unlocked()


__all__ = ["PgWrites"]
