"""The single writer thread: group commit, acknowledge after commit, backpressure.

Callers submit jobs (a span batch, a log batch, or a function of the connection) and get a
``concurrent.futures.Future``. The thread takes every data job waiting in the queue (up to
``max_batch_rows``), inserts them through Arrow in one transaction, commits, then resolves
their futures: a request is answered only after its rows are durable, and many requests share
one commit. Under concurrent load (the previous commit held several jobs) a commit of fewer
than ``min_batch_rows`` rows waits up to ``linger_s`` for more: each DuckDB commit has a fixed
cost of several milliseconds, so many small commits waste the CPU that decoding needs. A
function job runs alone in its own transaction. When more than
``max_pending_rows`` rows wait, ``submit`` raises ``WriteQueueFull`` at once.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ._arrow import log_table, span_table
from ._errors import StoreClosed, WriteQueueFull
from ._schema import column_names

log = logging.getLogger(__name__)

JobKind = Literal["spans", "logs", "fn"]

_SPAN_COLUMNS = ", ".join(column_names("spans"))
_LOG_COLUMNS = ", ".join(column_names("logs"))
_SPAN_SELECT = ", ".join(name for name in column_names("spans") if name != "received_at")
_LOG_SELECT = ", ".join(name for name in column_names("logs") if name != "received_at")


@dataclass(slots=True)
class _Job:
    kind: JobKind
    payload: Any
    rows: int
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
    last_commit_ms: float = 0.0


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
    ) -> None:
        self._conn = conn
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

    def submit(self, kind: JobKind, payload: Any, rows: int) -> Future[Any]:
        """Queue a job; its future resolves after the commit that contains it."""
        job = _Job(kind, payload, rows)
        with self._cond:
            if self._closing:
                raise StoreClosed("the store is closing; no more writes are accepted")
            if (
                kind != "fn"
                and self._pending_rows
                and self._pending_rows + rows > self._max_pending_rows
            ):
                self.stats.rejected_full += 1
                raise WriteQueueFull(
                    f"the write queue holds {self._pending_rows} rows (limit "
                    f"{self._max_pending_rows}); retry in {self._retry_after_s:g} s",
                    retry_after_s=self._retry_after_s,
                )
            self._queue.append(job)
            self._pending_rows += rows
            self.stats.pending_rows = self._pending_rows
            self._cond.notify()
        return job.future

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop accepting jobs, finish the queued ones, and stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _take(self) -> list[_Job] | None:
        with self._cond:
            while not self._queue and not self._closing:
                self._cond.wait()
            if not self._queue:
                return None
            first = self._queue.popleft()
            jobs = [first]
            if first.kind == "fn":
                return jobs
            rows = first.rows
            deadline: float | None = None
            while True:
                while self._queue and self._queue[0].kind != "fn":
                    if rows + self._queue[0].rows > self._max_batch_rows:
                        break
                    job = self._queue.popleft()
                    rows += job.rows
                    jobs.append(job)
                # Linger briefly for more data, but only under concurrent load (the previous
                # commit had company): a lone sequential writer must not wait for nobody.
                if (
                    not self._concurrent
                    or rows >= self._min_batch_rows
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

    def _run(self) -> None:
        while True:
            jobs = self._take()
            if jobs is None:
                return
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
                with self._cond:
                    self._pending_rows -= sum(job.rows for job in jobs)
                    self.stats.pending_rows = self._pending_rows

    def _run_fn(self, job: _Job) -> None:
        conn = self._conn
        conn.execute("BEGIN TRANSACTION")
        try:
            result = job.payload(conn)
            conn.execute("COMMIT")
        except BaseException as exc:
            _rollback(conn)
            self.stats.failed_jobs += 1
            job.future.set_exception(exc)
            return
        self.stats.commits += 1
        job.future.set_result(result)

    def _commit_data(self, jobs: list[_Job]) -> None:
        try:
            self._insert(jobs)
        except Exception as exc:
            if len(jobs) == 1:
                self.stats.failed_jobs += 1
                log.warning("a write batch failed: %s", exc)
                jobs[0].future.set_exception(exc)
                return
            # One bad batch must not fail the others that shared its commit.
            for job in jobs:
                self._commit_data([job])
            return
        for job in jobs:
            job.future.set_result(None)

    def _insert(self, jobs: list[_Job]) -> None:
        conn = self._conn
        started = time.perf_counter()
        spans = [job.payload for job in jobs if job.kind == "spans" and job.rows]
        logs = [job.payload for job in jobs if job.kind == "logs" and job.rows]
        span_rows = log_rows = spans_inserted = logs_inserted = 0
        received_at = datetime.now(UTC).replace(tzinfo=None)
        conn.execute("BEGIN TRANSACTION")
        try:
            if spans:
                table = span_table(spans)
                span_rows = table.num_rows
                conn.register("__tracescore_spans", table)
                try:
                    inserted = conn.execute(
                        f"INSERT OR IGNORE INTO spans ({_SPAN_COLUMNS}) "
                        f"SELECT {_SPAN_SELECT}, ? FROM __tracescore_spans",
                        [received_at],
                    ).fetchone()
                finally:
                    unregister_quietly(conn, "__tracescore_spans")
                spans_inserted = int(inserted[0]) if inserted else 0
            if logs:
                table = log_table(logs)
                log_rows = table.num_rows
                conn.register("__tracescore_logs", table)
                try:
                    inserted = conn.execute(
                        f"INSERT OR IGNORE INTO logs ({_LOG_COLUMNS}) "
                        f"SELECT {_LOG_SELECT}, ? FROM __tracescore_logs",
                        [received_at],
                    ).fetchone()
                finally:
                    unregister_quietly(conn, "__tracescore_logs")
                logs_inserted = int(inserted[0]) if inserted else 0
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        self.stats.commits += 1
        self.stats.spans_received += span_rows
        self.stats.logs_received += log_rows
        self.stats.spans_inserted += spans_inserted
        self.stats.logs_inserted += logs_inserted
        self.stats.last_commit_ms = (time.perf_counter() - started) * 1000


def unregister_quietly(conn: Any, name: str) -> None:
    """Drop a registered Arrow view; in an aborted transaction DuckDB refuses, which is fine
    (the next ``register`` of the name replaces it) and must not hide the original error."""
    try:
        conn.unregister(name)
    except Exception:
        pass


def _rollback(conn: Any) -> None:
    try:
        conn.execute("ROLLBACK")
    except Exception:  # no transaction open (it failed before BEGIN took effect)
        pass


__all__ = ["Writer", "WriterStats", "unregister_quietly"]
