"""Item errors are recorded and the other items still run; fail_fast raises; on_item_complete;
concurrency keeps every result attached to its own item."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from evals_helpers import MemoryAgent, fixed

from tracescore.evals import AgentResponse, run_evals
from tracescore.model import get_user_message
from tracescore.scoring import ScorerRunError, create_scorer


def flaky(text: str) -> str:
    if text == "boom":
        raise RuntimeError("the model provider is down")
    return f"ok {text}"


def _echo_input(scorer_id: str = "echo-input") -> Any:
    """Scores 1.0 when the output mentions the item's own input (catches mixed-up items)."""
    return create_scorer(scorer_id, "x").generate_score(
        lambda run, results: 1.0
        if get_user_message(run.input) in run.output[-1].content else 0.0
    )


async def test_a_failing_target_is_recorded_and_the_other_items_still_run() -> None:
    result = await run_evals(flaky, [{"input": "a"}, {"input": "boom"}, {"input": "c"}],
                             scorers=[_echo_input()])
    assert result.summary.total_items == 3
    assert result.summary.errors == 1
    assert result.scores == {"echo-input": 1.0}  # the errored item is left out
    bad = result.items[1]
    assert bad.error is not None and "the model provider is down" in bad.error
    assert "RuntimeError" in bad.error
    assert bad.error_phase == "target" and bad.status == "failed"
    assert bad.scorer_results == {}
    assert [i.error for i in (result.items[0], result.items[2])] == [None, None]
    assert result.verdict is None  # nothing configured that a verdict could come from


async def test_an_error_fails_the_verdict_when_gates_or_thresholds_are_set() -> None:
    result = await run_evals(
        flaky, [{"input": "a"}, {"input": "boom"}],
        scorers=[{"scorer": fixed("q", 0.9), "threshold": 0.5}],
    )
    assert result.threshold_results is not None and result.threshold_results[0].passed
    assert result.verdict == "failed"


async def test_fail_fast_raises_the_first_error() -> None:
    with pytest.raises(RuntimeError, match="the model provider is down") as info:
        await run_evals(flaky, [{"input": "a"}, {"input": "boom"}, {"input": "c"}],
                        scorers=[fixed("f", 1.0)], fail_fast=True)
    assert any("data item 1" in note for note in getattr(info.value, "__notes__", []))


async def test_a_failing_scorer_is_recorded_and_other_scorers_still_count() -> None:
    def picky(run: Any, results: Any) -> float:
        if get_user_message(run.input) == "b":
            raise ValueError("cannot score b")
        return 0.5

    broken = create_scorer("picky", "x").generate_score(picky)
    result = await run_evals(flaky, [{"input": "a"}, {"input": "b"}],
                             scorers=[broken, fixed("steady", 1.0)])
    assert result.summary.errors == 1
    assert result.scores == {"picky": 0.5, "steady": 1.0}
    item = result.items[1]
    assert item.error_phase == "scoring"
    assert item.error is not None and "picky" in item.error and "cannot score b" in item.error
    assert "picky" not in item.scorer_results and item.scorer_results["steady"].score == 1.0


async def test_fail_fast_raises_scorer_errors_too() -> None:
    broken = create_scorer("broken", "x").generate_score(
        lambda run, results: 1 / 0)
    with pytest.raises(ScorerRunError) as info:
        await run_evals(flaky, [{"input": "a"}], scorers=[broken], fail_fast=True)
    assert isinstance(info.value.cause, ZeroDivisionError)


async def test_multi_turn_target_failure_keeps_earlier_turn_results() -> None:
    calls: list[str] = []

    def agent(text: str) -> str:
        calls.append(text)
        if text == "second":
            raise ConnectionError("lost the connection")
        return f"ok {text}"

    result = await run_evals(agent, [{"turns": [
        {"input": "first", "scorers": [fixed("t0", 1.0)]},
        {"input": "second", "scorers": [fixed("t1", 1.0)]},
        {"input": "third"},
    ]}], scorers=[fixed("whole", 1.0)])
    assert calls == ["first", "second"]
    item = result.items[0]
    assert item.error is not None and "turn 1" in item.error and item.error_phase == "target"
    assert result.turn_results is not None
    assert result.turn_results[0].scores == {"t0": 1.0}
    assert result.scores == {}


async def test_on_item_complete_gets_each_item_sync_or_async() -> None:
    seen: list[tuple[Any, Any, Any]] = []

    async def on_done(item: Any, target_result: Any, scorer_results: Any) -> None:
        await asyncio.sleep(0)
        seen.append((item, target_result, scorer_results))

    data = [{"input": "a", "ground_truth": 1}, {"input": "boom"}]
    await run_evals(flaky, data, scorers=[fixed("f", 0.5)], on_item_complete=on_done)
    assert [s[0] for s in seen] == data  # the items exactly as given
    assert isinstance(seen[0][1], AgentResponse) and seen[0][1].text == "ok a"
    assert seen[0][2]["f"].score == 0.5
    assert seen[1][1] is None and seen[1][2] == {}  # the errored item is reported too


async def test_a_failing_on_item_complete_is_recorded_on_the_item() -> None:
    def on_done(item: Any, target_result: Any, scorer_results: Any) -> None:
        if item["input"] == "b":
            raise KeyError("missing column")

    result = await run_evals(flaky, [{"input": "a"}, {"input": "b"}], scorers=[fixed("f", 1.0)],
                             on_item_complete=on_done)
    assert result.summary.errors == 1
    assert result.items[1].error_phase == "completion"
    assert result.scores == {"f": 1.0}


async def test_concurrency_runs_items_together_and_keeps_them_in_order() -> None:
    in_flight = 0
    peak = 0

    async def agent(text: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        # Later items finish first: completion order is the reverse of data order.
        await asyncio.sleep(0.002 * (20 - int(text.split("-")[1])))
        in_flight -= 1
        return f"answer to {text}"

    data = [{"input": f"q-{i}"} for i in range(12)]
    result = await run_evals(agent, data, scorers=[_echo_input()], concurrency=4)
    assert 1 < peak <= 4
    assert [i.input for i in result.items] == [d["input"] for d in data]
    assert [i.output[-1].content for i in result.items] == [f"answer to q-{i}" for i in range(12)]
    assert result.scores == {"echo-input": 1.0}


async def test_sync_targets_run_in_threads_when_concurrent() -> None:
    agent = MemoryAgent()
    threads: set[int] = set()
    original = agent.generate

    def generate(input: Any, **kwargs: Any) -> AgentResponse:
        threads.add(threading.get_ident())
        return original(input, **kwargs)

    agent.generate = generate  # type: ignore[method-assign]
    data = [{"inputs": [f"My name is N{i}", "What is my name?"]} for i in range(6)]
    result = await run_evals(agent, data, scorers=[fixed("f", 1.0)], concurrency=3)
    assert threading.get_ident() not in threads
    assert [i.output[-1].content for i in result.items] == [
        f"Your name is N{i}." for i in range(6)]


async def test_fail_fast_with_concurrency_raises_and_stops_the_rest() -> None:
    started: list[str] = []

    async def agent(text: str) -> str:
        started.append(text)
        if text == "q-1":
            raise LookupError("no such city")
        await asyncio.sleep(0.01)
        return text

    data = [{"input": f"q-{i}"} for i in range(30)]
    with pytest.raises(LookupError, match="no such city"):
        await run_evals(agent, data, scorers=[fixed("f", 1.0)], concurrency=3, fail_fast=True)
    assert len(started) < 30


async def test_progress_bar_is_drawn_on_stderr_when_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    await run_evals(flaky, [{"input": "a"}, {"input": "boom"}, {"input": "c"}],
                    scorers=[fixed("f", 1.0)], progress=True)
    err = capsys.readouterr().err
    assert "run_evals [" in err and "3/3 items, 1 error" in err
    await run_evals(flaky, [{"input": "a"}], scorers=[fixed("f", 1.0)])
    assert capsys.readouterr().err == ""  # captured stderr is not a terminal
