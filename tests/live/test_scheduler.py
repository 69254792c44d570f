"""The live scheduler in one process: selection, write-back, exactly once, decisions, targets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracescore.live import ConfigError, LiveScheduler, is_sampled, score_id_for
from tracescore.scoring import create_scorer, not_scorable

from .conftest import (
    AGENT_FIXTURE,
    clone_trace,
    fast_settings,
    fixture_traces,
    open_decisions,
    run_until_quiet,
    scheduler,
)


def counting_scorer(id: str = "count-tools", **kwargs: Any) -> Any:  # noqa: A002
    """An agent scorer: 1 when the agent called a tool, with what it saw."""

    def preprocess(run: Any) -> dict[str, Any]:
        calls = [inv for msg in run.output for inv in (msg.tool_invocations or [])]
        return {"calls": [c.tool_name for c in calls]}

    return (create_scorer(id, "test", type="agent", **kwargs)
            .preprocess(preprocess)
            .generate_score(lambda run, r: 1.0 if r.preprocess_step_result["calls"] else 0.0))


def decisions(store: Any, scorer_id: str | None = None) -> list[dict[str, Any]]:
    where = "WHERE scorer_id = ?" if scorer_id else ""
    return store.read(f"SELECT * FROM scoring_decisions {where} ORDER BY trace_id, span_id",
                      [scorer_id] if scorer_id else [])


async def test_scores_each_settled_trace_once(store: Any, add_traces: Any) -> None:
    ids = add_traces(3)
    live = scheduler(store, counting_scorer())
    await run_until_quiet(live)
    await run_until_quiet(live)
    rows = store.read("SELECT trace_id, span_id, scorer_id, scorer_version, source, status, "
                      "score, input, output, preprocess_step_result FROM scores")
    assert sorted(r["trace_id"] for r in rows) == sorted(ids)
    assert {(r["source"], r["status"], r["score"]) for r in rows} == {("live", "success", 1.0)}
    assert all('"get_weather"' in r["preprocess_step_result"] for r in rows)
    assert all("Paris" in r["input"] for r in rows)
    decided = decisions(store)
    assert [d["decision"] for d in decided] == ["scored"] * 3
    assert all(d["score_id"] == score_id_for(d["trace_id"], d["span_id"], d["scorer_id"],
                                             d["scorer_version"]) for d in decided)
    assert live.stats.scores_total[("count-tools", "success")] == 3


async def test_idle_ticks_read_no_spans_and_new_spans_are_still_seen(
    store: Any, add_traces: Any
) -> None:
    add_traces(2)
    live = scheduler(store, counting_scorer())
    await run_until_quiet(live)
    scans = live.stats.scans
    assert scans >= 1
    for _ in range(3):
        await live.tick()
    assert live.stats.scans == scans  # nothing committed since: no span is read again
    later = add_traces(1)
    await run_until_quiet(live)
    assert live.stats.scans > scans
    assert {r["trace_id"] for r in decisions(store)} >= set(later)
    assert [d["decision"] for d in decisions(store)] == ["scored"] * 3


async def test_a_restart_scores_new_traces_and_nothing_twice(store: Any, add_traces: Any) -> None:
    first = add_traces(2)
    await run_until_quiet(scheduler(store, counting_scorer()))
    second = add_traces(2)
    again = scheduler(store, counting_scorer())
    await run_until_quiet(again)
    rows = store.read("SELECT trace_id, count(*) AS n FROM scores GROUP BY trace_id")
    assert sorted(r["trace_id"] for r in rows) == sorted(first + second)
    assert {r["n"] for r in rows} == {1}


def async_counting_scorer(id: str = "count-tools-async") -> Any:  # noqa: A002
    """``counting_scorer`` with an async step: its pairs are queued (pending), not scored in the
    tick that finds them."""

    async def preprocess(run: Any) -> dict[str, Any]:
        calls = [inv for msg in run.output for inv in (msg.tool_invocations or [])]
        return {"calls": [c.tool_name for c in calls]}

    return (create_scorer(id, "test", type="agent")
            .preprocess(preprocess)
            .generate_score(lambda run, r: 1.0 if r.preprocess_step_result["calls"] else 0.0))


async def test_pending_pairs_survive_a_restart(store: Any, add_traces: Any) -> None:
    """A pair left pending (the process died before scoring it) is scored after a restart."""
    ids = add_traces(2)
    live = scheduler(store, async_counting_scorer())
    now = live.now()
    await live.prepare()
    await live.tick()
    # Stop before the work runs, as a crash would.
    for task in list(live._tasks):
        task.cancel()
    await live.drain()
    assert open_decisions(store) >= 1
    await run_until_quiet(scheduler(store, async_counting_scorer()))
    assert sorted(r["trace_id"] for r in store.read("SELECT trace_id FROM scores")) == sorted(ids)
    assert now <= live.now()


async def test_code_scorers_are_scored_in_the_tick_without_a_pending_row(
    store: Any, add_traces: Any
) -> None:
    """Plain-function code scorers are scored where the tick expands their traces: when the
    tick returns, their decisions are final and written with their scores, no pair waits, and
    the async scorer beside them still goes through the queue."""
    ids = add_traces(3)
    live = scheduler(store, counting_scorer(), async_counting_scorer())
    await live.prepare()
    await live.tick()
    inline = decisions(store, "count-tools")
    assert [(d["trace_id"], d["decision"], d["attempts"]) for d in inline] == [
        (trace_id, "scored", 1) for trace_id in sorted(ids)]
    scores = store.read("SELECT trace_id, score_id, status, score FROM scores "
                        "WHERE scorer_id = 'count-tools' ORDER BY trace_id")
    assert [(r["trace_id"], r["status"], r["score"]) for r in scores] == [
        (trace_id, "success", 1.0) for trace_id in sorted(ids)]
    assert [r["score_id"] for r in scores] == [d["score_id"] for d in inline]
    assert live.stats.scores_total[("count-tools", "success")] == 3
    queued = decisions(store, "count-tools-async")
    assert {d["decision"] for d in queued} <= {"pending", "scored"}
    await run_until_quiet(live)
    assert [d["decision"] for d in decisions(store, "count-tools-async")] == ["scored"] * 3
    assert store.read("SELECT count(*) AS n FROM scores")[0]["n"] == 6


async def test_new_version_scores_again_and_old_version_stays(store: Any, add_traces: Any) -> None:
    [trace_id] = add_traces(1)
    await run_until_quiet(scheduler(store, counting_scorer()))
    await run_until_quiet(scheduler(store, (counting_scorer(), {"sample_rate": 0.9999})))
    rows = store.read("SELECT scorer_version FROM scores WHERE trace_id = ?", [trace_id])
    assert len({r["scorer_version"] for r in rows}) == 2


async def test_failing_scorer_spends_attempts_then_fails_and_the_loop_goes_on(
    store: Any, add_traces: Any
) -> None:
    add_traces(2)

    def boom(run: Any) -> float:
        raise ValueError("scorer bug")

    broken = create_scorer("broken", "raises").generate_score(boom)
    live = scheduler(store, broken, counting_scorer())
    await run_until_quiet(live)
    failed = decisions(store, "broken")
    assert [(d["decision"], d["attempts"]) for d in failed] == [("failed", 3)] * 2
    assert all("scorer bug" in d["last_error"] for d in failed)
    assert all(d["created_at"] < d["updated_at"] for d in failed)  # first write's time is kept
    scores = store.read("SELECT status, score, error FROM scores WHERE scorer_id = 'broken'")
    assert [(s["status"], s["score"]) for s in scores] == [("failed", None)] * 2
    assert all('"ValueError"' in s["error"] for s in scores)
    assert [d["decision"] for d in decisions(store, "count-tools")] == ["scored"] * 2


async def test_not_scorable_is_recorded(store: Any, add_traces: Any) -> None:
    add_traces(1)
    skip = (create_scorer("skip", "never scores")
            .preprocess(lambda run: not_scorable("nothing to judge"))
            .generate_score(lambda run, r: 1.0))
    await run_until_quiet(scheduler(store, skip))
    [decision] = decisions(store, "skip")
    assert decision["decision"] == "not_scorable" and "nothing to judge" in decision["last_error"]
    [score] = store.read("SELECT status, score, reason FROM scores")
    assert (score["status"], score["score"], score["reason"]) == ("not_scorable", None,
                                                                  "nothing to judge")


async def test_sampling_picks_the_same_traces_every_time(store: Any, add_traces: Any) -> None:
    ids = add_traces(24)
    await run_until_quiet(scheduler(store, (counting_scorer(), {"sample_rate": 0.5})))
    scored = {r["trace_id"] for r in store.read("SELECT trace_id FROM scores")}
    assert scored == {t for t in ids if is_sampled(t, 0.5)}
    assert 0 < len(scored) < len(ids)
    out = {d["trace_id"] for d in decisions(store) if d["decision"] == "sampled_out"}
    assert out == set(ids) - scored
    # A second scorer at the same rate picks exactly the same traces.
    await run_until_quiet(scheduler(store, (counting_scorer("other"), {"sample_rate": 0.5})))
    other = {r["trace_id"] for r in store.read("SELECT trace_id FROM scores WHERE scorer_id = "
                                                "'other'")}
    assert other == scored


async def test_filter_is_a_predicate_over_the_traces_view(store: Any, add_traces: Any) -> None:
    wanted = add_traces(2, service_name="support-bot")
    add_traces(2, service_name="other-bot")
    live = scheduler(store, (counting_scorer(), {"filter": "service_name = 'support-bot'"}))
    await run_until_quiet(live)
    assert {r["trace_id"] for r in store.read("SELECT trace_id FROM scores")} == set(wanted)
    reasons = {d["last_error"] for d in decisions(store) if d["decision"] == "filtered_out"}
    assert reasons == {"filter: service_name = 'support-bot'"}


async def test_a_bad_filter_stops_start_up(store: Any) -> None:
    live = scheduler(store, (counting_scorer(), {"filter": "no_such_column = 1"}))
    with pytest.raises(ConfigError, match="scorer 'count-tools': key 'filter'"):
        await live.prepare()


async def test_span_targets_get_one_decision_per_span(store: Any, add_traces: Any) -> None:
    [trace_id] = add_traces(1)
    seen: list[str] = []

    def record(run: Any) -> dict[str, Any]:
        seen.append(run.span_id or "")
        return {"input": run.input}

    per_tool = create_scorer("per-tool", "tool spans").preprocess(record).generate_score(
        lambda run, r: 1.0)
    await run_until_quiet(scheduler(store, (per_tool, {"target": "tool_call"})))
    tool_spans = {r["span_id"] for r in store.read(
        "SELECT span_id FROM spans WHERE trace_id = ? AND name LIKE 'execute_tool%'", [trace_id])}
    scored = {r["span_id"] for r in store.read("SELECT span_id FROM scores")}
    assert len(tool_spans) == 2 and scored == tool_spans


async def test_tracescores_own_traces_are_never_scored(store: Any, add_traces: Any) -> None:
    add_traces(1, resource_attributes={"service.name": "judge", "tracescore.internal": True})
    normal = add_traces(1)
    await run_until_quiet(scheduler(store, counting_scorer()))
    assert [r["trace_id"] for r in store.read("SELECT trace_id FROM scores")] == normal
    [own] = [d for d in decisions(store) if d["decision"] == "filtered_out"]
    assert "tracescore.internal" in own["last_error"]


async def test_the_internal_marker_on_any_span_of_a_trace_counts(store: Any) -> None:
    template = fixture_traces(AGENT_FIXTURE)[0]
    marked, unmarked, wrong_value = (clone_trace(template) for _ in range(3))
    for rows, value in ((marked, "TRUE"), (unmarked, None), (wrong_value, "no")):
        child = next(r for r in rows if r["parent_span_id"])
        attributes = child["attributes"]
        if isinstance(attributes, str):
            attributes = json.loads(attributes)
        child["attributes"] = {**attributes, **(
            {} if value is None else {"tracescore.internal": value})}
    store.write_spans_sync([*marked, *unmarked, *wrong_value])
    await run_until_quiet(scheduler(store, counting_scorer()))
    scored = {r["trace_id"] for r in store.read("SELECT trace_id FROM scores")}
    assert scored == {unmarked[0]["trace_id"], wrong_value[0]["trace_id"]}
    [own] = [d for d in decisions(store) if d["decision"] == "filtered_out"]
    assert own["trace_id"] == marked[0]["trace_id"]


async def test_traces_without_a_target_are_filtered_out(store: Any, add_traces: Any) -> None:
    add_traces(1)
    per_workflow = create_scorer("wf", "workflows").generate_score(lambda run, r: 1.0)
    await run_until_quiet(scheduler(store, (per_workflow, {"target": "workflow_run"})))
    [d] = decisions(store)
    assert (d["decision"], d["span_id"], d["last_error"]) == (
        "filtered_out", "", "no workflow_run span in the trace")


async def test_agent_scorers_skip_traces_without_an_agent(store: Any, add_traces: Any) -> None:
    [rows] = [clone_trace(fixture_traces()[0])[-1:]]  # only the root span ...
    rows[0].update(name="GET /health", attributes={"http.route": "/health"})  # not an agent
    store.write_spans_sync(rows)
    await run_until_quiet(scheduler(store, counting_scorer()))
    [d] = decisions(store)
    assert (d["decision"], d["last_error"]) == ("filtered_out", "no agent_run span in the trace")


async def test_disabled_scorers_do_not_run(store: Any, add_traces: Any) -> None:
    add_traces(1)
    live = scheduler(store, (counting_scorer(), {"enabled": False}))
    await run_until_quiet(live)
    assert store.read("SELECT count(*) AS n FROM scoring_decisions")[0]["n"] == 0
    assert live.status()[0]["state"] == "disabled"


def test_register_from_python(store: Any) -> None:
    live = LiveScheduler(store, registry=scheduler(store).registry, settings=fast_settings())
    item = live.register(counting_scorer(), target="tool_call", sample_rate=0.25)
    assert (item.id, item.target, item.sample_rate) == ("count-tools", "tool_call", 0.25)
    with pytest.raises(ConfigError, match="already registered"):
        live.register(counting_scorer())
    with pytest.raises(ConfigError, match="key 'sample_rate'"):
        live.register(counting_scorer("x"), sample_rate=2)


async def test_a_late_span_of_a_trace_decided_long_ago_decides_nothing_again(
    store: Any, add_traces: Any
) -> None:
    """The scan looks only at recent decisions; a trace decided long before that (its
    decisions older than the max_wait window) that gets a late span shows up as undecided,
    and the expansion's full check of its decisions keeps it from being scored twice."""
    [trace_id] = add_traces(1)
    live = scheduler(store, counting_scorer(), async_counting_scorer())
    await run_until_quiet(live)
    store.write_sync(lambda conn: conn.execute(
        "UPDATE scoring_decisions SET created_at = created_at - INTERVAL 1 DAY"))
    before = decisions(store)
    [late] = clone_trace(tuple(store.fetch_trace_rows(trace_id))[:1])
    store.write_spans_sync([{**late, "trace_id": trace_id, "parent_span_id": None}])
    again = scheduler(store, counting_scorer(), async_counting_scorer())
    await run_until_quiet(again)
    assert decisions(store) == before
    rows = store.read("SELECT scorer_id, count(*) AS n FROM scores GROUP BY 1 ORDER BY 1")
    assert rows == [{"scorer_id": "count-tools", "n": 1},
                    {"scorer_id": "count-tools-async", "n": 1}]
