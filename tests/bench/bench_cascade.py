"""Benchmark: a cascade's cost and agreement against the expensive judge alone (issue 29).

A labelled set of ``--items`` pass/fail items is judged three ways through ``run_evals``: by the
expensive judge alone (``openai/gpt-4o``), by the cheap judge alone (``openai/gpt-4o-mini``), and
by ``create_cascade_scorer(cheap, expensive, unsure_below=T)`` for several thresholds T. The
labels are this benchmark's own known answers (issue 28's label tables are not used); the
judges are the scripted OpenAI-compatible server over real HTTP, which answers as a simulation
decides, per item, from a seeded "difficulty" d in [0, 1):

- the expensive judge is right when d < 0.97;
- the cheap judge is right when d < 0.80, and states a confidence that falls with difficulty
  (0.98 − 0.7·d, plus noise of ±0.2): hard items, where it is often wrong, are the ones it is
  unsure of.

So the figures show what the cascade does with a cheap judge whose stated confidence tracks its
accuracy this well; with real models, measure on your own labelled set the same way. Costs are
litellm's prices of the usage the stand-in reports (600 prompt and 40 completion tokens a call,
both judges). Printed per configuration: accuracy against the labels, agreement with the
expensive judge alone, the share of items sent to the expensive judge, expensive calls against
unsure items (they must be equal), judge cost and its ratio to the expensive judge alone.
Nothing is asserted.

Run: .venv/bin/python tests/bench/bench_cascade.py [--items 400] [--thresholds 0.4 0.5 0.6 0.7 0.8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")  # litellm wants a key; the judges are local
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CHEAP, EXPENSIVE = "openai/gpt-4o-mini", "openai/gpt-4o"


def simulation(items: int, seed: int = 29) -> list[dict[str, Any]]:
    """Each item's label, difficulty and the cheap judge's stated confidence."""
    rng = random.Random(seed)
    out = []
    for index in range(items):
        difficulty = rng.random()
        confidence = min(1.0, max(0.0, 0.98 - 0.7 * difficulty + rng.uniform(-0.2, 0.2)))
        out.append({"index": index, "label": rng.random() < 0.5, "difficulty": difficulty,
                    "confidence": confidence})
    return out


def answer(items: list[dict[str, Any]]) -> Any:
    from tracescore.testing import Reply

    def reply(body: dict[str, Any]) -> Reply:
        item = items[int(body["messages"][-1]["content"].rsplit(" ", 1)[-1])]
        cheap = body.get("model") == CHEAP.split("/")[1]
        right = item["difficulty"] < (0.80 if cheap else 0.97)
        verdict = item["label"] if right else not item["label"]
        content: dict[str, Any] = {"score": 1.0 if verdict else 0.0}
        if cheap:
            content["confidence"] = round(item["confidence"], 3)
        return Reply(content=content, prompt_tokens=600, completion_tokens=40)

    return reply


def judge(url: str, model: str) -> Any:
    from tracescore.model import get_user_message
    from tracescore.scoring import Judge, PromptStep, create_scorer

    return create_scorer(model.split("/")[1], f"{model} judge", judge=Judge(
        model=model, instructions="Does the answer pass? Say how sure you are.",
        api_base=url)).generate_score(PromptStep(
            "grade", lambda run, results: f"Judge item {get_user_message(run.input)}"))


async def judged(scorer: Any, items: list[dict[str, Any]]) -> tuple[list[Any], float]:
    """Each item's result, and the judge cost of the run (USD)."""
    from tracescore.evals import run_evals

    result = await run_evals(lambda q: q, [{"input": str(i["index"])} for i in items],
                             scorers=[scorer], concurrency=8, judge_cache=False)
    results = [item.scorer_results[scorer.id] for item in result.items]
    cost = sum(r.judge_cost() or 0.0 for r in results)
    return results, cost


async def main(items: int, thresholds: list[float]) -> None:
    from tracescore.scorers import create_cascade_scorer
    from tracescore.scoring import load_litellm
    from tracescore.testing import ScriptedLLMServer

    await asyncio.to_thread(load_litellm)
    data = simulation(items)
    labels = [item["label"] for item in data]
    with ScriptedLLMServer(keep_requests=False) as llm:
        llm.set_default(answer(data))
        print(f"cascade benchmark: {items} labelled items (the benchmark's own known answers), "
              f"cheap {CHEAP}, expensive {EXPENSIVE}, 600 + 40 tokens a call")
        expensive, expensive_cost = await judged(judge(llm.url, EXPENSIVE), data)
        alone = [r.score >= 0.5 for r in expensive]
        print(f"{'configuration':28} {'accuracy':>8} {'agrees':>7} {'escalated':>9} "
              f"{'exp calls':>9} {'unsure':>6} {'cost $':>9} {'x alone':>7}")

        def row(name: str, verdicts: list[bool], escalated: int, unsure: int,
                cost: float) -> None:
            accuracy = sum(v == lab for v, lab in zip(verdicts, labels, strict=True)) / items
            agrees = sum(v == a for v, a in zip(verdicts, alone, strict=True)) / items
            print(f"{name:28} {accuracy:>8.1%} {agrees:>7.1%} {escalated / items:>9.1%} "
                  f"{escalated:>9} {unsure:>6} {cost:>9.4f} {cost / expensive_cost:>7.2f}")

        row("expensive alone", alone, items, items, expensive_cost)
        cheap, cheap_cost = await judged(judge(llm.url, CHEAP), data)
        row("cheap alone", [r.score >= 0.5 for r in cheap], 0, 0, cheap_cost)
        for threshold in thresholds:
            cascade = create_cascade_scorer(judge(llm.url, CHEAP), judge(llm.url, EXPENSIVE),
                                            unsure_below=threshold)
            results, cost = await judged(cascade, data)
            calls = sum("expensive.generate_score" in r.judge for r in results)
            unsure = sum(bool(r.analyze_step_result["unsure"]) for r in results)
            row(f"cascade, unsure below {threshold:g}", [r.score >= 0.5 for r in results],
                calls, unsure, cost)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7, 0.8])
    args = parser.parse_args()
    asyncio.run(main(args.items, args.thresholds))
