"""Arrow tables registered as DuckDB views for one statement, and dropped after it."""

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


__all__ = ["registered", "unregister_quietly"]
