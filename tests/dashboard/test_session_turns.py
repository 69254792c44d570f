"""Issue 27, item 11: a long conversation against a real ``tracescore serve``. One request
answers a page of a session's turns, newest first, with how many there are; the session page
shows every turn of a 600-turn conversation (it used to stop at 500 without a word, after one
request per turn). The figure for 1,500 turns is printed by ``tests/bench/bench_session_page.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, running_server, sql

from tracescore.live import send_agent_traces

from .conftest import open_dashboard

TURNS = 600
CONFIG = """
[live]
enabled = false
settle_seconds = 0.2
max_wait_seconds = 5
"""


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server holding one conversation of 600 turns (and one other short one)."""
    folder = tmp_path_factory.mktemp("long-session")
    config = folder / "tracescore.toml"
    config.write_text(CONFIG)
    with running_server(folder / "long.duckdb", args=["--config", str(config)]) as server:
        for start in range(0, TURNS, 50):  # the SDK's span queue holds about 50 turns
            send_agent_traces(server.url, count=50, start=start, conversation_id="conv-long")
        send_agent_traces(server.url, count=2, conversation_id="conv-short", start=TURNS)
        deadline = time.monotonic() + 120
        while sql(server, "SELECT count(*) FROM traces WHERE session_id = 'conv-long'") != [
                [TURNS]]:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.3)
        yield server


def turns(server: ServerProcess, session: str, **query: Any) -> httpx.Response:
    return httpx.get(f"{server.url}/api/sessions/{session}/turns", params=query, timeout=60)


def test_one_request_answers_a_page_of_turns_newest_first(long_session: ServerProcess) -> None:
    first = turns(long_session, "conv-long", limit=500)
    assert first.status_code == 200, first.text
    page = first.json()
    assert (page["total"], page["limit"], page["offset"]) == (TURNS, 500, 0)
    assert [t["turn"] for t in page["turns"]] == list(range(TURNS, TURNS - 500, -1))
    ordered = sql(long_session, "SELECT trace_id FROM traces WHERE session_id = 'conv-long' "
                                "ORDER BY start_time DESC, first_received_at DESC, trace_id DESC")
    assert [t["trace_id"] for t in page["turns"]] == [r[0] for r in ordered[:500]]
    newest = page["turns"][0]
    assert newest["error"] is None and newest["output"], newest
    assert newest["input"][0]["role"] == "user" and newest["input"][0]["content"]
    assert newest["output"][-1]["role"] == "assistant"

    rest = turns(long_session, "conv-long", limit=500, offset=500).json()
    assert [t["turn"] for t in rest["turns"]] == list(range(100, 0, -1))
    assert {t["trace_id"] for t in rest["turns"]} | {t["trace_id"] for t in page["turns"]} == {
        r[0] for r in ordered}

    assert turns(long_session, "conv-short").json()["total"] == 2
    missing = turns(long_session, "no-such-session")
    assert missing.status_code == 404
    assert "no trace carries session id 'no-such-session'" in missing.json()["error"]["message"]
    assert sql(long_session, "SELECT count(*) FROM session_turns WHERE session_id = "
                             "'conv-long'") == [[TURNS]]  # stored by the totals maintainer
    too_many = turns(long_session, "conv-long", limit=501)
    assert too_many.status_code == 400 and "error" in too_many.json()


@pytest.mark.browser
def test_the_session_page_shows_every_turn(chromium: Any, long_session: ServerProcess) -> None:
    from playwright.sync_api import expect

    dash = open_dashboard(chromium, long_session)
    try:
        requests: list[str] = []
        dash.page.on("request", lambda r: requests.append(r.url))
        page = dash.open("sessions/conv-long")
        chat = page.locator(".session-chat")
        expect(chat.locator(".turn")).to_have_count(TURNS)
        expect(page.locator(".turn-count")).to_have_text(f"{TURNS} turns, newest first")
        expect(chat.locator(".turn").first).to_contain_text(f"Turn {TURNS}")
        expect(chat.locator(".turn").last).to_contain_text("Turn 1")
        expect(chat.locator(".turn").last).to_contain_text("What is the weather in")
        turn_requests = [u for u in requests if "/turns?" in u]
        assert len(turn_requests) == 2  # two pages of 500, not one request per turn
        assert not [u for u in requests if "/scorer-input" in u]
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()
