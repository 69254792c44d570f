"""Arrow tables read by name in DuckDB statements: registered for one statement
(``registered``), or through a view registered once per connection (``ArrowSlot``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def unregister_quietly(conn: Any, name: str) -> None:
    """Drop a registered Arrow view; in an aborted transaction DuckDB refuses, which is fine
    (the next ``register`` of the name replaces it) and must not hide the original error."""
    try:
        conn.unregister(name)
    except Exception:
        pass


@contextlib.contextmanager
def registered(conn: Any, name: str, table: Any) -> Iterator[str]:
    """``table`` registered as the view ``name`` for the ``with`` block."""
    conn.register(name, table)
    try:
        yield name
    finally:
        unregister_quietly(conn, name)


class ArrowSlot:
    """A view registered once on a connection that reads whichever Arrow table the slot holds
    at the moment (``holding``), for the writer's statements that run on every commit.

    Registering a view and dropping it changes DuckDB's catalog twice, about 0.7 ms of CPU per
    statement (a tenth of a small commit); the slot is registered once and hands DuckDB the
    held table through the Arrow stream protocol, which DuckDB reads anew (schema too) at
    every statement. Register it outside a transaction (``attach``): a registration inside one
    is undone by its rollback. Outside ``holding`` the view is one empty column ``empty``, so a
    statement reading it then fails to bind.
    """

    __slots__ = ("name", "_table")

    def __init__(self, name: str) -> None:
        self.name = name
        self._table: Any = None

    def attach(self, conn: Any) -> None:
        """Register the slot's view on ``conn`` (a fresh connection, no transaction open)."""
        conn.register(self.name, self)  # (DuckDB reads the schema now: the empty one)

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


__all__ = ["ArrowSlot", "registered", "unregister_quietly"]
