"""``Store``: one DuckDB file, one writer thread, read cursors, and the guarded SQL surface.

The write connection belongs to the writer thread (``_writer.py``); every read takes its own
cursor. After migrations the database's external access is switched off
(``enable_external_access=false``): no statement, trusted or not, can then read or write files
outside the store's export directory, attach databases or load extensions.

When DuckDB invalidates the database (a fatal error, e.g. out of memory during a checkpoint),
``unavailable`` says why, writes and reads raise ``StoreUnavailable`` (503, retry), and the
writer reopens the file through ``_reopen`` (DuckDB replays its WAL, so every committed row is
kept); ``stats().reopens`` counts it.

A damaged file is not that: before the open, ``_wal.recover_wal`` keeps a copy of a WAL that
will not replay whole (and refuses one that cannot be read at all, unless
``discard_damaged_wal``); a file DuckDB cannot open, or whose blocks fail their checksums while
it opens, is ``DatabaseDamaged`` (one sentence); a block that fails its checksum later, in a
read, makes ``damaged`` say so (``/healthz`` answers degraded) while the rest goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import orjson

from ._arrow import rows_table
from ._checkpoint import CheckpointPolicy
from ._damage import DamageNote, connect_replaying, damaged_error
from ._errors import (
    DuplicateRows,
    StoreClosed,
    StoreError,
    StoreUnavailable,
)
from ._experiment_rows import insert_arrow
from ._fatal import doubled_memory, first_line, for_want_of_memory, is_corruption, is_fatal
from ._query import QueryAnswer, QueryResult, run_query, run_query_json
from ._read_gate import GatedCursor, ReadGate
from ._schema import SCHEMA_VERSION, migrate
from ._sizes import batch_bytes
from ._sql_slots import SqlSlots
from ._traces_table import TracesMaintainer
from ._wal import recover_wal
from ._writer import Writer, WriterStats

log = logging.getLogger(__name__)

_REFRESH_WAIT_S = 1.0
"""How long a planned reopen waits for the reads in flight (new reads and the writer wait
meanwhile, so it is short: a longer read puts the reopen off to the next checkpoint)."""
_READ_WAIT_S = 30.0
"""How long a new read waits for a planned reopen to finish before it is refused (503)."""

T = TypeVar("T")

_SPAN_ROWS = """
SELECT trace_id, span_id, parent_span_id, project, service_name, name, kind,
       epoch_ns(start_time) AS start_time_ns, epoch_ns(end_time) AS end_time_ns, duration_ms,
       status_code, status_message, attributes, resource_attributes, events, links,
       scope_name, scope_version
"""
_SPAN_ROW_SQL = _SPAN_ROWS + """
FROM spans WHERE trace_id = ? ORDER BY start_time, span_id
"""
_LOG_ROWS = """
SELECT trace_id, span_id, epoch_ns(log_time) AS time_unix_nano,
       epoch_ns(observed_time) AS observed_time_unix_nano, severity_number, severity_text,
       event_name, body, attributes, resource_attributes, scope_name, scope_version, project,
       service_name
"""
_LOG_ROW_SQL = _LOG_ROWS + """
FROM logs WHERE trace_id = ?
ORDER BY coalesce(log_time, observed_time), observed_time, log_id
"""
_SPANS_SINCE_SQL = _SPAN_ROWS + """
FROM spans WHERE received_at >= ? AND trace_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY trace_id, start_time, span_id
"""
_LOGS_SINCE_SQL = _LOG_ROWS + """
FROM logs WHERE received_at >= ? AND trace_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY trace_id, coalesce(log_time, observed_time), observed_time, log_id
"""
SPAN_ROWS_SELECT = _SPAN_ROWS
"""The SELECT list of span row dicts (INTERFACES.md), for readers that pick rows elsewhere."""
LOG_ROWS_SELECT = _LOG_ROWS
"""The SELECT list of log row dicts (INTERFACES.md)."""
_SPAN_JSON = ("attributes", "resource_attributes", "events", "links")
_LOG_JSON = ("body", "attributes", "resource_attributes")


def _first_checkpoint(conn: Any) -> None:
    """Run DuckDB's first checkpoint of this open now. After opening a file, the first
    checkpoint that writes anything reads and rewrites the metadata of every table (~0.5 s with
    10 M spans stored, 20 ms for an empty file); a scratch table created and dropped makes this
    one write the catalog, so no request's commit later waits for that cost. It also folds a
    WAL left by a crash into the file."""
    conn.execute("CREATE TABLE __tracescore_open_checkpoint (x INTEGER)")
    conn.execute("DROP TABLE __tracescore_open_checkpoint")
    conn.execute("CHECKPOINT")


class Store:
    """The tracescore database. ``open()`` it (or use ``with``) before use; ``close()`` drains.

    Args:
        path: the DuckDB file (created with its directory if missing); ``":memory:"`` for tests.
        read_only: open without a writer (``tracescore sql --db`` on a stopped server's file).
        sql_row_limit: the default row cap of ``query``.
        sql_timeout_s: the default time limit of ``query``.
        sql_max_bytes: the default size limit (JSON bytes of the rows) of ``query``.
        sql_max_concurrent: user statements (``query``, ``query_json``) running at once; the
            others wait their turn, up to twice their time limit (``_sql_slots.py``); 0 = no
            limit.
        max_pending_rows: rows that may wait for the writer before writes get ``WriteQueueFull``.
        max_pending_bytes: bytes (estimated, ``_sizes.py``) that may wait likewise.
        max_batch_rows: at most this many rows go into one group commit.
        max_batch_bytes: at most about this many bytes go into one transaction.
        min_batch_rows: a smaller commit first waits up to ``linger_s`` for more rows.
        linger_s: how long a small commit waits for more rows (0 = never).
        retry_after_s: the ``retry_after_s`` of ``WriteQueueFull``.
        memory_limit: DuckDB's ``memory_limit`` (e.g. ``"1GB"``), or None for DuckDB's default.
        threads: DuckDB's worker threads, or None for DuckDB's default.
        external_access: leave DuckDB's file/network access on (trusted CLI export only).
        checkpoint: when the writer checkpoints (``CheckpointPolicy``; DuckDB's own automatic
            checkpoint, which would run inside a request's commit, is pushed out of reach).
        on_connect: called with each new connection after its migrations and before external
            access is switched off (cluster mode attaches the lake and PostgreSQL there); it
            returns directories the database may still read and write afterwards.
        trace_hash_bits: bits of each trace id's hash the writer's index of stored traces
            keeps (``TraceIndex``); fewer make distinct ids share hashes, so the ``traces``
            maintenance takes its exact path often (for tests).
        discard_damaged_wal: open even when the write-ahead log cannot be read at all, or
            fails a checksum: the unreadable log (or its part from the bad entry on) is moved
            aside to ``<db>.wal.damaged-<time>`` and the database opens without it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        sql_row_limit: int = 10_000,
        sql_timeout_s: float = 30.0,
        sql_max_bytes: int = 32 * 1024 * 1024,
        sql_max_concurrent: int = 4,
        max_pending_rows: int = 200_000,
        max_pending_bytes: int = 256 * 1024 * 1024,
        max_batch_rows: int = 32_768,
        max_batch_bytes: int = 32 * 1024 * 1024,
        min_batch_rows: int = 2_048,
        linger_s: float = 0.025,
        retry_after_s: float = 1.0,
        memory_limit: str | None = None,
        threads: int | None = None,
        external_access: bool = False,
        checkpoint: CheckpointPolicy | None = None,
        trace_hash_bits: int = 64,
        on_connect: Callable[[Any], Sequence[str]] | None = None,
        discard_damaged_wal: bool = False,
    ) -> None:
        self.path = str(path)
        self._on_connect = on_connect
        self._discard_damaged_wal = discard_damaged_wal
        self._damage = DamageNote(self.path)
        self._trace_hash_bits = trace_hash_bits
        self._checkpoint = checkpoint or CheckpointPolicy()
        self.read_only = read_only
        self.sql_row_limit = sql_row_limit
        self.sql_timeout_s = sql_timeout_s
        self.sql_max_bytes = sql_max_bytes
        self.sql_slots = SqlSlots(sql_max_concurrent)
        self._max_pending_rows = max_pending_rows
        self._max_pending_bytes = max_pending_bytes
        self._max_batch_rows = max_batch_rows
        self._max_batch_bytes = max_batch_bytes
        self._min_batch_rows = min_batch_rows
        self._linger_s = linger_s
        self._retry_after_s = retry_after_s
        self._memory_limit = memory_limit
        self._threads = threads
        self._external_access = external_access
        self._conn: Any = None
        self._gate = ReadGate()
        self._writer: Writer | None = None
        self._export_dir: str | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def open(self) -> Store:
        """Connect, apply migrations, lock down external access, start the writer."""
        if self._conn is not None:
            return self
        if self.path != ":memory:" and not self.read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        if self.read_only and not Path(self.path).exists():
            raise StoreError(f"no database at {self.path}; check --db (or start the server)")
        on_disk = self.path != ":memory:"
        recovery = None
        if on_disk and not self.read_only:
            recovery = recover_wal(self.path, discard_damaged_wal=self._discard_damaged_wal)
        try:
            self._conn = self._connect()
        except BaseException:
            if recovery is not None:  # e.g. another process holds the file: its live log
                recovery.undo()
            raise
        traces = TracesMaintainer(hash_bits=self._trace_hash_bits)
        if not self.read_only:
            try:
                if on_disk:
                    _first_checkpoint(self._conn)
                traces.load(self._conn)  # before the first request, not inside its commit
            except Exception as exc:
                self._conn.close()
                self._conn = None
                if is_corruption(exc):
                    raise damaged_error(self.path, exc) from None
                raise
            log.info("opened %s (schema version %d)", self.path, SCHEMA_VERSION)
            if recovery is not None:
                log.warning("%s", recovery.note)
            self._writer = Writer(
                self._conn,
                max_pending_rows=self._max_pending_rows,
                max_batch_rows=self._max_batch_rows,
                retry_after_s=self._retry_after_s,
                min_batch_rows=self._min_batch_rows,
                linger_s=self._linger_s,
                max_pending_bytes=self._max_pending_bytes,
                max_batch_bytes=self._max_batch_bytes,
                reopen=self._reopen if self.path != ":memory:" else None,
                span_hook=traces,
                wal_path=self.path + ".wal" if self.path != ":memory:" else None,
                checkpoint=self._checkpoint,
                refresh=self._refresh if self.path != ":memory:" else None,
            )
            self._writer.start()
        return self

    def _connect(self) -> Any:
        """A new connection: migrated and locked down (the export directory is reused)."""
        import duckdb

        config: dict[str, Any] = {}
        if self._memory_limit:
            config["memory_limit"] = self._memory_limit
        if self._threads:
            config["threads"] = self._threads
        if not self.read_only:
            config.update(self._checkpoint.duckdb_config)
        try:
            conn = connect_replaying(self.path, read_only=self.read_only, config=config,
                                     discard_damaged_wal=self._discard_damaged_wal)
        except duckdb.Error as exc:
            if is_corruption(exc):
                raise damaged_error(self.path, exc) from None
            if not isinstance(exc, duckdb.IOException):
                raise StoreError(f"cannot open {self.path}: {first_line(exc)}") from exc
            raise StoreError(
                f"cannot open {self.path}: {exc}. If `tracescore serve` is running on this file, "
                "query it with --url instead of --db"
            ) from exc
        try:
            conn.execute("SET enable_progress_bar = false")  # a long migration drew one
            if not self.read_only:
                migrate(conn)
            allowed: list[str] = []
            if self._on_connect is not None:
                allowed += self._on_connect(conn)
            if not self._external_access:
                if self._export_dir is None:
                    self._export_dir = tempfile.mkdtemp(prefix="tracescore-export-")
                allowed.insert(0, f"{self._export_dir}/")
                listed = ", ".join("'" + path.replace("'", "''") + "'" for path in allowed)
                conn.execute(f"SET allowed_directories = [{listed}]")
                conn.execute("SET enable_external_access = false")
        except BaseException as exc:
            conn.close()
            if is_corruption(exc):
                raise damaged_error(self.path, exc) from None
            raise
        return conn

    @property
    def damaged(self) -> str | None:
        """Damage a read ran into since the store opened (a block failing its checksum), and
        how often; None when no read has. The rest of the file stays in use."""
        return self._damage.reason

    @property
    def disk_full(self) -> str | None:
        """The disk's "no space" error while the disk holding the database stays full (writes
        are answered 503, nothing stored is touched), else None."""
        return self._writer.disk_full if self._writer else None

    def _reopen(self) -> Any:
        """Writer thread: close the invalidated connection and open the file again."""
        old, self._conn = self._conn, None
        try:
            old.close()
        except Exception as exc:  # an invalidated database may refuse; it is dropped anyway
            log.debug("closing the invalidated connection: %s", exc)
        reason = (self._writer.unavailable if self._writer else None) or ""
        if self._memory_limit and for_want_of_memory(reason):
            # The WAL replays into memory and the next checkpoint needs as much again: with the
            # same limit the database would be invalidated again at once.
            self._memory_limit = doubled_memory(self._memory_limit)
            log.warning("DuckDB ran out of memory; reopening with memory_limit %s (raise "
                        "duckdb_memory_limit to keep it)", self._memory_limit)
        self._conn = self._connect()
        log.warning("reopened %s after a fatal DuckDB error (WAL replayed)", self.path)
        return self._conn

    def _refresh(self) -> Any | None:
        """Writer thread, nothing queued: close the file and open it again to give back what
        DuckDB holds per row group while a database stays open (``CheckpointPolicy
        .reopen_after``). Waits for the reads in flight (``_read_gate``) and holds new ones
        meanwhile; None when reads outlasted the wait (tried again after the next checkpoint).
        """
        if not self._gate.drain(_REFRESH_WAIT_S):
            log.info("planned reopen put off: %d reads still running after %g s",
                     self._gate.active, _REFRESH_WAIT_S)
            return None
        try:
            old, self._conn = self._conn, None
            old.close()
            self._conn = self._connect()
            return self._conn
        finally:
            self._gate.resume()

    @property
    def unavailable(self) -> str | None:
        """Why the database cannot be used right now (DuckDB invalidated it), else None."""
        if self._conn is None and self._writer is None:
            return "the store is not open"
        return self._writer.unavailable if self._writer else None

    def _check_fatal(self, exc: BaseException) -> None:
        """Turn a fatal DuckDB error seen by a reader into ``StoreUnavailable`` (and reopen);
        note damage to the file (``damaged``)."""
        self._damage.note(exc)
        if not is_fatal(exc):
            return
        reason = first_line(exc)
        if self._writer is not None:
            self._writer.report_fatal(reason)
        raise StoreUnavailable(
            f"the database hit a fatal DuckDB error and is being reopened ({reason}); retry "
            f"in {self._retry_after_s:g} s",
            retry_after_s=self._retry_after_s,
        ) from None

    def close(self) -> None:
        """Finish queued writes, checkpoint, and close the database."""
        if self._conn is None and self._writer is None:
            return
        if self._writer is not None:
            self._writer.close()  # its thread ends after the job or reopen it is running
            self._writer = None
            if self._conn is None:  # its last reopen of the file failed
                return
            try:
                self._conn.execute("CHECKPOINT")
            except Exception as exc:  # a failed checkpoint leaves the WAL; nothing is lost
                log.warning("checkpoint on close failed: %s", exc)
        self._conn.close()
        self._conn = None
        if self._export_dir:
            shutil.rmtree(self._export_dir, ignore_errors=True)
            self._export_dir = None

    def __enter__(self) -> Store:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def is_open(self) -> bool:
        """True between ``open()`` and ``close()`` (also while the writer reopens the file)."""
        return self._conn is not None or self._writer is not None

    @property
    def schema_version(self) -> int:
        """The schema version this code writes (the last migration)."""
        return SCHEMA_VERSION

    def stats(self) -> WriterStats:
        """The writer's counters (commits, rows received/inserted, pending rows)."""
        return self._writer.stats if self._writer else WriterStats()

    # -- writes ----------------------------------------------------------------------------

    def _submit(self, kind: Any, payload: Any, rows: int) -> Future[Any]:
        if self._writer is None:
            raise StoreClosed(
                "the store is read-only or not open; open it with Store(path).open()"
            )
        if threading.current_thread() is self._writer.thread:
            raise RuntimeError("cannot wait for the writer from inside a write(fn) function")
        nbytes = batch_bytes(payload, rows) if kind != "fn" else 0
        future = self._writer.submit(kind, payload, rows, nbytes)
        future.add_done_callback(self._note_write_damage)
        return future

    def _note_write_damage(self, future: Future[Any]) -> None:
        """A write that failed on a damaged block counts as damage too (``damaged``)."""
        if not future.cancelled() and (error := future.exception()) is not None:
            self._damage.note(error)

    def submit_spans(self, batch: Any) -> Future[None]:
        """Queue a span batch (``SpanBatch``, mapping of columns, or row dicts); see write_spans."""
        return self._submit("spans", batch, _rows_in(batch))

    def submit_logs(self, batch: Any) -> Future[None]:
        """Queue a log batch (``LogBatch`` or mapping of columns)."""
        return self._submit("logs", batch, _rows_in(batch))

    async def write_spans(self, batch: Any) -> None:
        """Insert spans; returns after the commit. Re-sent spans (same ids) are ignored.

        Raises ``WriteQueueFull`` at once when the writer is too far behind.
        """
        await asyncio.wrap_future(self.submit_spans(batch))

    def write_spans_sync(self, batch: Any) -> None:
        """``write_spans`` for synchronous callers."""
        self.submit_spans(batch).result()

    async def write_logs(self, batch: Any) -> None:
        """Insert log records; returns after the commit. Re-sent records are ignored."""
        await asyncio.wrap_future(self.submit_logs(batch))

    def write_logs_sync(self, batch: Any) -> None:
        """``write_logs`` for synchronous callers."""
        self.submit_logs(batch).result()

    async def write(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(conn)`` on the writer thread inside one transaction; return its result.

        The transaction commits when ``fn`` returns and rolls back if it raises. Insert through
        Arrow (``insert_arrow``, or ``arrow_view`` for other statements) for many rows. ``fn``
        must not wait for the store itself.
        """
        result: T = await asyncio.wrap_future(self._submit("fn", fn, 0))
        return result

    def write_sync(self, fn: Callable[[Any], T]) -> T:
        """``write`` for synchronous callers."""
        result: T = self._submit("fn", fn, 0).result()
        return result

    def write_scores_sync(
        self,
        scores: Sequence[Mapping[str, Any]],
        judge_executions: Sequence[Mapping[str, Any]] = (),
        decisions: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Write score, judge-execution and scoring-decision rows in one transaction.

        Rows are dicts keyed by column name (see the tables in docs/server.md); missing keys
        are NULL, ``created_at``/``updated_at`` default to now. A score or execution whose id
        is already stored is left as it is; a decision replaces the one with the same
        (trace_id, span_id, scorer_id, scorer_version).
        """
        self.write_sync(score_rows_writer(scores, judge_executions, decisions))

    async def write_scores(
        self,
        scores: Sequence[Mapping[str, Any]],
        judge_executions: Sequence[Mapping[str, Any]] = (),
        decisions: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """``write_scores_sync`` for async callers (the Arrow tables are built on the calling
        thread; build them off the event loop with ``score_rows_writer`` and ``write``)."""
        await self.write(score_rows_writer(scores, judge_executions, decisions))

    # -- reads -----------------------------------------------------------------------------

    def cursor(self) -> Any:
        """A new DuckDB cursor for trusted reads on the calling thread (close it after use: a
        planned reopen waits for open cursors, ``_read_gate``)."""
        gate = self._gate
        gate.enter(_READ_WAIT_S)
        try:
            conn = self._conn
            if conn is None:
                if self._writer is not None:  # between closing and reopening the file
                    raise StoreUnavailable("the database is being reopened; retry in a moment")
                raise StoreClosed("the store is not open; call Store(path).open() first")
            try:
                cursor = conn.cursor()
            except Exception as exc:
                self._check_fatal(exc)
                raise
        except BaseException:
            gate.leave()
            raise
        return GatedCursor(cursor, gate)

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[
        dict[str, Any]
    ]:
        """Run a trusted read on its own cursor and return row dicts (no guard, no limits)."""
        cursor = self.cursor()
        try:
            cursor.execute(sql, params)
            names = [d[0] for d in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except Exception as exc:
            self._check_fatal(exc)
            raise
        finally:
            cursor.close()

    async def aread(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """``read`` in a worker thread, for async callers."""
        return await asyncio.to_thread(self.read, sql, params)

    def fetch_trace_rows(self, trace_id: str) -> list[dict[str, Any]]:
        """The spans of one trace as span row dicts (INTERFACES.md), ordered by start time."""
        rows = self.read(_SPAN_ROW_SQL, [trace_id.lower()])
        return [_parse_json(row, _SPAN_JSON) for row in rows]

    def fetch_trace_logs(self, trace_id: str) -> list[dict[str, Any]]:
        """The log records of one trace as log row dicts (INTERFACES.md), ordered by time."""
        rows = self.read(_LOG_ROW_SQL, [trace_id.lower()])
        return [_parse_json(row, _LOG_JSON) for row in rows]

    def fetch_recent_traces(
        self, trace_ids: Sequence[str], *, spans_since: Any, logs_since: Any
    ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
        """The span rows and log rows of many traces in one query each, by trace id.

        Only rows received at or after ``spans_since`` / ``logs_since`` are read: DuckDB skips
        older row groups by their ``received_at`` ranges, so the cost follows the recent rows,
        not the size of the table (a ``trace_id = ?`` lookup scans it all). For live scoring,
        whose traces arrived recently; rows received earlier are not returned.
        """
        ids = sorted({trace_id.lower() for trace_id in trace_ids})
        if not ids:
            return {}, {}
        spans = self.fetch_recent_spans(ids, since=spans_since)
        logs = _rows_by_trace(self._read_columns(_LOGS_SINCE_SQL, [logs_since, ids]), _LOG_JSON)
        return spans, logs

    def fetch_recent_spans(
        self, trace_ids: Sequence[str], *, since: Any
    ) -> dict[str, list[dict[str, Any]]]:
        """The span rows of many traces received at or after ``since``, by trace id (the spans
        half of ``fetch_recent_traces``, for readers that need no logs: the totals maintainer)."""
        ids = sorted({trace_id.lower() for trace_id in trace_ids})
        if not ids:
            return {}
        return _rows_by_trace(self._read_columns(_SPANS_SINCE_SQL, [since, ids]), _SPAN_JSON)

    def _read_columns(self, sql: str, params: list[Any]) -> dict[str, list[Any]]:
        """A trusted read's result as Python lists by column (through Arrow: for many rows
        several times cheaper than a tuple per row)."""
        cursor = self.cursor()
        try:
            table = cursor.sql(sql, params=params).to_arrow_table()
            return {name: table.column(name).to_pylist() for name in table.column_names}
        except Exception as exc:
            self._check_fatal(exc)
            raise
        finally:
            cursor.close()

    def query(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
        *,
        row_limit: int | None = None,
        timeout_s: float | None = None,
        max_bytes: int | None = None,
    ) -> QueryResult:
        """Run one user statement, read-only, bounded in rows, bytes and time (``_query.py``).

        Raises ``InvalidSql`` (not a single read statement, file access, syntax),
        ``QueryTimeout``, ``SqlBusy`` (no free slot within the time limit) or
        ``StoreUnavailable``. Values come back JSON-safe.
        """
        return self.user_statement(run_query, sql, params, row_limit=row_limit,
                                   timeout_s=timeout_s, max_bytes=max_bytes)

    def query_json(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
    ) -> QueryAnswer:
        """``query`` keeping each row only as JSON text (``/api/sql``): the answer holds at
        most ``sql_max_bytes`` of JSON and never the rows as Python values as well."""
        return self.user_statement(run_query_json, sql, params)

    def user_statement(self, runner: Callable[..., T], sql: str, params: Any, *,
                       row_limit: int | None = None, timeout_s: float | None = None,
                       max_bytes: int | None = None, catalog: str | None = None) -> T:
        """Run a user statement with ``runner`` (``run_query``, ``run_query_json``) in one of
        the ``sql_max_concurrent`` slots (``_sql_slots.py``: it waits up to twice the time limit
        for one, then runs for up to the limit) on a cursor of its own, in ``catalog`` when
        given (the cluster's views); limits left out are the store's."""
        timeout_s = self.sql_timeout_s if timeout_s is None else timeout_s
        with self.sql_slots.hold(2 * timeout_s):
            cursor = self.cursor()
            try:
                if catalog is not None:
                    cursor.execute(f"USE {catalog}")
                return runner(
                    cursor, sql, params, timeout_s=timeout_s,
                    row_limit=self.sql_row_limit if row_limit is None else row_limit,
                    max_bytes=self.sql_max_bytes if max_bytes is None else max_bytes)
            except StoreUnavailable as exc:
                if self._writer is not None:
                    self._writer.report_fatal(str(exc))
                raise
            except StoreError as exc:
                self._damage.note(exc)
                raise
            finally:
                cursor.close()

    async def aquery(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
        *,
        row_limit: int | None = None,
        timeout_s: float | None = None,
        max_bytes: int | None = None,
    ) -> QueryResult:
        """``query`` in a worker thread, for async callers."""
        return await asyncio.to_thread(
            self.query, sql, params, row_limit=row_limit, timeout_s=timeout_s,
            max_bytes=max_bytes,
        )

    def export_parquet(self, sql: str, params: Sequence[Any] | None = None) -> Path:
        """Write the result of a trusted SELECT to a Parquet file in the export directory.

        The caller owns (and deletes) the returned file.
        """
        if self._export_dir is None:
            handle, name = tempfile.mkstemp(suffix=".parquet", prefix="tracescore-")
            os.close(handle)
        else:
            handle, name = tempfile.mkstemp(suffix=".parquet", dir=self._export_dir)
            os.close(handle)
        target = Path(name)
        cursor = self.cursor()
        try:
            escaped = str(target).replace("'", "''")
            cursor.execute(f"COPY ({sql}) TO '{escaped}' (FORMAT parquet)", params)
        except BaseException as exc:
            target.unlink(missing_ok=True)
            self._check_fatal(exc)
            raise
        finally:
            cursor.close()
        return target


def _rows_in(batch: Any) -> int:
    table = getattr(batch, "arrow_table", None)
    if table is not None or hasattr(batch, "num_rows"):
        return int((table if table is not None else batch).num_rows)
    columns = getattr(batch, "columns", batch)
    if isinstance(columns, Mapping):
        first = next(iter(columns.values()), ())
        return len(first)
    return len(columns)


def _rows_by_trace(columns: dict[str, list[Any]],
                   json_names: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Row dicts from columns, JSON text parsed, grouped by ``trace_id`` in the rows' order."""
    loads = orjson.loads
    for name in json_names:
        columns[name] = [loads(v) if isinstance(v, str) else v for v in columns[name]]
    names = list(columns)
    out: dict[str, list[dict[str, Any]]] = {}
    for values in zip(*columns.values(), strict=True):
        row = dict(zip(names, values, strict=True))
        out.setdefault(row["trace_id"], []).append(row)
    return out


def _parse_json(row: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    for name in names:
        value = row.get(name)
        if isinstance(value, str):
            row[name] = orjson.loads(value)
    return row


def score_rows_writer(
    scores: Sequence[Mapping[str, Any]],
    judge_executions: Sequence[Mapping[str, Any]] = (),
    decisions: Sequence[Mapping[str, Any]] = (),
    *,
    fresh: bool = False,
    new_results: bool = False,
) -> Callable[[Any], None]:
    """The writer function of ``write_scores``: pass it to ``Store.write`` (one transaction).

    The rows are checked and turned into Arrow tables here, on the calling thread (a worker
    thread, so a big batch of score rows never holds up an event loop); the returned function
    only inserts them. Raises ``InvalidRow`` for a row that does not fit its table.

    ``fresh=True`` says no row has a stored twin (new pairs): they go in with plain ``INSERT``
    (DuckDB's ``INSERT OR REPLACE``/``OR IGNORE`` cost several times as much), and the write
    raises ``DuplicateRows`` (nothing written) if one did; write them again without ``fresh``.
    ``new_results=True`` says the same of the ``scores`` and ``judge_executions`` rows only (a
    pair's final write): they go in with plain ``INSERT`` while the decisions replace their
    pending rows.
    """
    import uuid
    from datetime import UTC, datetime

    now = datetime.now(UTC).replace(tzinfo=None)
    scores = [
        {**row, "score_id": row.get("score_id") or str(uuid.uuid4())} for row in scores
    ]
    executions = [
        {**row, "execution_id": row.get("execution_id") or str(uuid.uuid4())}
        for row in judge_executions
    ]
    latest: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for row in decisions:
        key = (row.get("trace_id"), row.get("span_id"), row.get("scorer_id"),
               row.get("scorer_version"))
        latest[key] = row
    score_table = rows_table("scores", scores, defaults={"created_at": now}) if scores else None
    execution_table = (
        rows_table("judge_executions", executions, defaults={"created_at": now})
        if executions
        else None
    )
    decision_table = (
        rows_table(
            "scoring_decisions",
            list(latest.values()),
            defaults={"created_at": now, "updated_at": now, "attempts": 0},
        )
        if latest
        else None
    )
    results_verb = "INSERT" if fresh or new_results else "INSERT OR IGNORE"
    tables = (
        ("scores", score_table, results_verb),
        ("judge_executions", execution_table, results_verb),
        ("scoring_decisions", decision_table, "INSERT" if fresh else "INSERT OR REPLACE"),
    )

    def write(conn: Any) -> None:
        import duckdb

        for name, table, verb in tables:
            if table is None:
                continue
            try:
                insert_arrow(conn, name, table, verb)
            except duckdb.ConstraintException as exc:
                raise DuplicateRows(
                    f"{name}: a row written as new is already stored ({first_line(exc)}); "
                    "write the rows again with fresh=False") from None

    return write


__all__ = ["LOG_ROWS_SELECT", "SPAN_ROWS_SELECT", "QueryResult", "Store", "score_rows_writer"]
