"""The allocator settings ``serve`` applies (``tracescore.server._malloc``): on glibc,
``malloc_trim`` gives the free pages between live blocks back to the system."""

from __future__ import annotations

import asyncio

import psutil
import pytest

from tracescore.server import malloc_trimmed, trim_malloc
from tracescore.server._malloc import _libc

pytestmark = pytest.mark.skipif(_libc() is None, reason="glibc's malloc only (Linux)")


def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def test_trimming_gives_freed_pages_back() -> None:
    # 100 KB blocks (below glibc's mmap threshold, so they come from an arena) with a small
    # block kept between each two: once the big ones are freed, their pages sit in holes the
    # heap's top cannot give back, until malloc_trim does.
    trim_malloc()
    kept, big = [], []
    for _ in range(1500):
        big.append(bytearray(100_000))
        kept.append(bytearray(1_000))
    for block in big:
        block[::4096] = b"x" * len(block[::4096])  # touch every page
    before = _rss_mb()
    del big
    freed = _rss_mb()
    assert trim_malloc()
    after = _rss_mb()
    assert before - after > 100, (before, freed, after)
    del kept


async def test_the_hook_trims_until_the_app_stops() -> None:
    async with malloc_trimmed(None, every_s=0.01):
        await asyncio.sleep(0.05)
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "tracescore-malloc-trim"]
