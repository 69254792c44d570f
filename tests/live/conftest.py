"""Live-scoring fixtures: a DuckDB store on a temp file and fresh copies of captured traces."""

from __future__ import annotations

import asyncio
import base64
import functools
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tracescore.live import LiveScheduler, LiveSettings, Registry

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AGENT_FIXTURE = "py-openai-v2-genai-span"


@functools.cache
def fixture_traces(folder: str = AGENT_FIXTURE) -> tuple[tuple[dict[str, Any], ...], ...]:
    """The captured traces of a fixture folder, each a tuple of span rows, in capture order."""
    from tracescore.ingest import span_dicts_from_otlp

    body = base64.b64decode((FIXTURES / folder / "0001-traces.b64").read_text())
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for row in span_dicts_from_otlp(body):
        by_trace.setdefault(row["trace_id"], []).append(row)
    return tuple(tuple(rows) for rows in by_trace.values())


def clone_trace(rows: tuple[dict[str, Any], ...], **overrides: Any) -> list[dict[str, Any]]:
    """The same spans under a new trace id and new span ids (``overrides`` set row keys)."""
    trace_id = secrets.token_hex(16)
    ids = {row["span_id"]: secrets.token_hex(8) for row in rows}
    out = []
    for row in rows:
        copy = {**row, "trace_id": trace_id, "span_id": ids[row["span_id"]],
                "parent_span_id": ids.get(row["parent_span_id"]) if row["parent_span_id"]
                else None}
        copy.update(overrides)
        out.append(copy)
    return out


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    """A store on a temp DuckDB file."""
    from tracescore.store import Store

    with Store(tmp_path / "live.duckdb") as opened:
        yield opened


AddTraces = Callable[..., list[str]]


@pytest.fixture
def add_traces(store: Any) -> AddTraces:
    """``add_traces(n, folder=..., index=0, **row_overrides)`` stores n new copies of a
    captured trace and returns their trace ids."""

    def add(count: int = 1, *, folder: str = AGENT_FIXTURE, index: int = 0,
            **overrides: Any) -> list[str]:
        template = fixture_traces(folder)[index]
        rows: list[dict[str, Any]] = []
        ids = []
        for _ in range(count):
            clone = clone_trace(template, **overrides)
            ids.append(clone[0]["trace_id"])
            rows += clone
        store.write_spans_sync(rows)
        return ids

    return add


def fast_settings(**changes: Any) -> LiveSettings:
    """Settings for tests: ready at once, retry at once, no waiting."""
    base = {"interval_seconds": 0.05, "settle_seconds": 0, "max_wait_seconds": 60,
            "retry_base_seconds": 0, "max_attempts": 3, "concurrency": 4}
    return LiveSettings.model_validate({**base, **changes})


def open_decisions(store: Any) -> int:
    """Decisions still pending, retrying or over budget."""
    return int(store.read("SELECT count(*) AS n FROM scoring_decisions "
                          "WHERE decision IN ('pending', 'retrying', 'over_budget')")[0]["n"])


async def run_until_quiet(live: LiveScheduler, *, rounds: int = 40, pause_s: float = 0.0) -> int:
    """Tick and wait for runs until a tick finds nothing waiting (sleeping ``pause_s`` between
    ticks, for backoffs); returns the ticks used."""
    for used in range(1, rounds + 1):
        await live.tick()
        await live.drain()
        if live.stats.traces_waiting == 0 and open_decisions(live.store) == 0:
            return used
        await asyncio.sleep(pause_s)
    raise AssertionError(f"still open after {rounds} ticks: {live.stats}")


def scheduler(store: Any, *scorers: Any, settings: LiveSettings | None = None,
              **options: Any) -> LiveScheduler:
    """A scheduler over ``scorers`` (each a Scorer or (Scorer, register options))."""
    registry = Registry()
    for item in scorers:
        scorer, opts = item if isinstance(item, tuple) else (item, {})
        registry.register(scorer, **{**options, **opts})
    return LiveScheduler(store, registry, settings or fast_settings())
