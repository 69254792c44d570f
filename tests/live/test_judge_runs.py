"""Running judges without surprises, in process: rescore, timeouts, the cache, prices, segments.

A real store on a temp file and the scripted OpenAI-compatible judge over real HTTP; the live
scheduler is ticked by the test (``run_until_quiet``). The same features run in a real server in
``test_judge_runs_serve.py`` and ``test_rescore_kill9.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tracescore.live import (
    ConfigError,
    LiveScheduler,
    ModelPrice,
    Pricing,
    Registry,
    rescore,
    scorer_summary,
)
from tracescore.scoring import Judge, PromptStep, create_scorer
from tracescore.testing import Reply

from .conftest import fast_settings, run_until_quiet, scheduler


def judge_scorer(url: str, *, model: str = "openai/gpt-4o-mini", temperature: float = 0.0,
                 scorer_id: str = "judged") -> Any:
    judge = Judge(model=model, instructions="You grade answers.", api_base=url,
                  model_settings={"temperature": temperature})
    return create_scorer(scorer_id, "judge test", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade: {run.output[-1].content}"))


def good(body: dict[str, Any]) -> Reply:
    return Reply(content={"score": 0.9}, prompt_tokens=100, completion_tokens=10)


async def test_failed_pairs_get_one_new_attempt_and_keep_their_history(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    ids = add_traces(3)
    llm_server.set_default(lambda body: Reply(content="not json"))
    live = scheduler(store, judge_scorer(llm_server.url, temperature=1.0),
                     settings=fast_settings(max_attempts=1))
    await run_until_quiet(live)
    failed = store.read("SELECT trace_id, score_id FROM scoring_decisions "
                        "WHERE decision = 'failed' ORDER BY trace_id")
    assert len(failed) == 3
    dry = await rescore(live, "judged", failed=True, dry_run=True)
    assert (dry["pairs"], dry["picked"]) == (3, {"failed": 3})
    assert store.read("SELECT count(*) AS n FROM scoring_decision_history")[0]["n"] == 0
    with pytest.raises(ConfigError, match="say which pairs"):
        await rescore(live, "judged")

    llm_server.set_default(good)  # the judge is fixed
    report = await rescore(live, "judged", failed=True)
    assert report["decisions"] == {"scored": 3}
    decisions = store.read("SELECT trace_id, decision, score_id FROM scoring_decisions "
                           "ORDER BY trace_id")
    assert [d["decision"] for d in decisions] == ["scored"] * 3
    assert {d["score_id"] for d in decisions}.isdisjoint({f["score_id"] for f in failed})
    scores = store.read("SELECT trace_id, score_id, status, source FROM scores")
    assert sorted((s["status"], s["source"]) for s in scores) == (
        [("failed", "live")] * 3 + [("success", "rescore")] * 3)
    for decision in decisions:  # one success row per pair, under the decision's score id
        [success] = [s for s in scores if s["trace_id"] == decision["trace_id"]
                     and s["status"] == "success"]
        assert success["score_id"] == decision["score_id"]
    history = store.read("SELECT decision, score_id, archived_by FROM scoring_decision_history")
    assert sorted(h["score_id"] for h in history) == sorted(f["score_id"] for f in failed)
    assert {(h["decision"], h["archived_by"]) for h in history} == {("failed", "rescore")}
    old_calls = store.read("SELECT count(*) AS n FROM judge_executions WHERE score_id IN "
                           "(SELECT score_id FROM scoring_decision_history)")[0]["n"]
    assert old_calls >= 3  # the failed attempts' judge executions are kept
    again = await rescore(live, "judged", failed=True)
    assert again["pairs"] == 0  # nothing failed any more
    one = await rescore(live, "judged", trace_ids=[ids[0]])
    assert (one["pairs"], one["picked"], one["decisions"]) == (1, {"scored": 1}, {"scored": 1})
    [summary] = await asyncio.to_thread(scorer_summary, store.read, live.status())
    assert summary["scored"] == 3 and summary["failed"] == 0


async def test_a_hung_judge_fails_the_attempt_with_a_sentence_naming_the_setting(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    add_traces(1)
    llm_server.set_default(lambda body: Reply(content={"score": 1}, delay_s=5))
    live = scheduler(store, (judge_scorer(llm_server.url), {"judge_timeout_seconds": 0.5}),
                     settings=fast_settings(transient_retry_deadline_seconds=0.3))
    await live.tick()
    await asyncio.sleep(0.3)
    [status] = live.status()
    assert status["judge_calls_in_flight"] == 1 and status["oldest_judge_call_seconds"] >= 0.2
    await live.drain()
    [execution] = store.read("SELECT status, error_name, error_message FROM judge_executions")
    assert (execution["status"], execution["error_name"]) == ("failed", "JudgeTimeoutError")
    assert "did not answer within 0.5 s" in execution["error_message"]
    assert "judge_timeout_seconds = 0.5" in execution["error_message"]
    assert live.status()[0]["judge_calls_in_flight"] == 0
    await asyncio.sleep(0.4)
    await run_until_quiet(live, pause_s=0.2)
    [decision] = store.read("SELECT decision, last_error FROM scoring_decisions")
    assert decision["decision"] == "failed"
    assert "[[scorers]] id 'judged' judge_timeout_seconds = 0.5" in decision["last_error"]


async def test_identical_judge_questions_are_asked_once(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    add_traces(3)  # three copies of one trace: the judge's prompt is the same for each
    llm_server.set_default(good)
    live = scheduler(store, judge_scorer(llm_server.url), settings=fast_settings(concurrency=1))
    await run_until_quiet(live)
    assert len(llm_server.requests) == 1
    rows = store.read("SELECT e.cached, e.cost_amount, e.saved_cost, s.judge_cost, s.score "
                      "FROM judge_executions e JOIN scores s USING (score_id) "
                      "ORDER BY e.cached")
    assert [r["cached"] for r in rows] == [False, True, True]
    assert rows[1]["cost_amount"] == 0 and rows[1]["saved_cost"] == rows[0]["cost_amount"] > 0
    assert {r["score"] for r in rows} == {0.9}
    assert live.stats.judge_cache_hits_total["judged"] == 2
    [summary] = scorer_summary(store.read, live.status())
    assert summary["judge_cache_hits"] == 2
    assert summary["judge_saved_usd"] == pytest.approx(2 * rows[0]["cost_amount"])

    add_traces(2)  # judge_cache = false: asked every time; a new epoch: asked afresh
    off = scheduler(store, (judge_scorer(llm_server.url, scorer_id="uncached"),
                            {"judge_cache": False}),
                    (judge_scorer(llm_server.url, scorer_id="epoch"), {"judge_cache_epoch": 1}),
                    settings=fast_settings(concurrency=1))
    await run_until_quiet(off)
    assert len(llm_server.requests) == 1 + 5 + 1  # 5 traces uncached, one new epoch answer


async def test_an_unpriced_judge_shows_unpriced_and_a_usd_budget_refuses_it(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    add_traces(1)
    llm_server.set_default(good)
    scorer = judge_scorer(llm_server.url, model="openai/scripted", temperature=1.0)
    refused = scheduler(store, scorer)  # the default [live.budget] caps USD
    with pytest.raises(ConfigError, match=r"judge model 'openai/scripted' has no known price"):
        await refused.prepare()
    no_usd = fast_settings(budget={"max_judge_cost_usd_per_hour": 0,
                                   "max_judge_cost_usd_per_day": 0,
                                   "max_judge_tokens_per_hour": 1000})
    live = scheduler(store, scorer, settings=no_usd)  # a token budget still works
    await run_until_quiet(live)
    [row] = store.read("SELECT s.judge_cost, s.cost_source, s.judge_total_tokens, "
                       "e.cost_amount, e.cost_source AS execution_source "
                       "FROM scores s JOIN judge_executions e USING (score_id)")
    assert (row["judge_cost"], row["cost_source"], row["cost_amount"],
            row["execution_source"]) == (None, "unpriced", None, "unpriced")
    assert row["judge_total_tokens"] == 110
    [summary] = scorer_summary(store.read, live.status())
    assert summary["judge_unpriced"] == 1 and summary["judge_cost_usd"] is None

    add_traces(1, service_name="priced")  # [pricing."openai/scripted"] prices the judge
    pricing = Pricing({"openai/scripted": ModelPrice(1e-6, 2e-6)})
    registry = Registry()
    registry.register(scorer)
    priced = LiveScheduler(store, registry, fast_settings(), pricing=pricing)
    await run_until_quiet(priced)
    rows = store.read("SELECT judge_cost, cost_source FROM scores WHERE cost_source = 'config'")
    assert rows == [{"judge_cost": pytest.approx(100 * 1e-6 + 10 * 2e-6),
                     "cost_source": "config"}]


async def test_segments_give_their_own_sample_rates(store: Any, add_traces: Any) -> None:
    skipped = add_traces(3, service_name="noisy-bot")
    kept = add_traces(3, service_name="support-bot")
    code = create_scorer("code", "a code scorer").generate_score(lambda run, results: 1.0)
    live = scheduler(store, (code, {"sample": [{"where": "service_name = 'noisy-bot'",
                                                "rate": 0.0}]}))
    await run_until_quiet(live)
    rows = store.read("SELECT trace_id, decision, last_error FROM scoring_decisions")
    out = {r["trace_id"]: r for r in rows}
    assert {out[t]["decision"] for t in skipped} == {"sampled_out"}
    assert out[skipped[0]]["last_error"] == (
        "sample rate 0 of segment 1 (service_name = 'noisy-bot')")
    assert {out[t]["decision"] for t in kept} == {"scored"}


async def test_a_cascade_records_which_judge_decided_and_each_judge_call_once(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    from tracescore.live._review import hand_off, unsure_item
    from tracescore.live._rows import PairKey
    from tracescore.scorers import create_cascade_scorer

    ids = add_traces(2)
    confident = {ids[0]: 0.9, ids[1]: 0.3}

    def answer(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        marker, _, trace_id = prompt.partition(":")
        if marker == "cheap":
            return Reply(content={"score": 1.0, "confidence": confident[trace_id]})
        return Reply(content={"score": 0.2})

    def part(marker: str) -> Any:
        judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=llm_server.url)
        return create_scorer(marker, "x", type="agent", judge=judge).generate_score(PromptStep(
            "grade", lambda run, results: f"{marker}:{run.request_context['trace_id']}"))

    llm_server.set_default(answer)
    cascade = create_cascade_scorer(part("cheap"), part("expensive"), queue="review")
    live = scheduler(store, cascade)
    await run_until_quiet(live)
    scores = {r["trace_id"]: r for r in store.read(
        "SELECT trace_id, score, decided_by, judge_total_tokens, score_id FROM scores")}
    assert (scores[ids[0]]["decided_by"], scores[ids[0]]["score"]) == ("cheap", 1.0)
    assert (scores[ids[1]]["decided_by"], scores[ids[1]]["score"]) == ("expensive", 0.2)
    steps = store.read("SELECT trace_id, step FROM judge_executions ORDER BY trace_id, step")
    assert sorted((r["trace_id"], r["step"]) for r in steps) == sorted([
        (ids[0], "cheap.generate_score"), (ids[1], "cheap.generate_score"),
        (ids[1], "expensive.generate_score")])
    assert scores[ids[1]]["judge_total_tokens"] == 2 * 15
    key = PairKey(ids[1], "x", "cascade", "v")
    result = await cascade.run(input="q", output="a", request_context={"trace_id": ids[1]})
    queue, item = unsure_item(live.registry.get("cascade"), key, result)  # type: ignore[misc,arg-type]
    assert queue == "review" and "confidence 0.30 < 0.7" in item["reason"]
    # With no review queue of that name the hand-off does nothing; with one, the unsure trace
    # joins it (once), and the confident one never does.
    assert await hand_off(live, live.registry.get("cascade"), key, result) is False  # type: ignore[arg-type]
    from tracescore import labels

    labels.create_schema(store, {"name": "right", "kind": "boolean"})
    labels.create_queue(store, {"name": "review", "schemas": ["right"], "selection": "false"})
    assert await hand_off(live, live.registry.get("cascade"), key, result) is True  # type: ignore[arg-type]
    assert await hand_off(live, live.registry.get("cascade"), key, result) is False  # type: ignore[arg-type]
    assert [r["item_key"] for r in store.read(
        "SELECT item_key FROM review_items WHERE queue_name = 'review'")] == [f"trace:{ids[1]}"]
