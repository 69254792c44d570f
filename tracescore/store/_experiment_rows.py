"""Arrow inserts inside a writer transaction, and writing an experiment: its ``experiments``
row (replaced as the run progresses) and its ``experiment_results`` rows (appended), in one
transaction."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._arrow import rows_table
from ._writer import unregister_quietly


def insert_arrow(conn: Any, table: str, data: Any, verb: str = "INSERT") -> None:
    """``{verb} INTO table SELECT * FROM`` an Arrow table, inside the caller's transaction (a
    ``Store.write`` function); the Arrow view is dropped afterwards."""
    view = f"__tracescore_{table}_{uuid.uuid4().hex}"
    conn.register(view, data)
    try:
        conn.execute(f"{verb} INTO {table} SELECT * FROM {view}")
    finally:
        unregister_quietly(conn, view)


def experiment_writer(
    experiment: Mapping[str, Any], results: Sequence[Mapping[str, Any]] = ()
) -> Callable[[Any], None]:
    """A ``Store.write`` function storing ``experiment`` (insert or replace by
    ``experiment_id``) and appending ``results``; unknown columns raise ``InvalidRow`` here,
    before anything is written."""
    head = rows_table("experiments", [experiment])
    body = rows_table("experiment_results", list(results)) if results else None

    def write(conn: Any) -> None:
        insert_arrow(conn, "experiments", head, "INSERT OR REPLACE")
        if body is not None:
            insert_arrow(conn, "experiment_results", body)

    return write


__all__ = ["experiment_writer", "insert_arrow"]
