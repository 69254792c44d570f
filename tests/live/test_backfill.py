"""Backfill (dry run and real) and the per-scorer summary."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tracescore.live import ConfigError, backfill, scorer_summary
from tracescore.scoring import create_scorer
from tracescore.testing import Reply

from .conftest import fast_settings, run_until_quiet, scheduler
from .test_judge import judge_scorer


def code_scorer() -> Any:
    return create_scorer("code", "always 1").generate_score(lambda run, r: 1.0)


async def test_backfill_scores_what_live_scoring_left_behind(store: Any, add_traces: Any) -> None:
    ids = add_traces(3)
    live = scheduler(store, code_scorer(), settings=fast_settings(lookback_seconds=0))
    await live.prepare()
    await live.tick()  # traces that arrived before this version started are not live-scored
    assert store.read("SELECT count(*) AS n FROM scoring_decisions")[0]["n"] == 0

    plan = await backfill(live, "code", dry_run=True)
    assert (plan["traces"], plan["pairs"], plan["estimated_judge_tokens"]) == (3, 3, 0)
    assert store.read("SELECT count(*) AS n FROM scores")[0]["n"] == 0

    done = await backfill(live, "code")
    assert done["decisions"] == {"scored": 3}
    rows = store.read("SELECT trace_id, source FROM scores")
    assert sorted(r["trace_id"] for r in rows) == sorted(ids)
    assert {r["source"] for r in rows} == {"backfill"}
    again = await backfill(live, "code", dry_run=True)
    assert again["traces"] == 0


async def test_backfill_range_and_limit(store: Any, add_traces: Any) -> None:
    add_traces(3)
    live = scheduler(store, code_scorer())
    await live.prepare()
    now = live.now()
    assert (await backfill(live, "code", dry_run=True, limit=2))["traces"] == 2
    assert (await backfill(live, "code", dry_run=True, since=now))["traces"] == 0
    early = now - timedelta(days=3650)
    assert (await backfill(live, "code", dry_run=True, until=early))["traces"] == 0


async def test_dry_run_estimates_judge_spend_from_history(store: Any, add_traces: Any,
                                                          llm_server: Any) -> None:
    add_traces(1)
    llm_server.set_default(lambda body: Reply(content={"score": 1}, prompt_tokens=100,
                                              completion_tokens=20))
    live = scheduler(store, judge_scorer(llm_server.url))
    await run_until_quiet(live)
    add_traces(2)
    plan = await backfill(live, "judged", dry_run=True)
    assert plan["pairs"] == 2 and plan["estimated_judge_tokens"] == 240
    [cost] = store.read("SELECT judge_cost FROM scores")
    assert plan["estimated_judge_cost_usd"] == pytest.approx(2 * cost["judge_cost"], rel=1e-3)
    assert "1 runs of this version" in plan["estimate_basis"]


async def test_span_target_pairs_are_estimated_from_a_sample(store: Any, add_traces: Any) -> None:
    add_traces(3)
    live = scheduler(store, (code_scorer(), {"target": "tool_call"}))
    await live.prepare()
    plan = await backfill(live, "code", dry_run=True)
    assert plan["pairs"] == 6  # two tool calls per trace


async def test_backfill_of_an_unknown_scorer(store: Any) -> None:
    live = scheduler(store, code_scorer())
    with pytest.raises(ConfigError,
                       match="'nope' is not registered; the enabled scorers are: code"):
        await backfill(live, "nope")


async def test_summary_counts_each_decision(store: Any, add_traces: Any) -> None:
    add_traces(6)
    live = scheduler(store, (code_scorer(), {"sample_rate": 0.5}))
    await run_until_quiet(live)
    [row] = scorer_summary(store.read, live.status())
    scored = store.read("SELECT count(*) AS n FROM scores")[0]["n"]
    assert row["scored"] == scored and row["sampled_out"] == 6 - scored
    assert row["avg_score"] == (1.0 if scored else None)
    assert (row["failed"], row["pending"], row["judge_cost_usd"]) == (0, 0, None)
    assert row["state"] == "running"
