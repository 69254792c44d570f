"""Arrow tables read by name in DuckDB statements (``arrow_view``).

Registering a view and dropping it changes DuckDB's catalog twice, about 0.7 ms of CPU per
statement (a small span commit ran two or three: 12-17 % of its CPU, docs/server.md). The
writer therefore registers a few views once per connection (``ViewPool``), each reading
whichever Arrow table it holds at the moment (through the Arrow stream protocol, which DuckDB
reads anew, schema too, at every statement), and ``arrow_view`` lends one of them to a
statement run on the writer's thread and connection. Anywhere else (a read connection, the
store before its writer starts) it registers the table for the statement and drops it
afterwards, as before.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator
from typing import Any

_POOL_SIZE = 4
"""Views per writer connection: the writer's insert and the traces fold inside it take two at
once; a write function holding more than the rest gets registered views for the others."""

_thread = threading.local()


def unregister_quietly(conn: Any, name: str) -> None:
    """Drop a registered Arrow view; in an aborted transaction DuckDB refuses, which is fine
    (the next ``register`` of the name replaces it) and must not hide the original error."""
    try:
        conn.unregister(name)
    except Exception:
        pass


class ArrowSlot:
    """A view registered once on a connection that reads the Arrow table it holds at the
    moment; outside ``holding`` it is one empty column, so a statement reading it fails to
    bind."""

    __slots__ = ("name", "_table")

    def __init__(self, name: str) -> None:
        self.name = name
        self._table: Any = None

    @contextlib.contextmanager
    def holding(self, table: Any) -> Iterator[str]:
        """The slot reads ``table`` for the ``with`` block; yields the view's name."""
        self._table = table
        try:
            yield self.name
        finally:
            self._table = None

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The held table's Arrow stream (what DuckDB scans)."""
        table = self._table
        if table is None:
            import pyarrow as pa

            table = pa.table({"empty": pa.array([], pa.null())})
        return table.__arrow_c_stream__(requested_schema)


class ViewPool:
    """The writer's views: registered on each connection it uses (``connect``, outside any
    transaction: a registration inside one is undone by its rollback), lent by ``arrow_view``
    on the thread that called ``serve``."""

    def __init__(self, size: int = _POOL_SIZE) -> None:
        self._slots = [ArrowSlot(f"__tracescore_arrow_{i}") for i in range(size)]
        self._free = list(self._slots)
        self.conn: Any = None

    def connect(self, conn: Any) -> None:
        """Register the views on ``conn`` (a fresh connection) and lend them for it from now
        on."""
        for slot in self._slots:
            conn.register(slot.name, slot)  # (DuckDB reads the schema now: the empty one)
        self.conn = conn

    def serve(self) -> None:
        """Lend the views to ``arrow_view`` calls on this thread (the writer's)."""
        _thread.pool = self

    def take(self, conn: Any) -> ArrowSlot | None:
        """A free view registered on ``conn``, or None."""
        if conn is not self.conn or not self._free:
            return None
        return self._free.pop()

    def give(self, slot: ArrowSlot) -> None:
        """Return a view ``take`` lent."""
        self._free.append(slot)


@contextlib.contextmanager
def arrow_view(conn: Any, table: Any) -> Iterator[str]:
    """A name that statements on ``conn`` read the Arrow ``table`` by, for the ``with`` block:
    a pooled view on the writer's thread and connection, else a view registered for the
    block."""
    pool: ViewPool | None = getattr(_thread, "pool", None)
    slot = pool.take(conn) if pool is not None else None
    if pool is None or slot is None:
        name = f"__tracescore_view_{uuid.uuid4().hex}"
        conn.register(name, table)
        try:
            yield name
        finally:
            unregister_quietly(conn, name)
        return
    try:
        with slot.holding(table) as name:
            yield name
    finally:
        pool.give(slot)


__all__ = ["ArrowSlot", "ViewPool", "arrow_view", "unregister_quietly"]
