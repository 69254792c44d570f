"""``use_system_arrow_pool()``: the server allocates Arrow memory with the C library's malloc.

pyarrow's default pool on Linux (jemalloc) keeps freed memory for reuse. Every span batch,
score write and trace read builds Arrow tables, and under steady ingest and scoring that
retained memory kept growing: in bench_scale's lag run with 10 M spans stored (2026-12-01),
the server's RSS peaked at 654 MB over 5 minutes with jemalloc, and at 553 MB over 4 minutes
and 561-573 MB over 5 with the system pool, with the same scoring lag.
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
