"""Conversations (tracescore.traces._session and the store's ``sessions`` view): the captured
turn 1 and turn 2 of one conversation form one session of two turns."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracescore.model import AgentInput
from tracescore.traces import Session, SessionNotFound, load_session

from .helpers import INDEX, fixture_rows

# Captures whose turn 1 and turn 2 carry one conversation id, each from another convention.
CONVERSATIONS = [
    "py-openai-v2-genai-span",  # gen_ai.conversation.id
    "py-openinference-openai",  # session.id (OpenInference)
    "aisdk5-experimental-telemetry",  # ai.telemetry.metadata.sessionId
    "mastra-otel-exporter-protobuf",  # mastra.metadata.threadId / gen_ai.conversation.id
]


def _trace_of(folder: str, scenario: str) -> str:
    [trace] = [t for t in INDEX[folder]["traces"] if t["scenario"] == scenario]
    return str(trace["traceId"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    """A store on a temp DuckDB file."""
    from tracescore.store import Store

    with Store(tmp_path / "sessions.duckdb") as opened:
        yield opened


def _ingest(store: Any, folder: str) -> None:
    from tracescore.live import TotalsMaintainer

    store.write_spans_sync(list(fixture_rows(folder)))
    maintainer = TotalsMaintainer(store, settle_s=0.0, max_wait_s=0.0)
    while asyncio.run(maintainer.run_once()):
        pass


@pytest.mark.parametrize("folder", CONVERSATIONS)
def test_two_turns_are_one_session_row(store: Any, folder: str) -> None:
    _ingest(store, folder)
    turn1, turn2 = _trace_of(folder, "turn1"), _trace_of(folder, "turn2")
    [row] = store.read("SELECT session_id FROM traces WHERE trace_id = ?", [turn1])
    session_id = row["session_id"]
    assert session_id
    [session] = store.read("SELECT * FROM sessions WHERE session_id = ?", [session_id])
    traces = {r["trace_id"] for r in store.read(
        "SELECT trace_id FROM traces WHERE session_id = ?", [session_id])}
    assert {turn1, turn2} <= traces
    assert session["trace_count"] == len(traces)
    assert session["turn_count"] >= 2
    assert session["last_trace_id"] in traces
    assert session["first_trace_at"] < session["last_trace_at"]
    spans_tokens = store.read(
        "SELECT sum(total_tokens) AS t FROM traces WHERE session_id = ?", [session_id])[0]["t"]
    assert session["total_tokens"] == spans_tokens and spans_tokens > 0


@pytest.mark.parametrize("folder", CONVERSATIONS)
def test_turn_one_is_remembered_by_turn_two(store: Any, folder: str) -> None:
    _ingest(store, folder)
    turn1, turn2 = _trace_of(folder, "turn1"), _trace_of(folder, "turn2")
    session_id = store.read("SELECT session_id FROM traces WHERE trace_id = ?",
                            [turn1])[0]["session_id"]
    session = load_session(store, session_id)
    assert isinstance(session, Session)
    ids = [turn.trace_id for turn in session.turns]
    assert ids.index(turn1) < ids.index(turn2)
    first = session.turns[ids.index(turn1)]
    assert first.input.input_messages and first.output
    assert any(call.tool_name == "get_weather" for call in first.tool_calls)

    run = session.scorer_run("agent")
    assert isinstance(run.input, AgentInput)
    assert run.trace_id == session.last_trace_id == ids[-1]
    assert [m.content for m in run.input.input_messages] == [
        m.content for m in session.turns[-1].input.input_messages]
    remembered = [m.content for m in run.input.remembered_messages]
    for message in first.input.input_messages + first.output:
        assert message.content in remembered
    assert [m.content for m in run.output] == [
        m.content for turn in session.turns for m in turn.output]
    assert all(m.role == "assistant" for m in run.output)

    trajectory = session.trajectory()
    assert [step.step_type for step in trajectory.steps] == ["agent_run"] * len(session.turns)
    assert trajectory.steps[0].metadata == {"trace_id": ids[0],
                                            "span_id": session.turns[0].agent_span_id}
    assert trajectory.steps[ids.index(turn1)].children


def test_unknown_session_is_a_clear_error(store: Any) -> None:
    with pytest.raises(SessionNotFound, match="no trace carries session id 'nope'"):
        load_session(store, "nope")
