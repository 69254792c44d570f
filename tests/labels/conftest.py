"""Labels fixtures: a DuckDB store on a temp file holding copies of a captured agent trace, and
score rows written as the live scorer writes them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from live.conftest import clone_trace, fixture_traces


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    """A store on a temp DuckDB file."""
    from tracescore.store import Store

    with Store(tmp_path / "labels.duckdb") as opened:
        yield opened


@pytest.fixture
def traces(store: Any) -> Callable[[int], list[str]]:
    """``traces(n)``: store n copies of a captured agent trace; their trace ids, in order."""

    def add(count: int) -> list[str]:
        rows: list[dict[str, Any]] = []
        ids = []
        for _ in range(count):
            clone = clone_trace(fixture_traces()[0])
            ids.append(clone[0]["trace_id"])
            rows += clone
        store.write_spans_sync(rows)
        return ids

    return add


def write_scores(store: Any, trace_ids: list[str], values: list[float], *,
                 scorer_id: str = "judge", version: str = "v1", **extra: Any) -> None:
    """One successful score per trace (``values`` in order) as live scoring writes it."""
    store.write_scores_sync([
        {"trace_id": t, "span_id": "a" * 16, "scorer_id": scorer_id, "scorer_version": version,
         "source": "live", "status": "success", "score": v, **extra}
        for t, v in zip(trace_ids, values, strict=True)])
