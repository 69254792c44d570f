"""Arrow inserts inside a writer transaction, and writing an experiment: its ``experiments``
row (replaced as the run progresses) and its ``experiment_results`` rows (each replacing the
stored row with its key), in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._arrow import rows_table
from ._datasets_schema import RESULT_KEY
from ._views import arrow_view


def insert_arrow(conn: Any, table: str, data: Any, verb: str = "INSERT") -> None:
    """``{verb} INTO table SELECT * FROM`` an Arrow table, inside the caller's transaction (a
    ``Store.write`` function)."""
    with arrow_view(conn, data) as view:
        conn.execute(f"{verb} INTO {table} SELECT * FROM {view}")


def experiment_writer(
    experiment: Mapping[str, Any], results: Sequence[Mapping[str, Any]] = ()
) -> Callable[[Any], None]:
    """A ``Store.write`` function storing ``experiment`` (insert or replace by
    ``experiment_id``) and ``results``, each replacing the stored result with its key
    (experiment, item, scorer, repetition; ``repetition`` defaults to 0), so a re-posted body
    stores nothing twice. A result without ``experiment_id`` gets the experiment's. Unknown
    columns raise ``InvalidRow`` here, before anything is written."""
    head = rows_table("experiments", [experiment])
    keyed: dict[tuple[Any, ...], dict[str, Any]] = {}
    for result in results:
        row = {"experiment_id": experiment.get("experiment_id"), **result}
        row["repetition"] = row.get("repetition") or 0
        keyed[tuple(row.get(name) for name in RESULT_KEY)] = row  # the last one wins
    body = rows_table("experiment_results", list(keyed.values())) if keyed else None
    match = " AND ".join(f"r.{name} = v.{name}" for name in RESULT_KEY)

    def write(conn: Any) -> None:
        insert_arrow(conn, "experiments", head, "INSERT OR REPLACE")
        if body is None:
            return
        with arrow_view(conn, body) as view:
            conn.execute(f"DELETE FROM experiment_results AS r USING {view} AS v WHERE {match}")
            conn.execute(f"INSERT INTO experiment_results SELECT * FROM {view}")

    return write


__all__ = ["experiment_writer", "insert_arrow"]
