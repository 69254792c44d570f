"""The flush: rows that arrived since the node's high-water mark go to the lake, once.

Every ``flush_interval_seconds`` (or once ``flush_rows`` rows arrived) one lake transaction, run
on a read cursor of the node's store (the lake is attached to it), copies:

- ``spans`` and ``logs`` received in (span mark, new span mark]. Each writer commit stamps its
  rows with one ``received_at`` later than every earlier commit's, so the marks cut between
  commits, never through one.
- ``model_calls`` of traces whose last arrival is in (calls mark, new calls mark]: the calls
  mark stops before the first trace whose totals are pending, so only computed calls go;
  a trace recomputed after a late span has its earlier lake rows (of this node) replaced.
- one ``flushes`` row (node id, flush number, both marks, counts), and DuckLake's commit
  message and ``extra_info`` carry the same tag.

The lake is the record: a node reads its last flush back from ``flushes`` when it starts and
after any failed commit, so a flush that committed is never copied again, whether or not the
node noted it. After the lake commit come the local note (``cluster_flushes``, through the
store's writer; users' SQL reads the node's unflushed rows past it), then the PostgreSQL
``traces`` upsert of the touched traces (``_traces_fold``: absolute per-node values, so redoing
it is harmless) with the node's row in ``node_flushes``; an upsert that fails is tried again
with the next flush. A crash between any two steps is repaired at the next start
(``recover``).

The lake commit takes no lock: DuckLake retries the catalog part of a commit that met another
node's (without rewriting data files), with a jittered wait set before each commit, and a
commit that still fails is run again whole after a jittered wait (``with_catalog_retry``).
Flushed rows leave the node's file once ``local_retention_seconds`` old (deletes through the
writer); unflushed rows never do.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ._config import ClusterSettings
from ._errors import FlushFailed
from ._lake import (
    LAKE,
    Discard,
    lake_tables,
    snapshot_tag,
    transaction,
    with_catalog_retry,
)
from ._pg_rows import columns_from_arrow, insert_columns, insert_rows
from ._pg_schema import PgTable, pg_tables
from ._traces_fold import fold_sql, lock_traces

log = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1)  # noqa: DTZ001 - naive UTC, as the tables store
ONE_US = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class FlushMark:
    """Where a node's flushes stand: the last flush number and its two marks."""

    flush_no: int = 0
    span_mark: datetime = EPOCH
    calls_mark: datetime = EPOCH


@dataclass(slots=True)
class FlushStats:
    """Counters of one node's flusher since it started."""

    flushes: int = 0
    spans: int = 0
    logs: int = 0
    model_calls: int = 0
    traces: int = 0
    commit_retries: int = 0
    """Whole lake transactions run again after a failed commit."""
    failures: int = 0
    """Flushes that failed after their retries (their rows are copied by the next flush)."""
    recovered: int = 0
    """Flushes found committed in the lake but not noted locally (after a crash)."""
    retention_deletes: int = 0
    traces_upsert_failures: int = 0
    """PostgreSQL ``traces`` upserts that failed (each is tried again with the next flush)."""
    last_flush_ms: float = 0.0
    flush_ms: float = 0.0
    last_error: str | None = None
    last_flush_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FlushResult:
    """What one flush copied."""

    mark: FlushMark
    spans: int
    logs: int
    model_calls: int
    traces: int


@dataclass
class _Window:
    spans_to: datetime
    calls_to: datetime
    counts: dict[str, int] = field(default_factory=dict)


_TOUCHED = ("(last_received_at > ? OR (last_received_at > ? AND last_received_at <= ?)) "
            "AND first_received_at <= ?")
"""The local ``traces`` rows a flush touched: spans in its span window or totals in its calls
window, of traces whose first span is flushed (parameters: ``_touched_params``)."""


def _touched_params(previous: FlushMark, mark: FlushMark) -> list[Any]:
    return [previous.span_mark, previous.calls_mark, mark.calls_mark, mark.span_mark]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _columns(table: str) -> list[str]:
    from tracescore.store import column_names

    return list(column_names(table))


class Flusher:
    """Copies a node's new rows to the lake and its traces to PostgreSQL (see the module
    docstring). ``store`` is the node's open ``Store`` with the lake attached (``ClusterNode``);
    ``pg`` opens a psycopg connection. Private ``_after_lake_commit`` runs right after each
    lake commit, inside the attempt (tests crash the process there, or raise as a commit that
    landed but reported an error would)."""

    def __init__(self, store: Any, settings: ClusterSettings, pg: Callable[[], Any], *,
                 local: str, _clock: Callable[[], datetime] = _now,
                 _after_lake_commit: Callable[[FlushMark], None] | None = None) -> None:
        self.store = store
        self.settings = settings
        self.node_id = settings.node_id
        self.stats = FlushStats()
        self.mark = FlushMark()
        self._pg_connect = pg
        self._pg: Any = None
        self._local = local
        self._clock = _clock
        self._after_lake_commit = _after_lake_commit
        self._tables: dict[str, PgTable] = pg_tables()
        self._lock = threading.Lock()
        self._rows_at_flush = 0
        self._last_flush = time.monotonic()
        self._retained_to = EPOCH
        self._traces_due: tuple[FlushMark, FlushMark] | None = None
        """(previous mark, mark) of flushes whose traces upsert has not committed."""
        self.upserted = FlushMark()
        """The last flush whose traces are in PostgreSQL's ``traces`` too (its ``nodes`` then
        lists this node for every trace it flushed): live scoring's placement waits for it."""
        self._mark_known = False
        """True while ``mark`` is what the lake records: read at start (``recover``), or set by
        a lake commit this node saw return. An attempt that raised may have committed all the
        same, so the next one reads the lake's record again (``lake_mark``)."""

    # -- the note in the lake -------------------------------------------------------------

    def lake_mark(self, cur: Any) -> FlushMark:
        """This node's last flush as the lake records it (``FlushMark()`` when none)."""
        row = cur.execute(
            f"SELECT flush_no, span_mark, calls_mark FROM {LAKE}.flushes WHERE node_id = ? "
            "ORDER BY flush_no DESC LIMIT 1", [self.node_id]).fetchone()
        if row is None:
            return FlushMark()
        return FlushMark(int(row[0]), row[1] or EPOCH, row[2] or EPOCH)

    def recover(self) -> FlushMark:
        """At start: read the last flush back from the lake; redo the ``traces`` upsert and
        the local note of a flush that committed before a crash."""
        with self._lock:
            cur = self.store.cursor()
            try:
                self.mark = self.lake_mark(cur)
                self._mark_known = True
                noted = cur.execute(
                    f'SELECT coalesce(max(flush_no), 0) FROM "{self._local}".main.cluster_flushes '
                    "WHERE node_id = ?", [self.node_id]).fetchone()[0]
                missing = cur.sql(
                    f"SELECT * FROM {LAKE}.flushes WHERE node_id = ? AND flush_no > ? "
                    "ORDER BY flush_no", params=[self.node_id, int(noted)]).to_arrow_table()
                previous = cur.execute(
                    f"SELECT flush_no, span_mark, calls_mark FROM {LAKE}.flushes "
                    "WHERE node_id = ? AND flush_no < ? ORDER BY flush_no DESC LIMIT 1",
                    [self.node_id, self.mark.flush_no]).fetchone()
            finally:
                cur.close()
            if self.mark.flush_no and self._pg_flush_no() < self.mark.flush_no:
                before = (FlushMark(int(previous[0]), previous[1] or EPOCH, previous[2] or EPOCH)
                          if previous else FlushMark())
                self._upsert_traces(before, self.mark)
                log.warning("flush %d of node %s was in the lake but not in PostgreSQL's "
                            "traces; upserted its traces now", self.mark.flush_no, self.node_id)
            self.upserted = self.mark
            if missing.num_rows:
                self.stats.recovered += missing.num_rows
                self._note(missing.to_pylist())
                log.warning("flush %s of node %s was committed to the lake before the node "
                            "stopped but not noted; noted it now (not flushed again)",
                            ", ".join(str(n) for n in missing.column("flush_no").to_pylist()),
                            self.node_id)
            self._retained_to = EPOCH
            return self.mark

    def _pg_flush_no(self) -> int:
        conn = self._pg_conn()
        with conn.cursor() as cur:
            cur.execute("SELECT flush_no FROM tracescore.node_flushes WHERE node_id = %s",
                        [self.node_id])
            row = cur.fetchone()
        conn.commit()
        return int(row[0]) if row else 0

    # -- one flush ------------------------------------------------------------------------

    def due(self) -> bool:
        """True when the interval passed or ``flush_rows`` rows arrived since the last flush."""
        stats = self.store.stats()
        arrived = stats.spans_inserted + stats.logs_inserted - self._rows_at_flush
        waited = time.monotonic() - self._last_flush
        return arrived >= self.settings.flush_rows or (
            waited >= self.settings.flush_interval_seconds)

    def flush(self) -> FlushResult | None:
        """Flush what arrived since the mark (None when nothing did); raises ``FlushFailed``
        when the lake transaction did not commit after its retries."""
        with self._lock:
            began = time.perf_counter()
            stats = self.store.stats()
            rows_now = stats.spans_inserted + stats.logs_inserted
            self._last_flush = time.monotonic()
            try:
                result = self._flush()
            except Exception as exc:
                self.stats.failures += 1
                self.stats.last_error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                raise FlushFailed(
                    f"flush {self.mark.flush_no + 1} of node {self.node_id} failed "
                    f"({self.stats.last_error}); its rows stay in the node's file and go with "
                    "the next flush") from exc
            self._rows_at_flush = rows_now
            elapsed = (time.perf_counter() - began) * 1000
            if result is not None:
                s = self.stats
                s.flushes += 1
                s.spans += result.spans
                s.logs += result.logs
                s.model_calls += result.model_calls
                s.traces += result.traces
                s.last_flush_ms = elapsed
                s.flush_ms += elapsed
                s.last_flush_at = self._clock()
                if self._traces_due is None:
                    s.last_error = None
            return result

    def _flush(self) -> FlushResult | None:
        if not self._rows_past_mark():
            self.upsert_due_traces()
            return None
        attempts = 0

        def attempt() -> tuple[FlushMark, _Window] | None:
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                self.stats.commit_retries += 1
            known, self._mark_known = self._mark_known, False  # until this attempt returns
            done = self._lake_transaction(read_mark=not known)
            self._mark_known = True
            return done

        done = with_catalog_retry(attempt)
        if done is None:
            self.upsert_due_traces()
            return None
        mark, window = done
        previous = self.mark
        self.mark = mark
        self._note([{"node_id": self.node_id, "flush_no": mark.flush_no,
                     "span_mark": mark.span_mark, "calls_mark": mark.calls_mark,
                     **window.counts, "flushed_at": self._clock()}])
        due = self._traces_due
        self._traces_due = (due[0] if due is not None else previous, mark)
        self.upsert_due_traces()
        return FlushResult(mark, window.counts.get("spans", 0), window.counts.get("logs", 0),
                           window.counts.get("model_calls", 0), window.counts.get("traces", 0))

    def upsert_due_traces(self) -> bool:
        """Upsert the traces of the flushes whose PostgreSQL upsert has not committed yet (it
        failed, e.g. PostgreSQL was away); True when none is left. The windows of several
        flushes are upserted as one (the values are absolute)."""
        if self._traces_due is None:
            return True
        previous, mark = self._traces_due
        try:
            self._upsert_traces(previous, mark)
        except Exception as exc:  # noqa: BLE001 - tried again with the next flush
            self.stats.traces_upsert_failures += 1
            self.stats.last_error = f"traces upsert: {type(exc).__name__}: {exc}"
            log.warning("cluster node %s: the traces of flush %d are not in PostgreSQL yet "
                        "(%s); trying again with the next flush", self.node_id, mark.flush_no,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return False
        self._traces_due = None
        self.upserted = mark
        return True

    def _lake_transaction(self, *, read_mark: bool) -> tuple[FlushMark, _Window] | None:
        """One attempt: the new marks, the copies and the tag in one lake transaction.
        ``read_mark``: read the node's last flush from the lake first (at start, and after an
        attempt that raised: it may have committed); else the node's own ``mark`` is the
        lake's (reading it costs a fifth of a small flush)."""
        local = f'"{self._local}".main'
        out: tuple[FlushMark, _Window] | None = None
        landed = False
        with transaction(self.store) as cur:
            committed = self.lake_mark(cur) if read_mark else self.mark
            if committed.flush_no != self.mark.flush_no:
                # An attempt whose commit seemed to fail had committed: do not copy it again;
                # its note and traces upsert follow as for any flush.
                log.warning("flush %d of node %s had committed after all; not copying it "
                            "again", committed.flush_no, self.node_id)
                out = committed, _Window(committed.span_mark, committed.calls_mark)
                raise Discard
            m0, c0 = committed.span_mark, committed.calls_mark
            window = self._window(cur, local, m0, c0)
            if window is None:
                raise Discard
            flush_no = committed.flush_no + 1
            counts = window.counts
            counts["spans"] = self._copy(cur, local, "spans", m0, window.spans_to)
            counts["logs"] = self._copy(cur, local, "logs", m0, window.spans_to)
            counts["model_calls"] = self._copy_calls(cur, local, c0, window.calls_to)
            mark = FlushMark(flush_no, window.spans_to, window.calls_to)
            counts["traces"] = int(cur.execute(
                f"SELECT count(*) FROM {local}.traces WHERE {_TOUCHED}",
                _touched_params(committed, mark)).fetchone()[0])
            names = lake_tables()["flushes"]
            values = {"node_id": self.node_id, "flush_no": flush_no,
                      "span_mark": mark.span_mark, "calls_mark": mark.calls_mark,
                      **counts, "flushed_at": self._clock()}
            cur.execute(
                f"INSERT INTO {LAKE}.flushes ({', '.join(n for n, _ in names)}) VALUES "
                f"({', '.join('?' for _ in names)})", [values[n] for n, _ in names])
            tag = snapshot_tag(self.node_id, flush_no, mark.span_mark, mark.calls_mark)
            cur.execute(f"CALL {LAKE}.set_commit_message(?, ?, extra_info => ?)",
                        [f"tracescore {self.node_id}",
                         f"flush {flush_no} of node {self.node_id}", tag])
            cur.execute(f"SET ducklake_retry_wait_ms = {random.randint(10, 60)}")
            out = mark, window
            landed = True
        if landed and self._after_lake_commit is not None:
            self._after_lake_commit(mark)
        return out

    def _rows_past_mark(self) -> bool:
        """True when the node's file holds rows past its last flush, read in the file alone:
        an idle node's flush opens no lake transaction (no catalog round trips). A commit that
        seemed to fail but landed leaves rows past ``self.mark`` too, so the transaction still
        runs and finds it (``_lake_transaction``)."""
        cur = self.store.cursor()
        try:
            return self._window(cur, f'"{self._local}".main', self.mark.span_mark,
                                self.mark.calls_mark) is not None
        finally:
            cur.close()

    def _window(self, cur: Any, local: str, m0: datetime, c0: datetime) -> _Window | None:
        spans_to = cur.execute(
            f"SELECT greatest((SELECT max(received_at) FROM {local}.spans WHERE received_at > ?),"
            f" (SELECT max(received_at) FROM {local}.logs WHERE received_at > ?))",
            [m0, m0]).fetchone()[0]
        spans_to = spans_to or m0
        from tracescore.store import STALE_PREDICATE

        pending = cur.execute(
            f"SELECT min(last_received_at) FROM {local}.traces "
            f"WHERE last_received_at > ? AND {STALE_PREDICATE}", [c0]).fetchone()[0]
        calls_to = spans_to if pending is None else min(spans_to, pending - ONE_US)
        calls_to = max(calls_to, c0)
        if spans_to <= m0 and calls_to <= c0:
            return None
        return _Window(spans_to, calls_to)

    def _copy(self, cur: Any, local: str, table: str, since: datetime, until: datetime) -> int:
        if until <= since:
            return 0
        names = ", ".join(_columns(table))
        row = cur.execute(
            f"INSERT INTO {LAKE}.{table} ({names}, node_id) SELECT {names}, ? FROM "
            f"{local}.{table} WHERE received_at > ? AND received_at <= ?",
            [self.node_id, since, until]).fetchone()
        return int(row[0]) if row else 0

    def _copy_calls(self, cur: Any, local: str, since: datetime, until: datetime) -> int:
        if until <= since:
            return 0
        window = (f"FROM {local}.traces t WHERE t.last_received_at > ? AND t.last_received_at <= ?"
                  )
        again = cur.execute(
            f"SELECT list(t.trace_id), min(t.first_received_at) {window} "
            "AND t.first_received_at <= ?", [since, until, since]).fetchone()
        if again and again[0]:
            cur.execute(
                f"DELETE FROM {LAKE}.model_calls WHERE node_id = ? AND received_at >= ? "
                "AND list_contains(?::VARCHAR[], trace_id)", [self.node_id, again[1], again[0]])
        names = _columns("model_calls")
        select = ", ".join(f"m.{n}" for n in names)
        row = cur.execute(
            f"INSERT INTO {LAKE}.model_calls ({', '.join(names)}, received_at, node_id) "
            f"SELECT {select}, t.totals_received_at, ? FROM {local}.model_calls m "
            f"JOIN (SELECT t.trace_id, t.totals_received_at {window}) t "
            "ON m.trace_id = t.trace_id", [self.node_id, since, until]).fetchone()
        return int(row[0]) if row else 0

    # -- PostgreSQL traces and the local note ---------------------------------------------

    def _upsert_traces(self, previous: FlushMark, mark: FlushMark) -> int:
        """Upsert this node's rows of the traces the flush touched (spans in its span window,
        or totals in its calls window) into ``trace_nodes`` and fold them into ``traces``;
        note the flush in ``node_flushes``."""
        from tracescore.store import TABLES

        columns = [name for name, _ in TABLES["traces"]]
        select = ", ".join(
            f"CAST({name} AS TIMESTAMP) AS {name}" if sql_type.startswith("TIMESTAMP_NS")
            else name for name, sql_type in TABLES["traces"])
        cur = self.store.cursor()
        try:
            table = cur.sql(
                f'SELECT {select} FROM "{self._local}".main.traces WHERE {_TOUCHED}',
                params=_touched_params(previous, mark)).to_arrow_table()
        finally:
            cur.close()
        data = columns_from_arrow(table)
        ids = data["trace_id"]
        now = self._clock()
        data["node_id"] = [self.node_id] * len(ids)
        data["updated_at"] = [now] * len(ids)
        conn = self._pg_conn()
        try:
            with conn.transaction(), conn.cursor() as pg:
                if ids:
                    lock_traces(pg, ids)
                    insert_columns(pg, self._tables["trace_nodes"], data, conflict="update")
                    rest = tuple(c for c in columns if c != "trace_id")
                    pg.execute(fold_sql(rest), [ids])
                insert_rows(pg, self._tables["node_flushes"], [{
                    "node_id": self.node_id, "flush_no": mark.flush_no,
                    "span_mark": mark.span_mark, "calls_mark": mark.calls_mark,
                    "traces": len(ids), "updated_at": now}], conflict="update")
        except Exception:
            self._drop_pg()
            raise
        return len(ids)

    def _note(self, rows: list[dict[str, Any]]) -> None:
        from tracescore.store import insert_arrow, rows_table

        table = rows_table("cluster_flushes", rows)

        def write(conn: Any) -> None:
            insert_arrow(conn, "cluster_flushes", table, "INSERT OR IGNORE")

        self.store.write_sync(write)

    def _pg_conn(self) -> Any:
        if self._pg is None or self._pg.closed:
            self._pg = self._pg_connect()
        return self._pg

    def _drop_pg(self) -> None:
        if self._pg is not None:
            try:
                self._pg.close()
            except Exception:  # already broken
                pass
        self._pg = None

    def close(self) -> None:
        """Close the PostgreSQL connection."""
        self._drop_pg()

    # -- retention ------------------------------------------------------------------------

    def delete_retained(self) -> int:
        """Delete flushed rows older than ``local_retention_seconds`` from the node's file
        (through the writer); returns the spans and logs deleted."""
        cut = self._clock() - timedelta(seconds=self.settings.local_retention_seconds)
        spans_to = min(cut, self.mark.span_mark)
        calls_to = min(cut, self.mark.calls_mark)
        since = self._retained_to
        if spans_to <= since and calls_to <= since:
            return 0

        def delete(conn: Any) -> int:
            deleted = 0
            for table in ("spans", "logs"):
                row = conn.execute(f"DELETE FROM {table} WHERE received_at <= ?",
                                   [spans_to]).fetchone()
                deleted += int(row[0]) if row else 0
            conn.execute(
                "DELETE FROM model_calls WHERE trace_id IN (SELECT trace_id FROM traces "
                "WHERE last_received_at <= ? AND last_received_at > ?)", [calls_to, since])
            return deleted

        deleted = int(self.store.write_sync(delete))
        self._retained_to = min(spans_to, calls_to)
        self.stats.retention_deletes += deleted
        return deleted


__all__ = ["EPOCH", "FlushMark", "FlushResult", "FlushStats", "Flusher"]
