"""Errors of the store room.

::

    TracescoreError
    └── StoreError             something the store refused or could not do
        ├── InvalidSql         user SQL the SQL surface refuses (a write, a file read, …) → 400
        ├── QueryTimeout       user SQL stopped after the time limit → 400
        ├── RetryLater         refused for now; retry after ``retry_after_s`` → 503
        │   ├── WriteQueueFull     the writer is behind
        │   ├── StoreUnavailable   DuckDB invalidated the database (the store is reopening
        │   │                      it) or ran out of memory for one write
        │   └── SqlBusy            ``sql_max_concurrent`` user statements kept running while
        │                          one more waited (twice its time limit)
        ├── BatchTooLarge      one write holds more rows/bytes than the queue takes → 413
        ├── StoreClosed        the store is not open (or is shutting down) → 503
        ├── InvalidRow         a row given to write_scores / write_spans has an unknown column
        ├── DuplicateRows      rows written as new (``score_rows_writer(fresh=True)``) met a
        │                      stored row with the same key; nothing was written
        ├── DatabaseDamaged    the database file is damaged (not a DuckDB file, cut short, a
        │                      block failing its checksum): it cannot be opened
        └── DamagedWal         the write-ahead log cannot be replayed whole and the store will
                               not drop what it holds without ``discard_damaged_wal``
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class StoreError(TracescoreError):
    """Base class of the store's errors."""


class InvalidSql(StoreError):
    """A statement the SQL surface refuses; the message says why and what is allowed."""


class QueryTimeout(StoreError):
    """A query ran past its time limit and was interrupted."""


class RetryLater(StoreError):
    """Refused for now, nothing done: the caller should retry after ``retry_after_s`` seconds
    (HTTP 503 with ``Retry-After``)."""

    def __init__(self, message: str, *, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WriteQueueFull(RetryLater):
    """The write queue is full; the caller should retry after ``retry_after_s`` seconds."""


class StoreUnavailable(RetryLater):
    """DuckDB reported a fatal error (the database is invalidated; the store is reopening the
    file, replaying the WAL, so nothing acknowledged is lost) or ran out of memory for this
    write. Retry after ``retry_after_s``."""


class SqlBusy(RetryLater):
    """Every one of the ``sql_max_concurrent`` user-statement slots stayed taken while this
    statement waited for one (up to twice its time limit); it was not run."""


class BatchTooLarge(StoreError):
    """One write holds more rows or bytes than the whole write queue may; send smaller ones."""


class StoreClosed(StoreError):
    """The store is closed or closing; nothing more is accepted."""


class InvalidRow(StoreError):
    """A row handed to the store names a column the table does not have."""


class DuplicateRows(StoreError):
    """Rows handed to ``score_rows_writer(..., fresh=True)`` (or ``new_results=True``) as new met
    a stored row with the same key; the transaction was rolled back. Write them again without
    ``fresh`` / ``new_results``."""


class DatabaseDamaged(StoreError):
    """The database file is damaged (not a DuckDB file, cut short, a block failing its
    checksum); the message names the file, what DuckDB found, and what to do."""


class DamagedWal(StoreError):
    """The write-ahead log cannot be replayed whole; the message says what can be recovered,
    where a copy was kept, and that ``--discard-damaged-wal`` opens without the rest."""


__all__ = [
    "BatchTooLarge",
    "DamagedWal",
    "DatabaseDamaged",
    "DuplicateRows",
    "InvalidRow",
    "InvalidSql",
    "QueryTimeout",
    "StoreClosed",
    "StoreError",
    "StoreUnavailable",
    "WriteQueueFull",
]
