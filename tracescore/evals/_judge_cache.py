"""Which judge-call cache a ``run_evals`` call uses (its ``judge_cache`` argument).

- ``None`` (the default): with ``store=`` a database (a path or an open ``Store``), the cache in
  that database's ``judge_cache`` table, shared with live scoring and backfill on it; with a
  server URL or no store, none.
- ``False``: none.
- a path (``"judge-cache.duckdb"``): the ``judge_cache`` table of that DuckDB file, opened for
  the run (a database of its own, or one no server holds).
- a ``JudgeCache`` object (``tracescore.scoring.MemoryJudgeCache()`` for one process).

Which judges are cached is ``judge_cache_mode``: ``"auto"`` (judges whose ``model_settings``
say ``temperature = 0``) or ``"on"`` (every judge).
"""

from __future__ import annotations

import os
from typing import Any

from ._errors import EvalValidationError
from ._store import ScoreSink


class EvalJudgeCache:
    """The run's cache and what to flush and close when it ends."""

    def __init__(self, cache: Any, owned_store: Any = None) -> None:
        self.cache = cache
        self._owned_store = owned_store

    @classmethod
    def open(cls, option: Any, sink: ScoreSink | None) -> EvalJudgeCache:
        """Resolve ``option`` (see the module docstring); ``sink`` must be open."""
        if option is False:
            return cls(None)
        if option is None or option is True:
            cache = sink.judge_cache() if sink is not None else None
            if cache is None and option is True:
                raise EvalValidationError(
                    "judge_cache=True needs store= to be a database (a path or a Store); pass "
                    "judge_cache='cache.duckdb' or a tracescore.scoring.MemoryJudgeCache() "
                    "instead")
            return cls(cache)
        if isinstance(option, str | os.PathLike):
            if str(option).startswith(("http://", "https://")):
                raise EvalValidationError(
                    "judge_cache must be a database path or a JudgeCache, not a URL; a "
                    "server's cache is used by the server's own scoring")
            from tracescore.store import Store, StoreJudgeCache

            store = Store(os.fspath(option)).open()
            return cls(StoreJudgeCache(store), owned_store=store)
        if callable(getattr(option, "get", None)) and callable(getattr(option, "put", None)):
            return cls(option)
        raise EvalValidationError(
            f"judge_cache must be None, False, a database path or a JudgeCache; got "
            f"{type(option).__name__}")

    async def aclose(self) -> None:
        """Write what the cache still holds, then close a database opened for it."""
        try:
            flush = getattr(self.cache, "flush", None)
            if flush is not None:
                await flush()
        finally:
            if self._owned_store is not None:
                self._owned_store.close()


__all__ = ["EvalJudgeCache"]
