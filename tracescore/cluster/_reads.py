"""``ClusterStore``: a cluster node's store as readers see it.

One span-store interface for readers, two implementations: ``tracescore.store.Store`` (one
file) and this (the lake ∪ the node's rows not yet flushed). ``fetch_trace_rows`` and
``fetch_trace_logs`` read a trace from the lake bounded by its PostgreSQL ``traces`` row's
arrival range (the lake prunes files by their ``received_at`` bounds, so a lookup reads a few
files however large the lake is) plus this node's rows past its flusher's mark (pruned by the
local file's ``received_at`` zone maps), keeping one row per span (a request sent to two nodes
stores its spans twice, and a flush committing meanwhile shows rows on both sides). ``query``
runs users' SQL in the ``cluster`` catalog (``_views.py``), and so do the trusted reads
``read`` and ``aread`` (the dashboard's pages, live scoring's reads of the scoring tables: the
same tables users see). ``read_postgres`` hands a statement to PostgreSQL itself, for the
queries its indexes answer (the traces list's page). Everything else is the local ``Store``:
the writer, and the reads live scoring's selection and the totals maintainer make of the
node's own rows (``local_store.read``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import orjson

from ._lake import LAKE
from ._views import CLUSTER

HOLDS_RECHECK_S = 30.0
LOG_LEAD = timedelta(minutes=10)
"""How far outside a trace's span arrivals its log records are looked for."""


class ClusterStore:
    """The node's ``Store`` with cluster-wide reads (see the module docstring).

    ``arrival_range(trace_id)`` gives the trace's (first, last) arrival from PostgreSQL, or
    None when no node has flushed it yet.
    """

    def __init__(self, store: Any, *, local: str,
                 arrival_range: Callable[[str], tuple[datetime, datetime] | None],
                 span_mark: Callable[[], datetime],
                 pg_read: Callable[[str, Sequence[Any]], list[dict[str, Any]]] | None = None
                 ) -> None:
        self.local_store = store
        self._local = local
        self._arrival_range = arrival_range
        self._span_mark = span_mark
        self._pg_read = pg_read
        self._holds: dict[str, float] = {}
        """Lake tables known to hold rows (and when that was last found untrue)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local_store, name)

    # -- users' SQL -----------------------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None, *,
              row_limit: int | None = None, timeout_s: float | None = None,
              max_bytes: int | None = None) -> Any:
        """``Store.query`` over the cluster views (lake ∪ local, PostgreSQL tables)."""
        from tracescore.store import run_query

        return self._user_query(run_query, sql, params, row_limit, timeout_s, max_bytes)

    def query_json(self, sql: str,
                   params: Sequence[Any] | Mapping[str, Any] | None = None) -> Any:
        """``Store.query_json`` (``/api/sql``) over the cluster views."""
        from tracescore.store import run_query_json

        return self._user_query(run_query_json, sql, params, None, None, None)

    def _user_query(self, run: Callable[..., Any], sql: str,
                    params: Sequence[Any] | Mapping[str, Any] | None, row_limit: int | None,
                    timeout_s: float | None, max_bytes: int | None) -> Any:
        """The local store's user statement (its limits and SQL slots) in the ``cluster``
        catalog."""
        return self.local_store.user_statement(run, sql, params, row_limit=row_limit,
                                               timeout_s=timeout_s, max_bytes=max_bytes,
                                               catalog=CLUSTER)

    async def aquery(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None,
                     *, row_limit: int | None = None, timeout_s: float | None = None,
                     max_bytes: int | None = None) -> Any:
        """``query`` in a worker thread."""
        return await asyncio.to_thread(self.query, sql, params, row_limit=row_limit,
                                       timeout_s=timeout_s, max_bytes=max_bytes)

    # -- trusted reads --------------------------------------------------------------------

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
             ) -> list[dict[str, Any]]:
        """A trusted read (no guard, no limits) in the ``cluster`` catalog: row dicts."""
        store = self.local_store
        cursor = store.cursor()
        try:
            cursor.execute(f"USE {CLUSTER}")
            cursor.execute(sql, params)
            names = [d[0] for d in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            cursor.close()

    async def aread(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
                    ) -> list[dict[str, Any]]:
        """``read`` in a worker thread."""
        return await asyncio.to_thread(self.read, sql, params)

    def read_postgres(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read PostgreSQL runs itself, over the ``tracescore`` schema (``?`` placeholders;
        the statement must be in the SQL PostgreSQL and DuckDB share): for what its indexes
        answer faster than a scan through the attachment (a page of the traces list)."""
        if self._pg_read is None:
            return self.read(sql, list(params))
        return self._pg_read(sql.replace("%", "%%").replace("?", "%s"), list(params))

    async def aread_postgres(self, sql: str, params: Sequence[Any] = ()
                             ) -> list[dict[str, Any]]:
        """``read_postgres`` in a worker thread."""
        return await asyncio.to_thread(self.read_postgres, sql, params)

    # -- one trace ------------------------------------------------------------------------

    def _rows(self, table: str, select: str, order: str, trace_id: str, lead: timedelta,
              json_names: frozenset[str]) -> list[dict[str, Any]]:
        trace_id = trace_id.lower()
        here = f'"{self._local}".main.{table}'
        # The flusher's mark, read before the lake: at most the lake's (a flush committing
        # meanwhile makes rows show on both sides, and one row per id is kept below).
        parts = [f"SELECT * FROM {here} WHERE trace_id = ? AND received_at > ?"]
        params: list[Any] = [trace_id, self._span_mark()]
        bounds = self._arrival_range(trace_id) if self._lake_holds(table) else None
        if bounds is not None:
            parts.append(f"SELECT * EXCLUDE (node_id) FROM {LAKE}.main.{table} "
                         "WHERE trace_id = ? AND received_at >= ? AND received_at <= ?")
            params += [trace_id, bounds[0] - lead, bounds[1] + lead]
        key = "span_id" if table == "spans" else "log_id"
        sql = (f"{select} FROM ({' UNION ALL BY NAME '.join(parts)}) "
               f"QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY received_at) = 1 "
               f"ORDER BY {order}")
        rows: list[dict[str, Any]] = self.local_store.read(sql, params)
        for row in rows:
            for name in json_names:
                value = row.get(name)
                if isinstance(value, str):
                    row[name] = orjson.loads(value)
        return rows

    def fetch_trace_rows(self, trace_id: str) -> list[dict[str, Any]]:
        """The spans of one trace (lake ∪ local), ordered by start time."""
        from tracescore.store import SPAN_JSON_COLUMNS, SPAN_ROWS_SELECT

        return self._rows("spans", SPAN_ROWS_SELECT, "start_time_ns, span_id", trace_id,
                          timedelta(0), SPAN_JSON_COLUMNS)

    def _lake_holds(self, table: str) -> bool:
        """Whether any node flushed rows of ``table`` (``spans``, ``logs``) to the lake: a
        lake table with no file costs a read several times a filled one's (DuckLake looks
        for inlined rows in its catalog), and most agents send no logs. Once true it stays
        true; a false answer is asked again after ``HOLDS_RECHECK_S``."""
        if table == "spans" or self._holds.get(table) == float("inf"):
            return True
        checked = self._holds.get(table)
        if checked is not None and time.monotonic() - checked < HOLDS_RECHECK_S:
            return False
        [row] = self.local_store.read(
            f"SELECT coalesce(sum({table}), 0) > 0 AS held FROM {LAKE}.flushes")
        self._holds[table] = float("inf") if row["held"] else time.monotonic()
        return bool(row["held"])

    def fetch_trace_calls(self, trace_id: str) -> list[dict[str, Any]]:
        """The model calls of one trace: the lake's rows since the trace's first arrival (a
        trace's calls are flushed with its totals, after its spans) ∪ this node's, one row per
        span (the node's own when both have it), ordered as on one node."""
        from tracescore.store import column_names

        trace_id = trace_id.lower()
        names = ", ".join(column_names("model_calls"))
        parts = [f'SELECT {names}, 0 AS here FROM "{self._local}".main.model_calls '
                 "WHERE trace_id = ?"]
        params: list[Any] = [trace_id]
        bounds = self._arrival_range(trace_id)
        if bounds is not None:
            parts.append(f"SELECT {names}, 1 AS here FROM {LAKE}.main.model_calls "
                         "WHERE trace_id = ? AND received_at >= ?")
            params += [trace_id, bounds[0]]
        sql = (f"SELECT * EXCLUDE (here) FROM ({' UNION ALL '.join(parts)}) "
               "QUALIFY row_number() OVER (PARTITION BY span_id ORDER BY here) = 1 "
               "ORDER BY started_at, span_id")
        rows: list[dict[str, Any]] = self.local_store.read(sql, params)
        return rows

    def fetch_trace_logs(self, trace_id: str) -> list[dict[str, Any]]:
        """The log records of one trace (lake ∪ local), ordered by time."""
        from tracescore.store import LOG_JSON_COLUMNS, LOG_ROWS_SELECT

        return self._rows("logs", LOG_ROWS_SELECT,
                          "coalesce(time_unix_nano, observed_time_unix_nano), "
                          "observed_time_unix_nano", trace_id, LOG_LEAD, LOG_JSON_COLUMNS)


__all__ = ["LOG_LEAD", "ClusterStore"]
