"""Session-level live scoring (tracescore.live._sessions): a ``target = "session"`` scorer runs
once when a conversation goes quiet, again after a new turn, never twice for one state."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from tracescore.live import LiveScheduler, Registry, TotalsMaintainer, backfill
from tracescore.scoring import create_scorer

from .conftest import fast_settings, run_until_quiet

SESSION = "conv-fixture-1"  # gen_ai.conversation.id of the capture's turns


def conversation_scorer(id: str = "turns") -> Any:  # noqa: A002
    """An agent scorer over a conversation: the score is the number of assistant messages; the
    preprocess result says what the input held."""

    def preprocess(run: Any) -> dict[str, Any]:
        return {"remembered": [m.role for m in run.input.remembered_messages],
                "input": [m.content for m in run.input.input_messages],
                "context": run.request_context}

    return (create_scorer(id, "count the turns", type="agent")
            .preprocess(preprocess)
            .generate_score(lambda run, r: float(len(run.output))))


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Clock:
    """A clock the test moves forward (the scheduler's ``_clock``)."""

    def __init__(self) -> None:
        self.now = utc_now()

    def __call__(self) -> Any:
        return self.now

    def settle(self, seconds: float = 301) -> None:
        self.now = utc_now() + timedelta(seconds=seconds)


def session_live(store: Any, clock: Clock, **options: Any) -> LiveScheduler:
    registry = Registry()
    registry.register(conversation_scorer(), target="session", **options)
    return LiveScheduler(store, registry, fast_settings(session_settle_seconds=300),
                         _clock=clock)


async def computed(store: Any) -> None:
    """Let the totals maintainer read every trace's session id."""
    totals = TotalsMaintainer(store, settle_s=0.0, max_wait_s=0.0)
    while await totals.run_once():
        pass


def session_scores(store: Any) -> list[dict[str, Any]]:
    return store.read("SELECT * FROM scores ORDER BY created_at")


async def test_scored_once_when_quiet_and_again_after_a_third_turn(
        store: Any, add_traces: Any) -> None:
    [turn1] = add_traces(1, index=0)
    [turn2] = add_traces(1, index=1)
    await computed(store)
    clock = Clock()
    live = session_live(store, clock)
    await run_until_quiet(live)
    assert session_scores(store) == []  # not quiet for session_settle_seconds yet

    clock.settle()
    await run_until_quiet(live)
    await run_until_quiet(live)
    [first] = session_scores(store)
    assert (first["session_id"], first["trace_id"], first["span_id"]) == (SESSION, turn2, None)
    assert first["status"] == "success"
    seen = json.loads(first["preprocess_step_result"])
    assert seen["remembered"][:1] == ["user"] and "assistant" in seen["remembered"]
    assert seen["context"]["conversation_id"] == SESSION
    [decision] = store.read("SELECT * FROM scoring_decisions")
    assert (decision["session_id"], decision["span_id"], decision["decision"]) == (
        SESSION, "session:2", "scored")
    [session] = store.read("SELECT * FROM sessions")
    assert session["turn_count"] == 2 and session["last_trace_id"] == turn2

    [turn3] = add_traces(1, index=1)
    await computed(store)
    clock.now = utc_now()
    await run_until_quiet(live)
    assert len(session_scores(store)) == 1  # the third turn has not gone quiet yet
    clock.settle()
    await run_until_quiet(live)
    await run_until_quiet(session_live(store, clock))  # a new scheduler: nothing twice
    scores = session_scores(store)
    assert [s["trace_id"] for s in scores] == [turn2, turn3]
    assert scores[1]["score"] > scores[0]["score"]  # more assistant messages in three turns
    assert sorted(d["span_id"] for d in store.read("SELECT span_id FROM scoring_decisions")) == [
        "session:2", "session:3"]
    assert turn1 not in {s["trace_id"] for s in scores}


async def test_sampling_hashes_the_session_id(store: Any, add_traces: Any) -> None:
    add_traces(1, index=0)
    add_traces(1, index=1)
    await computed(store)
    clock = Clock()
    clock.settle()
    live = session_live(store, clock, sample_rate=0.0)
    await run_until_quiet(live)
    assert session_scores(store) == []
    [row] = store.read("SELECT decision, session_id, last_error FROM scoring_decisions")
    assert row == {"decision": "sampled_out", "session_id": SESSION,
                   "last_error": "sample_rate 0"}


async def test_backfill_scores_quiet_sessions(store: Any, add_traces: Any) -> None:
    add_traces(1, index=0)
    [last] = add_traces(1, index=1)
    await computed(store)
    clock = Clock()
    clock.settle()
    live = session_live(store, clock)
    report = await backfill(live, "turns")
    assert report["sessions"] == 1 and report["decisions"] == {"scored": 1}
    [score] = session_scores(store)
    assert (score["source"], score["trace_id"], score["session_id"]) == (
        "backfill", last, SESSION)
    again = await backfill(live, "turns")
    assert again["sessions"] == 0
