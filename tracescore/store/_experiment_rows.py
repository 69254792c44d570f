"""Writing an experiment: its ``experiments`` row (replaced as the run progresses) and its
``experiment_results`` rows (appended), in one transaction through Arrow."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._arrow import rows_table
from ._writer import unregister_quietly


def experiment_writer(
    experiment: Mapping[str, Any], results: Sequence[Mapping[str, Any]] = ()
) -> Callable[[Any], None]:
    """A ``Store.write`` function storing ``experiment`` (insert or replace by
    ``experiment_id``) and appending ``results``; unknown columns raise ``InvalidRow`` here,
    before anything is written."""
    head = rows_table("experiments", [experiment])
    body = rows_table("experiment_results", list(results)) if results else None

    def write(conn: Any) -> None:
        for table, data, verb in (("experiments", head, "INSERT OR REPLACE"),
                                  ("experiment_results", body, "INSERT")):
            if data is None:
                continue
            view = f"__tracescore_{table}_{uuid.uuid4().hex}"
            conn.register(view, data)
            try:
                conn.execute(f"{verb} INTO {table} SELECT * FROM {view}")
            finally:
                unregister_quietly(conn, view)

    return write


__all__ = ["experiment_writer"]
