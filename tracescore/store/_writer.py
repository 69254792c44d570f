"""The single writer thread: group commit, acknowledge after commit, backpressure.

Callers submit jobs (a span batch, a log batch, or a function of the connection) and get a
``concurrent.futures.Future``. The thread takes every data job waiting in the queue (up to
``max_batch_rows``), inserts them through Arrow in one transaction, commits, then resolves
their futures: a request is answered only after its rows are durable, and many requests share
one commit. Under concurrent load (the previous commit held several jobs) a commit of fewer
than ``min_batch_rows`` rows waits up to ``linger_s`` for more: each DuckDB commit has a fixed
cost of several milliseconds, so many small commits waste the CPU that decoding needs. The
threshold is kept low (2,048 rows by default, four 512-span exports): while the writer lingers,
the clients whose rows it holds are blocked waiting for their answer, so a long linger for a
batch that already amortises the commit leaves the writer idle and the clients idle in turn
(8,192 rows cost 10 % of in-process ingest, measured 2026-12-01). A function job runs alone in
its own transaction.

Rows and bytes are both bounded. When more than ``max_pending_rows`` rows or
``max_pending_bytes`` bytes (an estimate of the batch's text, ``_sizes.py``) wait, ``submit``
raises ``WriteQueueFull`` at once; one write larger than either limit raises
``BatchTooLarge``. A commit takes at most ``max_batch_bytes``; a single larger write is
inserted in several transactions of about that size, and answered after the last: DuckDB holds
a transaction (and the checkpoint it may trigger) in memory, and one that outgrows its
``memory_limit`` invalidates the database.

``span_hook(conn, spans, received_at, exact=...)``, when given, runs inside each span
transaction before the insert, with the Arrow batch ``spans``, and ``span_hook.committed()`` after
its commit (the store keeps its ``traces`` table with it, ``_traces_table.py``). It returns the
earliest arrival a stored span of the batch's traces can have (None: every trace is new), which
bounds the duplicate check below. A hook that raises ``TracesConflict`` gets the transaction
run again with ``exact=True`` (``WriterStats.traces_exact_retries``); after a reopen the writer
calls ``span_hook.reopened()``.

Checkpoints never run inside a request's commit. The store raises DuckDB's
``checkpoint_threshold`` far above what the writer lets the WAL grow to, and the writer
checkpoints itself (``_checkpoint.py`` decides when): once the queue has been empty for
``CheckpointPolicy.idle_s`` with a WAL of at least ``min_wal_bytes`` (a smaller one once the
last checkpoint is ``interval_s`` old); between two commits when
the WAL passed ``eager_wal_bytes`` and no write is queued at that moment (short checkpoints,
in the gaps of the load); or between two commits whatever is queued when the WAL passed
``max_wal_bytes`` or the last checkpoint is ``interval_s`` old (a bound for a writer that is
never idle). DuckDB's row-group vacuum is off (``CheckpointPolicy.vacuum``), so a checkpoint
costs what its WAL holds.

Spans have no key index (its memory and upkeep grow with the table): each batch is inserted
with an anti-join against the spans received since the batch's stored traces first arrived,
and a key repeated inside the batch is kept once (``_span_dedupe.py``), so a re-sent export
never adds rows. Log records go in with a plain ``INSERT`` (their primary key enforced, no
conflict handling); a batch that hits a stored key makes DuckDB raise a constraint error, and
the writer rolls that transaction back and runs it again with ``INSERT OR IGNORE``
(``WriterStats.duplicate_retries`` counts those).

If DuckDB reports a fatal error anyway (``FatalException``, "database has been invalidated"),
the writer fails the jobs in hand and every new one with ``StoreUnavailable`` (retryable), and
calls ``reopen`` (the store closes the connection and opens the file again, replaying the WAL:
what was committed is kept). ``unavailable`` holds the reason until a reopen succeeds; a failed
reopen is tried again every ``retry_after_s``.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from ._arrow import log_table, span_table
from ._checkpoint import CheckpointPolicy, wal_bytes
from ._errors import BatchTooLarge, StoreClosed, StoreUnavailable, WriteQueueFull
from ._fatal import first_line, is_disk_full, is_fatal, is_out_of_memory
from ._schema import column_names
from ._span_dedupe import has_repeated_keys, insert_new_spans_sql
from ._traces_table import TracesConflict
from ._views import ViewPool, arrow_view

log = logging.getLogger(__name__)

JobKind = Literal["spans", "logs", "fn"]

_SPAN_COLUMNS = ", ".join(column_names("spans"))
_LOG_COLUMNS = ", ".join(column_names("logs"))
_SPAN_SELECT = ", ".join(name for name in column_names("spans") if name != "received_at")
_LOG_SELECT = ", ".join(name for name in column_names("logs") if name != "received_at")
_TARGETS = {"spans": (_SPAN_COLUMNS, _SPAN_SELECT), "logs": (_LOG_COLUMNS, _LOG_SELECT)}


class SpanHook(Protocol):
    """What the writer calls in each span transaction (``TracesMaintainer``)."""

    def __call__(self, conn: Any, spans: Any, received_at: datetime, *,
                 exact: bool) -> datetime | None:
        """Work on the Arrow span batch ``spans`` (before its spans are inserted); return the
        earliest first arrival of its traces already stored (None: all new); raise
        ``TracesConflict`` for ``exact``."""

    def committed(self) -> None:
        """The transaction of the last call committed."""

    def reopened(self) -> None:
        """The writer reopened the database (after a fatal error): forget what was learnt."""


@dataclass(slots=True)
class _Job:
    kind: JobKind
    payload: Any
    rows: int
    nbytes: int = 0
    future: Future[Any] = field(default_factory=Future)


@dataclass(slots=True)
class WriterStats:
    """Counters of the writer since the store opened."""

    commits: int = 0
    spans_received: int = 0
    spans_inserted: int = 0
    logs_received: int = 0
    logs_inserted: int = 0
    rejected_full: int = 0
    failed_jobs: int = 0
    pending_rows: int = 0
    pending_bytes: int = 0
    split_commits: int = 0
    reopens: int = 0
    refreshes: int = 0
    """Planned reopens (``CheckpointPolicy.reopen_after``) done."""
    refreshes_skipped: int = 0
    """Planned reopens put off because reads were still running after the store's wait."""
    last_refresh_ms: float = 0.0
    """How long the last planned reopen took (reads waited at most this long)."""
    last_commit_ms: float = 0.0
    span_key_checks: int = 0
    """Span transactions that checked keys against stored spans (some trace already stored)."""
    duplicate_retries: int = 0
    """Transactions run again with ``INSERT OR IGNORE`` because they held a stored key."""
    traces_exact_retries: int = 0
    """Span transactions run again because the ``traces`` hook needed its exact upsert."""
    checkpoints: int = 0
    idle_checkpoints: int = 0
    """Checkpoints run while no write was waiting (the rest were forced by WAL size or age)."""
    last_checkpoint_ms: float = 0.0
    wal_bytes: int = 0
    arrow_ms: float = 0.0
    """Total time spent building the Arrow tables of span and log commits (holds the GIL)."""
    insert_ms: float = 0.0
    """Total time in the span/log ``INSERT`` statements (DuckDB, GIL released)."""
    traces_ms: float = 0.0
    """Total time in ``span_hook`` (the ``traces`` table's maintenance) inside span commits."""
    commit_ms: float = 0.0
    """Total time in ``COMMIT`` of span/log transactions (the WAL write and its fsync)."""
    checkpoint_ms: float = 0.0
    """Total time in the writer's checkpoints."""
    max_checkpoint_ms: float = 0.0
    """The longest checkpoint so far (what a request queued behind one waited at most)."""


class Writer:
    """Owns the write connection on one thread; see the module docstring."""

    def __init__(
        self,
        conn: Any,
        *,
        max_pending_rows: int,
        max_batch_rows: int,
        retry_after_s: float,
        min_batch_rows: int = 0,
        linger_s: float = 0.0,
        max_pending_bytes: int = 256 * 1024 * 1024,
        max_batch_bytes: int = 32 * 1024 * 1024,
        reopen: Callable[[], Any] | None = None,
        span_hook: SpanHook | None = None,
        wal_path: str | None = None,
        checkpoint: CheckpointPolicy | None = None,
        refresh: Callable[[], Any] | None = None,
    ) -> None:
        self._pool = ViewPool()
        """Arrow views registered on every connection the writer uses (``_views.py``)."""
        self._refresh = refresh
        self._checkpoints_since_open = 0
        self._wal_path = wal_path
        self._checkpoint = checkpoint or CheckpointPolicy()
        self._last_write = time.monotonic()
        self._last_checkpoint = time.monotonic()
        self._span_hook = span_hook
        self._conn = conn
        self._pool.connect(conn)
        self._last_stamp = datetime.min  # noqa: DTZ901 - naive UTC, as the tables store
        self._max_pending_bytes = max_pending_bytes
        self._max_batch_bytes = max_batch_bytes
        self._reopen = reopen
        self._pending_bytes = 0
        self.unavailable: str | None = None
        """Why the database cannot be used right now (a fatal DuckDB error), else None."""
        self.disk_full: str | None = None
        """The last write's "no space" error while the disk stays full (writes are answered
        503 meanwhile; the database is unchanged), else None: cleared by the next commit."""
        self._min_batch_rows = min_batch_rows
        self._linger_s = linger_s
        self._concurrent = False
        self._max_pending_rows = max_pending_rows
        self._max_batch_rows = max_batch_rows
        self._retry_after_s = retry_after_s
        self._queue: collections.deque[_Job] = collections.deque()
        self._cond = threading.Condition()
        self._closing = False
        self._pending_rows = 0
        self.stats = WriterStats()
        self._thread = threading.Thread(target=self._run, name="tracescore-writer", daemon=True)

    def start(self) -> None:
        """Start the writer thread."""
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        """The writer thread (functions passed to ``submit_fn`` run on it)."""
        return self._thread

    def submit(self, kind: JobKind, payload: Any, rows: int, nbytes: int = 0) -> Future[Any]:
        """Queue a job; its future resolves after the commit that contains it."""
        job = _Job(kind, payload, rows, nbytes)
        with self._cond:
            if self._closing:
                raise StoreClosed("the store is closing; no more writes are accepted")
            if self.unavailable is not None:
                raise self._unavailable_error()
            if kind != "fn":
                self._check_room(rows, nbytes)
            self._queue.append(job)
            self._pending_rows += rows
            self._pending_bytes += nbytes
            self.stats.pending_rows = self._pending_rows
            self.stats.pending_bytes = self._pending_bytes
            self._cond.notify()
        return job.future

    def _check_room(self, rows: int, nbytes: int) -> None:
        """Raise ``BatchTooLarge`` or ``WriteQueueFull`` unless the job fits (lock held)."""
        if rows > self._max_pending_rows or nbytes > self._max_pending_bytes:
            raise BatchTooLarge(
                f"one request holds {rows} rows (~{nbytes // 1024} KiB); the write queue takes "
                f"at most {self._max_pending_rows} rows and {self._max_pending_bytes // 1024} "
                "KiB (max_pending_spans, max_pending_bytes): send smaller batches"
            )
        if not self._pending_rows:
            return
        if (
            self._pending_rows + rows > self._max_pending_rows
            or self._pending_bytes + nbytes > self._max_pending_bytes
        ):
            self.stats.rejected_full += 1
            raise WriteQueueFull(
                f"the write queue holds {self._pending_rows} rows, ~"
                f"{self._pending_bytes // 1024} KiB (limits {self._max_pending_rows} rows, "
                f"{self._max_pending_bytes // 1024} KiB); retry in {self._retry_after_s:g} s",
                retry_after_s=self._retry_after_s,
            )

    def _unavailable_error(self) -> StoreUnavailable:
        reason = self.unavailable or ""
        # a checkpoint that found the disk full invalidates the database until there is space
        advice = "free space on the disk holding the database; " if is_disk_full(reason) else ""
        return StoreUnavailable(
            f"the database is being reopened after a fatal DuckDB error ({reason}); "
            f"nothing acknowledged is lost: {advice}retry in {self._retry_after_s:g} s",
            retry_after_s=self._retry_after_s,
        )

    def report_fatal(self, reason: str) -> None:
        """Mark the database invalidated (a reader saw a fatal error); the writer reopens it."""
        with self._cond:
            if self.unavailable is None:
                self.unavailable = reason
            self._cond.notify()

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop accepting jobs, finish the queued ones, and stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _take(self) -> list[_Job] | Literal["checkpoint"] | None:
        with self._cond:
            while not self._queue and not self._closing and self.unavailable is None:
                wait_s = self._idle_checkpoint_in()
                if wait_s is not None and wait_s <= 0:
                    return "checkpoint"
                self._cond.wait(wait_s)
            if self.unavailable is not None and not self._closing:
                return []
            if not self._queue:
                return None
            first = self._queue.popleft()
            jobs = [first]
            if first.kind == "fn":
                return jobs
            rows, nbytes = first.rows, first.nbytes
            deadline: float | None = None
            while True:
                while self._queue and self._queue[0].kind != "fn":
                    following = self._queue[0]
                    if (
                        rows + following.rows > self._max_batch_rows
                        or nbytes + following.nbytes > self._max_batch_bytes
                    ):
                        break
                    job = self._queue.popleft()
                    rows += job.rows
                    nbytes += job.nbytes
                    jobs.append(job)
                # Linger briefly for more data, but only under concurrent load (the previous
                # commit had company): a lone sequential writer must not wait for nobody.
                if (
                    not self._concurrent
                    or rows >= self._min_batch_rows
                    or nbytes >= self._max_batch_bytes // 2
                    or self._queue
                    or self._closing
                ):
                    break
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self._linger_s
                if now >= deadline:
                    break
                self._cond.wait(deadline - now)
            self._concurrent = len(jobs) > 1
            return jobs

    def _idle_checkpoint_in(self) -> float | None:
        """Seconds until an idle checkpoint is due (<= 0: now), or None when none is needed."""
        if self._wal_path is None:
            return None
        size = wal_bytes(self._wal_path)
        self.stats.wal_bytes = size
        if size == 0:
            return None
        now = time.monotonic()
        due = self._last_write + self._checkpoint.idle_s - now
        if size < self._checkpoint.min_wal_bytes:  # a small WAL waits for the interval
            due = max(due, self._last_checkpoint + self._checkpoint.interval_s - now)
        return due

    def _checkpoint_due(self) -> bool:
        """Between commits under load: the WAL is too large or the last checkpoint too old, or
        it passed ``eager_wal_bytes`` and nothing is queued right now."""
        if self._wal_path is None:
            return False
        size = wal_bytes(self._wal_path)
        self.stats.wal_bytes = size
        policy = self._checkpoint
        if size >= policy.max_wal_bytes:
            return True
        if 0 < policy.eager_wal_bytes <= size:
            with self._cond:
                if not self._queue:
                    return True
        return size > 0 and (
            time.monotonic() - self._last_checkpoint >= self._checkpoint.interval_s)

    def _run_checkpoint(self, *, idle: bool) -> None:
        """CHECKPOINT on the writer's connection (never inside a data transaction)."""
        started = time.perf_counter()
        try:
            self._conn.execute("CHECKPOINT")
        except Exception as exc:
            if self._fatal(exc):
                return
            if is_disk_full(exc):
                self._note_disk_full(exc)
            else:
                log.warning("checkpoint failed (the WAL is kept; retried later): %s",
                            first_line(exc))
        else:
            elapsed_ms = (time.perf_counter() - started) * 1000
            self.stats.checkpoints += 1
            self._checkpoints_since_open += 1
            self.stats.idle_checkpoints += int(idle)
            self.stats.last_checkpoint_ms = elapsed_ms
            self.stats.checkpoint_ms += elapsed_ms
            self.stats.max_checkpoint_ms = max(self.stats.max_checkpoint_ms, elapsed_ms)
        now = time.monotonic()
        self._last_checkpoint = now
        self._last_write = now  # a failed one is not retried in a tight loop
        if self._wal_path is not None:
            self.stats.wal_bytes = wal_bytes(self._wal_path)

    def _run(self) -> None:
        self._pool.serve()
        if self._wal_path is not None and wal_bytes(self._wal_path):
            # A WAL left by a crash was replayed into memory at open: fold it into the file
            # before the first write, so that memory is not held under load that never idles.
            self._run_checkpoint(idle=False)
        while True:
            jobs = self._take()
            if jobs is None:
                return
            if jobs == "checkpoint":
                self._run_checkpoint(idle=True)
                self._maybe_refresh()
                continue
            if not jobs:
                self._recover()
                continue
            try:
                if jobs[0].kind == "fn":
                    self._run_fn(jobs[0])
                else:
                    self._commit_data(jobs)
            except BaseException as exc:  # keep the thread alive whatever happens
                log.exception("writer job failed unexpectedly")
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(exc)
            finally:
                self._release(jobs)
                self._last_write = time.monotonic()
            if self._checkpoint_due() and self.unavailable is None:
                self._run_checkpoint(idle=False)
                self._maybe_refresh()

    def _maybe_refresh(self) -> None:
        """Reopen the database once ``CheckpointPolicy.reopen_after`` checkpoints ran since it
        was opened, when no write is queued (the store waits for the reads in flight, and skips
        this time when they outlast its wait)."""
        after = self._checkpoint.reopen_after
        if self._refresh is None or after <= 0 or self._checkpoints_since_open < after:
            return
        with self._cond:
            if self._queue or self._closing or self.unavailable is not None:
                return
        began = time.perf_counter()
        try:
            conn = self._refresh()
        except Exception as exc:  # the file could not be opened again: the fatal path retries
            reason = f"reopening the database to free memory failed: {first_line(exc)}"
            log.error("%s", reason)
            with self._cond:
                self.unavailable = reason
            return
        if conn is None:
            self.stats.refreshes_skipped += 1
            return
        self._connected(conn)
        checkpoints, self._checkpoints_since_open = self._checkpoints_since_open, 0
        self.stats.refreshes += 1
        elapsed_ms = (time.perf_counter() - began) * 1000
        self.stats.last_refresh_ms = elapsed_ms
        log.info("reopened the database after %d checkpoints to give back DuckDB's row-group "
                 "memory (%.0f ms)", checkpoints, elapsed_ms)

    def _release(self, jobs: list[_Job]) -> None:
        with self._cond:
            self._pending_rows -= sum(job.rows for job in jobs)
            self._pending_bytes -= sum(job.nbytes for job in jobs)
            self.stats.pending_rows = self._pending_rows
            self.stats.pending_bytes = self._pending_bytes

    def _fatal(self, exc: BaseException) -> bool:
        """True (and the database marked unavailable) when ``exc`` invalidated the database."""
        if not is_fatal(exc):
            return False
        reason = first_line(exc)
        with self._cond:
            if self.unavailable is None:
                self.unavailable = reason
        log.error("DuckDB invalidated the database (%s); failing queued writes with 503 and "
                  "reopening %s", reason, "the file" if self._reopen else "nothing")
        return True

    def _retryable(self, exc: BaseException) -> BaseException:
        """DuckDB out of memory for one write, or a full disk, is the machine's state, not a bad
        request: 503, retry later (the database is as it was before the write)."""
        if is_disk_full(exc):
            self._note_disk_full(exc)
            return StoreUnavailable(
                f"the disk holding the database is full ({first_line(exc, 200)}); this write "
                f"was not stored: retry in {self._retry_after_s:g} s, once space is freed there",
                retry_after_s=self._retry_after_s,
            )
        if not is_out_of_memory(exc):
            return exc
        return StoreUnavailable(
            f"DuckDB ran out of memory storing this write ({first_line(exc, 200)}); "
            f"retry in {self._retry_after_s:g} s, or raise duckdb_memory_limit",
            retry_after_s=self._retry_after_s,
        )

    def _note_disk_full(self, exc: BaseException) -> None:
        """Remember a full disk (``/healthz`` degraded); log it once per episode."""
        if self.disk_full is None:
            log.error("the disk holding the database is full (%s): writes are answered 503 "
                      "until space is freed; nothing already stored is touched", first_line(exc))
        self.disk_full = first_line(exc)

    def _committed(self) -> None:
        """A write went through: a full disk, if there was one, has space again."""
        if self.disk_full is not None:
            self.disk_full = None
            log.warning("the disk holding the database has space again; writes resume")

    def _recover(self) -> None:
        """Fail what is queued (retryable), reopen the database, and resume when it works."""
        with self._cond:
            queued = list(self._queue)
            self._queue.clear()
        error = self._unavailable_error()
        for job in queued:
            job.future.set_exception(error)
        self._release(queued)
        if self._reopen is None:
            time.sleep(self._retry_after_s)
            return
        try:
            conn = self._reopen()
        except Exception as exc:
            log.error("reopening the database failed (%s); trying again in %g s", exc,
                      self._retry_after_s)
            with self._cond:
                self._cond.wait(self._retry_after_s)
            return
        self._connected(conn)
        with self._cond:
            self.unavailable = None
        self.stats.reopens += 1
        log.warning("the database was reopened after a fatal error; writes resume")

    def _connected(self, conn: Any) -> None:
        """Use ``conn`` (a fresh connection, after reopening the database) from now on."""
        self._conn = conn
        self._pool.connect(conn)
        if self._span_hook is not None:
            self._span_hook.reopened()

    def _run_fn(self, job: _Job) -> None:
        conn = self._conn
        conn.execute("BEGIN TRANSACTION")
        try:
            result = job.payload(conn)
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback(conn)
            self.stats.failed_jobs += 1
            job.future.set_exception(self._unavailable_error() if self._fatal(exc)
                                     else self._retryable(exc))
            return
        self.stats.commits += 1
        self._committed()
        job.future.set_result(result)

    def _commit_data(self, jobs: list[_Job]) -> None:
        try:
            self._insert(jobs)
        except Exception as exc:
            if self._fatal(exc):
                error = self._unavailable_error()
                for job in jobs:
                    job.future.set_exception(error)
                return
            if len(jobs) == 1:
                self.stats.failed_jobs += 1
                if not is_disk_full(exc):
                    log.warning("a write batch failed: %s", exc)
                jobs[0].future.set_exception(self._retryable(exc))
                return
            # One bad batch must not fail the others that shared its commit.
            for job in jobs:
                self._commit_data([job])
            return
        self._committed()
        for job in jobs:
            job.future.set_result(None)

    def _insert(self, jobs: list[_Job]) -> None:
        started = time.perf_counter()
        parts: list[tuple[str, Any]] = []
        spans = [job.payload for job in jobs if job.kind == "spans" and job.rows]
        logs = [job.payload for job in jobs if job.kind == "logs" and job.rows]
        if spans:
            parts.append(("spans", span_table(spans)))
        if logs:
            parts.append(("logs", log_table(logs)))
        self.stats.arrow_ms += (time.perf_counter() - started) * 1000
        total = sum(int(table.nbytes) for _, table in parts)
        if total <= self._max_batch_bytes:
            self._transaction(parts)
        else:
            # One write larger than the budget: several commits, answered after the last.
            self.stats.split_commits += 1
            for name, table in parts:
                for piece in _slices(table, self._max_batch_bytes):
                    self._transaction([(name, piece)])
        self.stats.last_commit_ms = (time.perf_counter() - started) * 1000

    def _transaction(self, parts: list[tuple[str, Any]]) -> None:
        """Insert Arrow tables (``("spans" | "logs", table)``) in one transaction: plain INSERT
        first, the whole transaction again with ``INSERT OR IGNORE`` if a key was stored."""
        import duckdb

        try:
            self._insert_parts(parts, ignore_conflicts=False, exact=False)
        except TracesConflict:
            self.stats.traces_exact_retries += 1
            try:
                self._insert_parts(parts, ignore_conflicts=False, exact=True)
            except duckdb.ConstraintException:
                self.stats.duplicate_retries += 1
                self._insert_parts(parts, ignore_conflicts=True, exact=True)
        except duckdb.ConstraintException:
            self.stats.duplicate_retries += 1
            self._insert_parts(parts, ignore_conflicts=True, exact=True)

    def _insert_parts(
        self, parts: list[tuple[str, Any]], *, ignore_conflicts: bool, exact: bool
    ) -> None:
        conn = self._conn
        verb = "INSERT OR IGNORE" if ignore_conflicts else "INSERT"
        received_at = self._stamp()
        counts = {"spans": [0, 0], "logs": [0, 0]}
        clock = time.perf_counter
        stats = self.stats
        conn.execute("BEGIN TRANSACTION")
        try:
            for name, table in parts:
                columns, select = _TARGETS[name]
                with arrow_view(conn, table) as view:
                    if name == "spans":
                        sql = self._span_insert(conn, view, table, received_at, exact=exact)
                    else:
                        sql = f"{verb} INTO {name} ({columns}) SELECT {select}, ? FROM {view}"
                    inserted_at = clock()
                    inserted = conn.execute(sql, [received_at]).fetchone()
                    stats.insert_ms += (clock() - inserted_at) * 1000
                counts[name][0] += table.num_rows
                counts[name][1] += int(inserted[0]) if inserted else 0
            began = clock()
            conn.execute("COMMIT")
            stats.commit_ms += (clock() - began) * 1000
        except BaseException:
            _rollback(conn)
            raise
        if self._span_hook is not None and counts["spans"][0]:
            self._span_hook.committed()
        self.stats.commits += 1
        self.stats.spans_received += counts["spans"][0]
        self.stats.spans_inserted += counts["spans"][1]
        self.stats.logs_received += counts["logs"][0]
        self.stats.logs_inserted += counts["logs"][1]


    def _stamp(self) -> datetime:
        """This commit's ``received_at``: now (naive UTC), but always after the previous
        commit's, so a clock set back never breaks the bound the duplicate check relies on."""
        now = datetime.now(UTC).replace(tzinfo=None)
        self._last_stamp = max(now, self._last_stamp + timedelta(microseconds=1))
        return self._last_stamp

    def _span_insert(self, conn: Any, view: str, table: Any, received_at: datetime, *,
                     exact: bool) -> str:
        """Run the traces hook on the batch, then return the INSERT of its new spans."""
        since: datetime | None = datetime.min  # noqa: DTZ901 - no hook: check every stored span
        if self._span_hook is not None:
            began = time.perf_counter()
            since = self._span_hook(conn, table, received_at, exact=exact)
            self.stats.traces_ms += (time.perf_counter() - began) * 1000
        if since is not None:
            self.stats.span_key_checks += 1
        return insert_new_spans_sql(view, _SPAN_COLUMNS, _SPAN_SELECT, stored_since=since,
                                    repeated=has_repeated_keys(table))


def _slices(table: Any, budget: int) -> list[Any]:
    """``table`` cut into row ranges of about ``budget`` bytes each (at least one row)."""
    nbytes = int(table.nbytes)
    if nbytes <= budget or table.num_rows <= 1:
        return [table]
    step = max(1, table.num_rows * budget // nbytes)
    return [table.slice(offset, step) for offset in range(0, table.num_rows, step)]


def _rollback(conn: Any) -> None:
    try:
        conn.execute("ROLLBACK")
    except Exception:  # no transaction open (it failed before BEGIN took effect)
        pass


__all__ = ["Writer", "WriterStats"]
