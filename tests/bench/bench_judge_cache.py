"""Benchmark: the judge-call cache under a repeated ``run_evals`` (issue 29).

A judge scorer at temperature 0 (``openai/gpt-4o-mini``, priced by litellm's map from the usage
the stand-in reports: 800 prompt and 60 completion tokens a call) scores ``--items`` data items
with ``run_evals(store=<a DuckDB temp file>)``, three times:

1. cold: every question is new;
2. the same run again: every answer should come from the cache;
3. a run over half old, half new items.

The judge is the scripted OpenAI-compatible server over real HTTP (in this process; it counts
requests). Printed per run: judge requests sent, cached executions, the hit rate (cached /
judge executions), the judge cost paid and the cost the cache saved (``saved_cost``, from
``judge_executions``), and the wall time. Nothing is asserted.

Run: .venv/bin/python tests/bench/bench_judge_cache.py [--items 200] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")  # litellm wants a key; the judge is local
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def scorer(url: str) -> Any:
    from tracescore.model import get_user_message
    from tracescore.scoring import Judge, PromptStep, create_scorer

    judge = Judge(model="openai/gpt-4o-mini", instructions="You grade answers.", api_base=url,
                  model_settings={"temperature": 0})
    return create_scorer("graded", "a judge at temperature 0", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade the answer to: "
                                                 f"{get_user_message(run.input)}"))


async def one_run(db: str, url: str, items: list[dict[str, Any]], concurrency: int,
                  llm: Any) -> dict[str, Any]:
    from tracescore.evals import run_evals
    from tracescore.store import Store

    before = llm.answered
    started = time.perf_counter()
    result = await run_evals(lambda q: f"answer to {q}", items, scorers=[scorer(url)],
                             store=db, concurrency=concurrency)
    wall_s = time.perf_counter() - started
    with Store(db, read_only=True) as store:
        [row] = store.read(
            "SELECT count(*) AS executions, count(*) FILTER (WHERE e.cached) AS cached, "
            "coalesce(sum(e.cost_amount), 0) AS paid, coalesce(sum(e.saved_cost), 0) AS saved "
            "FROM judge_executions e JOIN scores s USING (score_id) WHERE s.eval_run_id = ?",
            [result.eval_run_id])
    return {"requests": llm.answered - before, "wall_s": wall_s, **row}


async def main(items: int, concurrency: int) -> None:
    from tracescore.scoring import load_litellm
    from tracescore.testing import Reply, ScriptedLLMServer

    await asyncio.to_thread(load_litellm)
    data = [{"input": f"question {i}"} for i in range(items)]
    fresh = range(items, items + items // 2)
    half_new = data[: items // 2] + [{"input": f"question {i}"} for i in fresh]
    with tempfile.TemporaryDirectory() as folder, ScriptedLLMServer(keep_requests=False) as llm:
        llm.set_default(lambda body: Reply(content={"score": 0.8}, prompt_tokens=800,
                                           completion_tokens=60))
        db = str(Path(folder) / "bench.duckdb")
        print(f"judge-call cache, run_evals of {items} items, concurrency {concurrency}, "
              "openai/gpt-4o-mini at 800 + 60 tokens a call")
        print(f"{'run':28} {'requests':>8} {'cached':>7} {'hit rate':>8} {'paid $':>10} "
              f"{'saved $':>10} {'wall s':>7}")
        for name, run_items in (("1 cold", data), ("2 the same run again", data),
                                ("3 half old, half new", half_new)):
            got = await one_run(db, llm.url, run_items, concurrency, llm)
            rate = got["cached"] / got["executions"] if got["executions"] else 0.0
            print(f"{name:28} {got['requests']:>8} {got['cached']:>7} {rate:>8.1%} "
                  f"{got['paid']:>10.5f} {got['saved']:>10.5f} {got['wall_s']:>7.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    asyncio.run(main(args.items, args.concurrency))
