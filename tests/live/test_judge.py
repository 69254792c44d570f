"""Judge scorers under live scoring: usage and cost on the score, retries, pauses, budgets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tracescore.live import RetryPolicy
from tracescore.scoring import Judge, PromptStep, create_scorer
from tracescore.testing import Reply, error

from .conftest import fast_settings, open_decisions, run_until_quiet, scheduler


def judge_scorer(url: str, id: str = "judged") -> Any:  # noqa: A002
    judge = Judge(model="openai/gpt-4o-mini", instructions="You grade answers.", api_base=url)
    return create_scorer(id, "judge test", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade: {run.output[-1].content}"))


class Clock:
    """A settable clock (naive UTC) for budget windows."""

    def __init__(self, live: Any) -> None:
        self.offset = timedelta(0)
        self._real = live._clock
        live._clock = self

    def __call__(self) -> Any:
        return self._real() + self.offset


async def test_usage_and_cost_are_written_with_the_score(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    [trace_id] = add_traces(1)
    llm_server.script(Reply(content={"score": 0.75}, prompt_tokens=120, completion_tokens=8))
    live = scheduler(store, judge_scorer(llm_server.url))
    await run_until_quiet(live)
    [score] = store.read("SELECT * FROM scores")
    assert (score["trace_id"], score["status"], score["score"]) == (trace_id, "success", 0.75)
    assert (score["judge_input_tokens"], score["judge_output_tokens"],
            score["judge_total_tokens"]) == (120, 8, 128)
    assert score["judge_cost"] is not None and score["judge_cost"] > 0
    assert "Right now it is cloudy in Paris" in score["generate_score_prompt"]
    [execution] = store.read("SELECT * FROM judge_executions")
    assert (execution["score_id"], execution["step"], execution["status"]) == (
        score["score_id"], "generate_score", "success")
    assert execution["judge_model_id"] == "gpt-4o-mini"
    assert execution["cost_amount"] == score["judge_cost"]
    assert live.stats.judge_tokens_total[("judged", "input")] == 120
    assert "Paris" in llm_server.requests[0]["messages"][-1]["content"]


async def test_rate_limit_then_server_errors_retry_without_spending_attempts(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    add_traces(1)
    llm_server.script(error(429, "slow down", retry_after=0.2), error(500), error(503),
                      Reply(content={"score": 1}, prompt_tokens=50, completion_tokens=5))
    live = scheduler(store, judge_scorer(llm_server.url))
    live.policy = RetryPolicy(max_attempts=3, retry_base_s=0, transient_base_s=0.05)
    await run_until_quiet(live, pause_s=0.1)
    [score] = store.read("SELECT status, score, judge_total_tokens, metadata FROM scores")
    assert (score["status"], score["score"], score["judge_total_tokens"]) == ("success", 1.0, 55)
    executions = store.read(
        "SELECT status, error_code, attempt_count FROM judge_executions ORDER BY created_at")
    assert [(e["status"], e["error_code"]) for e in executions] == [
        ("failed", "429"), ("failed", "500"), ("failed", "503"), ("success", None)]
    assert all(e["attempt_count"] == 1 for e in executions)
    [decision] = store.read("SELECT decision, attempts FROM scoring_decisions")
    assert (decision["decision"], decision["attempts"]) == ("scored", 1)
    assert len(llm_server.requests) == 4


async def test_bad_judge_output_spends_attempts(store: Any, add_traces: Any,
                                                llm_server: Any) -> None:
    add_traces(1)
    llm_server.set_default(lambda body: Reply(content="no json here"))
    live = scheduler(store, judge_scorer(llm_server.url))
    await run_until_quiet(live)
    [decision] = store.read("SELECT decision, attempts, last_error FROM scoring_decisions")
    assert (decision["decision"], decision["attempts"]) == ("failed", 3)
    [score] = store.read("SELECT status, judge_total_tokens, error FROM scores")
    assert score["status"] == "failed" and '"permanent"' in score["error"]
    count = store.read("SELECT count(*) AS n FROM judge_executions")[0]["n"]
    assert count >= 3  # every attempt's judge work is kept
    assert score["judge_total_tokens"] == 15 * len(llm_server.requests)


async def test_authentication_error_pauses_the_scorer(store: Any, add_traces: Any,
                                                      llm_server: Any) -> None:
    add_traces(2)
    llm_server.set_default(lambda body: error(401, "invalid api key"))
    live = scheduler(store, judge_scorer(llm_server.url), settings=fast_settings(concurrency=1))
    for _ in range(3):
        await live.tick()
        await live.drain()
    assert len(llm_server.requests) == 1  # the second pair never reached the judge
    [state] = live.status()
    assert state["state"] == "paused" and "invalid api key" in state["note"]
    assert open_decisions(store) == 2
    assert store.read("SELECT count(*) AS n FROM scores")[0]["n"] == 0
    llm_server.set_default(lambda body: Reply(content={"score": 0.5}))
    assert live.resume("judged")
    await run_until_quiet(live)
    assert store.read("SELECT count(*) AS n FROM scores WHERE status = 'success'")[0]["n"] == 2


async def test_budget_cap_stops_judge_calls_and_resumes(store: Any, add_traces: Any,
                                                        llm_server: Any) -> None:
    add_traces(4)
    llm_server.set_default(lambda body: Reply(content={"score": 1}, prompt_tokens=10,
                                              completion_tokens=5))
    settings = fast_settings(concurrency=1, budget={"max_judge_tokens_per_hour": 20})
    code = create_scorer("code", "no judge").generate_score(lambda run, r: 1.0)
    live = scheduler(store, judge_scorer(llm_server.url), code, settings=settings)
    clock = Clock(live)
    for _ in range(3):
        await live.tick()
        await live.drain()
    assert len(llm_server.requests) == 2  # 15 tokens, then 30: the cap of 20 is reached
    waiting = store.read("SELECT decision, last_error FROM scoring_decisions "
                         "WHERE scorer_id = 'judged' AND decision = 'over_budget'")
    assert len(waiting) == 2 and "max_judge_tokens_per_hour" in waiting[0]["last_error"]
    code_done = store.read("SELECT count(*) AS n FROM scores WHERE scorer_id = 'code'")
    assert code_done[0]["n"] == 4  # code scorers do not wait for the judge budget
    assert live.status()[0]["state"] == "over_budget"
    clock.offset = timedelta(hours=1, minutes=1)  # the window moves past the spend
    await run_until_quiet(live)
    assert len(llm_server.requests) == 4
    assert store.read("SELECT count(*) AS n FROM scores WHERE scorer_id = 'judged'")[0]["n"] == 4


async def test_withdrawn_queued_writes_are_not_stored(store: Any, llm_server: Any) -> None:
    from tracescore.live import score_id_for

    live = scheduler(store, judge_scorer(llm_server.url))

    def decision(trace_id: str) -> dict[str, Any]:
        return {"trace_id": trace_id, "span_id": "0" * 16, "scorer_id": "judged",
                "scorer_version": "v1", "decision": "retrying",
                "score_id": score_id_for(trace_id, "0" * 16, "judged", "v1"), "attempts": 0}

    kept = live.submit_write([], [], [decision("a" * 32)])
    taken_back = live.submit_write([], [], [decision("b" * 32)])
    assert live.withdraw_write(taken_back)  # nothing ran since: still queued
    assert taken_back.cancelled()
    await kept
    assert not live.withdraw_write(kept)  # already written
    rows = store.read("SELECT trace_id FROM scoring_decisions ORDER BY trace_id")
    assert [r["trace_id"] for r in rows] == ["a" * 32]


async def test_a_one_step_judge_run_stores_its_execution_once_with_the_score(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    traces = add_traces(6)
    llm_server.set_default(lambda body: Reply(content={"score": 1}, prompt_tokens=7))
    live = scheduler(store, judge_scorer(llm_server.url))
    await run_until_quiet(live)
    rows = store.read("SELECT e.trace_id, e.input_tokens, s.judge_input_tokens, d.decision "
                      "FROM judge_executions e JOIN scores s USING (score_id) "
                      "JOIN scoring_decisions d USING (score_id)")
    assert sorted(r["trace_id"] for r in rows) == sorted(traces)
    assert {(r["input_tokens"], r["judge_input_tokens"], r["decision"]) for r in rows} == {
        (7, 7, "scored")}


async def test_a_final_write_meeting_a_stored_execution_is_written_again_without_it(
    store: Any, llm_server: Any
) -> None:
    from tracescore.live import score_id_for

    live = scheduler(store, judge_scorer(llm_server.url))
    score_id = score_id_for("c" * 32, "0" * 16, "judged", "v1")
    execution = {"execution_id": "e-1", "score_id": score_id, "trace_id": "c" * 32,
                 "scorer_id": "judged", "step": "generate_score", "status": "success",
                 "input_tokens": 3, "total_tokens": 3}
    decision = {"trace_id": "c" * 32, "span_id": "0" * 16, "scorer_id": "judged",
                "scorer_version": "v1", "score_id": score_id, "attempts": 0}
    await live.write([], [execution], [{**decision, "decision": "retrying"}])
    score = {"score_id": score_id, "trace_id": "c" * 32, "span_id": "0" * 16,
             "scorer_id": "judged", "scorer_name": "judged", "scorer_version": "v1",
             "source": "live", "status": "success", "score": 1.0}
    await live.write([score], [{**execution, "input_tokens": 99}],
                     [{**decision, "decision": "scored", "attempts": 1}])
    assert live._writeback.rewrites == 1
    assert store.read("SELECT execution_id, input_tokens FROM judge_executions") == [
        {"execution_id": "e-1", "input_tokens": 3}]  # the stored row is left as it was
    assert store.read("SELECT score FROM scores") == [{"score": 1.0}]
    assert store.read("SELECT decision FROM scoring_decisions") == [{"decision": "scored"}]


async def test_a_step_stored_early_is_not_sent_again_with_the_score(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    judge = Judge(model="openai/gpt-4o-mini", instructions="You grade answers.",
                  api_base=llm_server.url)
    two_step = create_scorer("two", "two judge steps", type="agent", judge=judge).analyze(
        PromptStep("analyze", lambda run, results: f"Analyze: {run.output[-1].content}",
                   output_schema={"type": "object"})).generate_score(
        PromptStep("grade", lambda run, results: "Grade the analysis"))

    def answer(body: dict[str, Any]) -> Reply:
        grading = "Grade the analysis" in body["messages"][-1]["content"]
        # The second call answers late: the first step's row is committed by then.
        return Reply(content={"score": 1} if grading else {"ok": True},
                     delay_s=0.3 if grading else 0.0)

    llm_server.set_default(answer)
    traces = add_traces(3)
    live = scheduler(store, two_step)
    await run_until_quiet(live)
    assert live._writeback.rewrites == 0
    rows = store.read("SELECT trace_id, step, count(*) AS n FROM judge_executions "
                      "GROUP BY ALL ORDER BY ALL")
    assert [(r["trace_id"], r["step"], r["n"]) for r in rows] == sorted(
        (t, step, 1) for t in traces for step in ("analyze", "generate_score"))
    totals = store.read("SELECT judge_total_tokens AS t FROM scores WHERE status = 'success'")
    assert [r["t"] for r in totals] == [30, 30, 30]  # both calls' 10 + 5 tokens


async def test_write_backs_queued_within_the_linger_share_one_transaction(store: Any) -> None:
    import asyncio

    from tracescore.live._writeback import WriteBack

    def decision(trace_id: str) -> dict[str, Any]:
        return {"trace_id": trace_id, "span_id": "0" * 16, "scorer_id": "judged",
                "scorer_version": "v1", "decision": "retrying", "attempts": 0}

    writeback = WriteBack(store, linger_s=1.0)
    first = writeback.submit([], [], [decision("a" * 32)])
    await asyncio.sleep(0.01)  # the first rows wait for more rather than commit alone
    second = writeback.submit([], [], [decision("b" * 32)])
    await asyncio.gather(first, second)
    assert writeback.transactions == 1
    assert len(store.read("SELECT * FROM scoring_decisions")) == 2


async def test_the_first_judge_calls_wait_for_two_rounds_of_slots_not_a_whole_batch(
    store: Any, add_traces: Any, llm_server: Any
) -> None:
    llm_server.set_default(lambda body: Reply(content={"score": 1}))
    traces = add_traces(20)
    live = scheduler(store, judge_scorer(llm_server.url),
                     settings=fast_settings(concurrency=2, batch_size=64))
    await live.tick()
    # Nothing was in flight: 2 × concurrency traces expanded and handed out; the tick this one
    # started expands the others while those run.
    decided = store.read("SELECT count(DISTINCT trace_id) AS n FROM scoring_decisions")
    assert decided == [{"n": 4}]
    await live.drain()
    await run_until_quiet(live)
    scored = store.read("SELECT trace_id FROM scores WHERE status = 'success'")
    assert sorted(r["trace_id"] for r in scored) == sorted(traces)


async def test_a_flush_commits_queued_write_backs_without_their_linger(store: Any) -> None:
    import asyncio

    from tracescore.live._writeback import WriteBack

    writeback = WriteBack(store, linger_s=30.0)
    queued = writeback.submit([], [], [{"trace_id": "a" * 32, "span_id": "0" * 16,
                                        "scorer_id": "judged", "scorer_version": "v1",
                                        "decision": "retrying", "attempts": 0}])
    await asyncio.wait_for(writeback.flush(), 10)  # not the 30 s linger
    assert queued.done() and len(store.read("SELECT * FROM scoring_decisions")) == 1
