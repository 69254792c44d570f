"""Benchmark: items/s of run_evals with a trivial agent, one gate and three function scorers,
at concurrency 1 and 8 (async agent), and with a sync agent in worker threads.

Run: .venv/bin/python tests/bench/bench_evals.py [items]
The figure is run_evals' own overhead per item (target call, four scorer runs, aggregation).
Last, ``run_evals_sync`` against awaiting ``run_evals`` in a running loop (same data, async
agent, concurrency 8), interleaved over 5 rounds: medians and their ratio (issue 17 goal 5).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

from tracescore.evals import run_evals, run_evals_sync
from tracescore.model import get_assistant_message
from tracescore.scoring import create_scorer


def _scorers() -> tuple[list[Any], list[Any]]:
    gate = create_scorer("non-empty", "x").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) else 0.0)
    length = create_scorer("length", "x").generate_score(
        lambda run, results: min(1.0, len(get_assistant_message(run.output)) / 40))
    exact = create_scorer("exact", "x").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) == run.ground_truth else 0.0)
    words = (create_scorer("words", "x")
             .preprocess(lambda run, results: get_assistant_message(run.output).split())
             .generate_score(lambda run, results:
                             min(1.0, len(results.preprocess_step_result) / 5)))
    return [gate], [{"scorer": length, "threshold": 0.2}, exact, words]


async def _async_agent(text: str) -> str:
    return f"the answer to {text}"


def _sync_agent(text: str) -> str:
    return f"the answer to {text}"


async def _measure(label: str, agent: Any, n: int, concurrency: int) -> None:
    gates, scorers = _scorers()
    data = [{"input": f"question {i}", "ground_truth": f"the answer to question {i}"}
            for i in range(n)]
    started = time.perf_counter()
    result = await run_evals(agent, data, scorers=scorers, gates=gates, concurrency=concurrency,
                             progress=False)
    elapsed = time.perf_counter() - started
    assert result.summary.errors == 0
    print(f"{label:<34} {n:>6} items  {elapsed:6.2f} s  {n / elapsed:8.0f} items/s  "
          f"{4 * n / elapsed:8.0f} scorer runs/s")


async def main(n: int) -> None:
    await _measure("async agent, concurrency 1", _async_agent, n, 1)
    await _measure("async agent, concurrency 8", _async_agent, n, 8)
    await _measure("sync agent, concurrency 1 (inline)", _sync_agent, n, 1)
    await _measure("sync agent, concurrency 8 (threads)", _sync_agent, n, 8)


def compare_sync(n: int, rounds: int = 5) -> None:
    """run_evals_sync (its own loop) vs awaiting run_evals (in a loop already running)."""
    gates, scorers = _scorers()
    data = [{"input": f"question {i}", "ground_truth": f"the answer to question {i}"}
            for i in range(n)]
    options: dict[str, Any] = {"scorers": scorers, "gates": gates, "concurrency": 8,
                               "progress": False}
    awaited: list[float] = []
    synced: list[float] = []

    async def timed_await() -> None:
        started = time.perf_counter()
        await run_evals(_async_agent, data, **options)
        awaited.append(time.perf_counter() - started)

    for _ in range(rounds):
        asyncio.run(timed_await())
        started = time.perf_counter()
        run_evals_sync(_async_agent, data, **options)
        synced.append(time.perf_counter() - started)
    a, b = statistics.median(awaited), statistics.median(synced)
    print(f"await run_evals: {n / a:8.0f} items/s; run_evals_sync: {n / b:8.0f} items/s; "
          f"run_evals_sync takes {b / a:.2f}× the time (medians of {rounds} interleaved rounds)")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    asyncio.run(main(count))
    compare_sync(count)
