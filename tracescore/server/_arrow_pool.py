"""``use_system_arrow_pool()``: the server allocates Arrow memory with the C library's malloc.

pyarrow's default pool on Linux (jemalloc) keeps freed memory for reuse. Every span batch,
score write and trace read builds Arrow tables, and under steady ingest and scoring that
retained memory kept growing: with 10 M spans stored, 4 minutes of the lag run took the
server's RSS to 650 MB with jemalloc and 553 MB with the system pool (bench_scale's lag run,
2026-12-01), with the same scoring lag.
"""

from __future__ import annotations

import os


def use_system_arrow_pool() -> None:
    """Make the system allocator pyarrow's default pool, in this process and in the processes
    it starts (decode workers read ``ARROW_DEFAULT_MEMORY_POOL``). A pool named in that
    variable already is kept."""
    chosen = os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if chosen == "system":
        import pyarrow as pa

        pa.set_memory_pool(pa.system_memory_pool())


__all__ = ["use_system_arrow_pool"]
