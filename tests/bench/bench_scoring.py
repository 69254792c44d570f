"""Benchmark: runs/s of a four-function-step scorer (sync steps, then async steps).

Run: .venv/bin/python tests/bench/bench_scoring.py [runs]
DESIGN.md's reference points: Mastra ~3,000 runs/s on Node 22; a plain Python loop 35-50 k/s.
Last, what importing litellm costs (the judge's first-use price): seconds and resident memory
added, in three fresh processes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from tracescore.model import ScorerRun
from tracescore.scoring import StepResults, create_scorer


def _sync_scorer():  # type: ignore[no-untyped-def]
    return (
        create_scorer("bench-sync", "four sync steps")
        .preprocess(lambda run, results: run.output.lower().split())
        .analyze(lambda run, results: sum(1 for w in results.preprocess_step_result
                                          if w in run.input.lower()))
        .generate_score(lambda run, results: results.analyze_step_result
                        / max(1, len(results.preprocess_step_result)))
        .generate_reason(lambda run, results, score: f"{results.analyze_step_result} words match")
    )


def _async_scorer():  # type: ignore[no-untyped-def]
    async def pre(run: ScorerRun, results: StepResults) -> list[str]:
        return run.output.lower().split()

    async def ana(run: ScorerRun, results: StepResults) -> int:
        return sum(1 for w in results.preprocess_step_result if w in run.input.lower())

    async def score(run: ScorerRun, results: StepResults) -> float:
        return results.analyze_step_result / max(1, len(results.preprocess_step_result))

    async def reason(run: ScorerRun, results: StepResults, score: float) -> str:
        return f"{results.analyze_step_result} words match"

    return (create_scorer("bench-async").preprocess(pre).analyze(ana).generate_score(score)
            .generate_reason(reason))


def _plain_loop(n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        words = "The capital of France is Paris".lower().split()
        hits = sum(1 for w in words if w in "what is the capital of france?")
        score = hits / max(1, len(words))
        _ = (words, hits, score, f"{hits} words match")
    return n / (time.perf_counter() - started)


async def _measure(scorer, n: int) -> float:  # type: ignore[no-untyped-def]
    for _ in range(200):  # warm up
        await scorer.run(input="What is the capital of France?",
                         output="The capital of France is Paris")
    started = time.perf_counter()
    for _ in range(n):
        await scorer.run(input="What is the capital of France?",
                         output="The capital of France is Paris")
    return n / (time.perf_counter() - started)


async def _measure_gather(scorer, n: int, batch: int = 100) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    for _ in range(n // batch):
        await asyncio.gather(*(scorer.run(input="What is the capital of France?",
                                          output="The capital of France is Paris")
                               for _ in range(batch)))
    return n / (time.perf_counter() - started)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    print(f"runs per measurement: {n}")
    print(f"plain python loop (same work)     : {_plain_loop(n):>10,.0f} runs/s")
    sync_rate = asyncio.run(_measure(_sync_scorer(), n))
    print(f"scorer.run, 4 sync function steps : {sync_rate:>10,.0f} runs/s")
    async_rate = asyncio.run(_measure(_async_scorer(), n))
    print(f"scorer.run, 4 async function steps: {async_rate:>10,.0f} runs/s")
    print(f"asyncio.gather x100, sync steps   : "
          f"{asyncio.run(_measure_gather(_sync_scorer(), n)):>10,.0f} runs/s")
    m = max(1, n // 10)
    scorer = _sync_scorer()
    started = time.perf_counter()
    for _ in range(m):
        scorer.run_sync(input="What is the capital of France?",
                        output="The capital of France is Paris")
    rate = m / (time.perf_counter() - started)
    print(f"run_sync (own event loop per run) : {rate:>10,.0f} runs/s")


LITELLM_IMPORT = """
import resource, time
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
from tracescore.scoring import load_litellm
load_litellm()
print(time.perf_counter() - started,
      (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def litellm_import() -> None:
    """Seconds and MB of RSS that ``load_litellm`` (``import litellm``) adds to a new process."""
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", LITELLM_IMPORT], check=True,
                             capture_output=True, text=True).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    runs.sort()
    print(f"import litellm (3 fresh processes)  : {runs[0][0]:.1f}-{runs[-1][0]:.1f} s, "
          f"+{runs[1][1]:,.0f} MB RSS (median)")


if __name__ == "__main__":
    main()
    litellm_import()
