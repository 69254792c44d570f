"""Benchmark: does judge concurrency deliver? (issue 17, goal 4)

A judge scorer whose judge answers every request in 200 ms (the scripted OpenAI-compatible
server, run in its own process so its threads do not compete with the scorer for the GIL) scores
``20 × concurrency`` new agent traces through ``LiveScheduler`` in process on a DuckDB temp file
(tick → expand → transform → ``Scorer.run`` → litellm → write-back, judge executions stored as
they arrive). Ideal throughput is ``concurrency / 0.2 s``; the figure is the share of it reached,
from the first tick to the last write. litellm's import is done before the clock starts.

Printed per concurrency (8, 32, 64): traces/s, the share of ideal, the cold start (first tick to
the first judge request's answer, less the 200 ms the judge takes), the share without the cold
start, and the CPU the process spent per judged trace. First, the stand-in is checked with a
bare aiohttp client (it must answer ``concurrency`` requests at once in ~200 ms). Nothing is
asserted.

Run: .venv/bin/python tests/bench/bench_judge.py [--concurrency 8 32 64] [--per-slot 20]
``judge_share(db, traces, concurrency)`` is the figure ``bench_scale.py`` reports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "bench")]

import bench_live  # noqa: E402

from tracescore.store import Store  # noqa: E402

JUDGE_DELAY_S = 0.2
os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")  # litellm wants a key; the judge is local


def _serve(delay_s: float, urls: Any, stop: Any) -> None:
    """Child process: a scripted judge answering ``{"score": 1}`` after ``delay_s``."""
    from tracescore.testing import Reply, ScriptedLLMServer

    with ScriptedLLMServer() as llm:
        llm.set_default(lambda body: Reply(content={"score": 1}, delay_s=delay_s))
        urls.put(llm.url)
        stop.wait()


@contextlib.contextmanager
def scripted_judge(delay_s: float = JUDGE_DELAY_S) -> Iterator[str]:
    """A scripted judge in its own process; yields its ``api_base``."""
    context = mp.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve, args=(delay_s, urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(10)
        if process.is_alive():
            process.kill()


@dataclass(frozen=True)
class JudgeRun:
    """One measured run."""

    traces: int
    concurrency: int
    elapsed_s: float
    cold_start_s: float
    cpu_s: float

    @property
    def share(self) -> float:
        """Traces/s as a share of ``concurrency / 200 ms``."""
        return self.traces / self.elapsed_s / (self.concurrency / JUDGE_DELAY_S)

    @property
    def warm_share(self) -> float:
        """The share with the cold start left out."""
        return self.traces / (self.elapsed_s - self.cold_start_s) / (
            self.concurrency / JUDGE_DELAY_S)


def measure(db: Path, traces: int, concurrency: int, *, api_base: str) -> JudgeRun:
    """Score ``traces`` new traces with a 200 ms judge at ``concurrency`` (store at ``db``)."""
    from tracescore.live import LiveScheduler, Registry
    from tracescore.scoring import Judge, PromptStep, create_scorer, load_litellm

    load_litellm()  # its import (seconds) is not part of the figures
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=api_base)
    scorer = create_scorer(f"judged-{concurrency}", "200 ms judge", type="agent",
                           judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade {run.output[-1].content}"))
    with Store(db) as store:
        store.write_spans_sync(bench_live.clones(bench_live.template(), traces))
        registry = Registry()
        registry.register(scorer)
        live = LiveScheduler(store, registry, bench_live.settings(concurrency=concurrency))
        began = live.now()
        cpu = time.process_time()
        started = time.perf_counter()
        asyncio.run(bench_live.score_all(live))
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        [row] = store.read("SELECT min(created_at) AS first, count(*) AS n FROM judge_executions")
        scored = store.read("SELECT count(*) AS n FROM scores WHERE status = 'success'")[0]["n"]
    if scored != traces or row["n"] != traces:
        raise RuntimeError(f"expected {traces} scores and judge executions, got {scored} and "
                           f"{row['n']}")
    cold = max(0.0, (row["first"] - began).total_seconds() - JUDGE_DELAY_S)
    return JudgeRun(traces, concurrency, elapsed, cold, cpu)


def judge_share(db: Path, traces: int, concurrency: int) -> float:
    """Share of ideal (``concurrency / 200 ms``) that live scoring reaches with a 200 ms judge,
    scoring ``traces`` new traces written into the store at ``db``."""
    with scripted_judge() as api_base:
        return measure(db, traces, concurrency, api_base=api_base).share


async def _bare_client(api_base: str, requests: int, concurrency: int) -> float:
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one() -> None:
            async with gate, session.post(f"{api_base}/chat/completions", json=body) as reply:
                await reply.read()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(requests)))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument("--per-slot", type=int, default=20,
                        help="traces per concurrency slot (20: the ideal run lasts 4 s)")
    args = parser.parse_args()
    with scripted_judge() as api_base, tempfile.TemporaryDirectory() as tmp:
        for concurrency in args.concurrency:
            requests = 10 * concurrency
            elapsed = asyncio.run(_bare_client(api_base, requests, concurrency))
            ideal = requests / concurrency * JUDGE_DELAY_S
            print(f"stand-in check, bare aiohttp client, concurrency {concurrency:>2}: "
                  f"{requests} requests in {elapsed:.2f} s ({ideal / elapsed:.2f} of ideal)",
                  flush=True)
        for concurrency in args.concurrency:
            traces = args.per_slot * concurrency
            run = measure(Path(tmp) / f"judge-{concurrency}.duckdb", traces, concurrency,
                          api_base=api_base)
            print(f"judge (200 ms/call), concurrency {concurrency:>2}: {traces} traces in "
                  f"{run.elapsed_s:5.2f} s = {traces / run.elapsed_s:6.1f} traces/s (ideal "
                  f"{concurrency / JUDGE_DELAY_S:.0f}/s): {run.share:.2f} of ideal; cold start "
                  f"{run.cold_start_s:.2f} s, {run.warm_share:.2f} without it; CPU "
                  f"{run.cpu_s / traces * 1000:.1f} ms per trace", flush=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
