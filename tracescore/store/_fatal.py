"""Recognise DuckDB's failures that are about the database's state, not the statement.

- A *full disk* (the OS's "No space left on device" or "Disk quota exceeded" in DuckDB's IO
  error) fails one write and leaves the database as it was: the write is answered 503, to be
  retried once space is freed (``is_disk_full``).
- A *fatal* error (``duckdb.FatalException``; later calls say "database has been
  invalidated") leaves the database unusable until it is reopened: the store reopens it.
- An *out-of-memory* error fails one statement (the database is fine): a write that gets it is
  answered 503, to be retried, like a full queue.
- A *corruption* error (a block failing its checksum, a file cut short) is about the file
  itself: reads that touch the damaged block keep failing; the store reports it (``/healthz``
  degraded) and it is logged once, not retried forever.
- A fatal error *for want of memory* (a checkpoint: "failed to pin block ...") comes back at
  once if the file is reopened with the same ``memory_limit`` (the WAL replays into memory and
  the checkpoint runs again), so the reopen doubles the limit (``doubled_memory``).
"""

from __future__ import annotations

import re

_MEMORY_ERROR = re.compile(r"memory|pin block|allocate", re.IGNORECASE)
_CORRUPTION = re.compile(
    r"corrupt database file|not a valid duckdb database file|could not read enough bytes"
    r"|does not match stored checksum|checksum mismatch|failed to read database header",
    re.IGNORECASE)
_DISK_FULL = re.compile(r"no space left on device|disk quota exceeded", re.IGNORECASE)
_UNITS = {
    "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}


def is_fatal(exc: BaseException) -> bool:
    """True for a DuckDB error that invalidated the database (it must be reopened)."""
    import duckdb

    return isinstance(exc, duckdb.FatalException) or "database has been invalidated" in str(exc)


def is_out_of_memory(exc: BaseException) -> bool:
    """True for DuckDB's out-of-memory error (the statement failed; the database is fine)."""
    import duckdb

    return isinstance(exc, duckdb.OutOfMemoryException)


def is_disk_full(exc: BaseException | str) -> bool:
    """True when a write (or a checkpoint) failed because the disk holding the database or its
    WAL is full."""
    return _DISK_FULL.search(str(exc)) is not None


def is_corruption(exc: BaseException | str) -> bool:
    """True for DuckDB's errors about a damaged file (a block failing its checksum, a file cut
    short, not a DuckDB file): nothing a retry or a reopen mends."""
    return _CORRUPTION.search(str(exc)) is not None


def for_want_of_memory(reason: str) -> bool:
    """True when a (fatal) error's text says DuckDB lacked memory."""
    return _MEMORY_ERROR.search(reason) is not None


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The first line of a DuckDB error (its message; the rest is advice), at most ``limit``."""
    return str(exc).splitlines()[0][:limit] if str(exc) else type(exc).__name__


def doubled_memory(limit: str) -> str:
    """Twice a DuckDB memory limit such as ``"256MB"`` (as text in MB; unparsable: unchanged)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)\s*", limit, re.IGNORECASE)
    if match is None:
        return limit
    nbytes = float(match.group(1)) * _UNITS[match.group(2).upper()]
    return f"{int(nbytes * 2 / 10**6)}MB"


__all__ = [
    "doubled_memory",
    "first_line",
    "for_want_of_memory",
    "is_corruption",
    "is_disk_full",
    "is_fatal",
    "is_out_of_memory",
]
