"""``tune_gc()``: the garbage collector's settings for a long-running server, applied once the
server has loaded everything (``serve`` adds ``gc_tuned`` as the last lifespan hook, so it runs
after the store, gRPC and the live scheduler started; an app built by ``create_app`` alone, as in
tests, keeps Python's defaults).

Two changes, neither of which alters what is collected, only when and how much is looked at:

- ``gc.freeze()`` moves every object alive at start-up (modules, the config, the scorers,
  litellm's tables when a judge is configured) to the permanent generation, so a full
  collection no longer walks them: its cost follows what the server allocated since, not what
  it imported.
- The youngest generation's threshold goes from 700 to ``GEN0_THRESHOLD`` allocations. Ingest
  and live scoring allocate thousands of short-lived containers per request or trace, nearly
  all freed by reference counting; at 700 the collector ran several times per trace and
  promoted what was briefly alive (a trace being scored) into older generations, which then
  paid for full collections. Cyclic garbage waits for at most that many allocations more.
"""

from __future__ import annotations

import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

logger = logging.getLogger(__name__)

GEN0_THRESHOLD = 10_000
"""Allocations (less deallocations) of container objects between young-generation passes."""


def tune_gc(*, gen0_threshold: int = GEN0_THRESHOLD) -> None:
    """Collect once, freeze what is alive (it is never collected again) and raise the young
    generation's threshold; the older generations keep theirs. Call once, after start-up."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(gen0_threshold, older, oldest)
    logger.debug("gc: %d start-up objects frozen; thresholds %s", gc.get_freeze_count(),
                 gc.get_threshold())


@contextlib.asynccontextmanager
async def gc_tuned(app: Any) -> AsyncIterator[None]:
    """The lifespan hook of ``serve``: ``tune_gc()`` once everything before it has started."""
    tune_gc()
    yield


__all__ = ["GEN0_THRESHOLD", "gc_tuned", "tune_gc"]
