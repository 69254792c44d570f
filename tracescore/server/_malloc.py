"""The C library's allocator in a long-running server: fewer arenas, freed pages given back.

A 30-minute soak of ingest, SQL, dashboard reads and live judge scoring (``bench_soak.py``,
issue 27) showed the server's RSS still rising once DuckDB's cache had reached its memory
limit and Python's own heap had stopped growing: the growth was memory glibc's malloc had been
given back (``free`` in ``mallinfo2``: 69 MB, then 132 MB three minutes later) but kept in its
arenas. Every thread that allocates (DuckDB's workers, the writer, the request and
``to_thread`` pools) can get an arena of its own, up to eight per core, and each keeps the
pages its freed blocks sit on. Two settings, applied by ``serve`` on glibc (elsewhere nothing
happens):

- ``limit_malloc_arenas()``, at start-up before the threads exist: at most ``MALLOC_ARENAS``
  arenas (``mallopt(M_ARENA_MAX)``, what ``MALLOC_ARENA_MAX`` does), so freed blocks are
  reused across threads instead of stranded in one thread's arena;
- ``malloc_trimmed`` (a lifespan hook): every ``TRIM_EVERY_S`` seconds ``malloc_trim(0)`` in a
  worker thread gives the free pages of every arena back to the system.

``MALLOC_ARENA_MAX`` set in the environment is left as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

logger = logging.getLogger(__name__)

MALLOC_ARENAS = 4
"""Arenas glibc's malloc may use (its default: eight per core)."""
TRIM_EVERY_S = 30.0
"""Seconds between two ``malloc_trim(0)`` calls."""
_M_ARENA_MAX = -8


def _libc() -> Any | None:
    """glibc, when this process runs on it (None elsewhere: musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not (hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim")):
        return None
    return libc


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas (call before threads start); False when not applied."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def trim_malloc() -> bool:
    """Give the free pages of every malloc arena back to the system (glibc only)."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


@contextlib.asynccontextmanager
async def malloc_trimmed(app: Any, *, every_s: float = TRIM_EVERY_S) -> AsyncIterator[None]:
    """The lifespan hook of ``serve``: ``trim_malloc()`` every ``every_s`` seconds."""
    if _libc() is None:
        yield
        return

    async def trim_forever() -> None:
        while True:
            await asyncio.sleep(every_s)
            await asyncio.to_thread(trim_malloc)

    task = asyncio.get_running_loop().create_task(trim_forever(), name="tracescore-malloc-trim")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = ["MALLOC_ARENAS", "TRIM_EVERY_S", "limit_malloc_arenas", "malloc_trimmed",
           "trim_malloc"]
