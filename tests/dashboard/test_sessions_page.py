"""The Sessions pages and the monitor panels in headless Chromium, against a real server that
scored a two-turn conversation (sent by the OpenTelemetry SDK) with a session scorer and runs a
monitor on a per-trace scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from live.test_monitors import Receiver
from live.test_sessions_serve import CONFIG, SCORERS_PY, session_scores, sql, wait_for
from server_process import start_server

from tracescore.live import send_agent_traces

from .conftest import open_dashboard

pytestmark = pytest.mark.browser


def test_sessions_list_session_chat_and_monitor_states(chromium: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    receiver = Receiver()
    (tmp_path / "sessionscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(url=receiver.url))
    server = start_server(tmp_path / "dash-sessions.duckdb", args=["--config", str(config)])
    dash = open_dashboard(chromium, server)
    try:
        turns = send_agent_traces(server.url, count=2, conversation_id="conv-dash")
        wait_for("the session scored", lambda: len(session_scores(server)) == 1, server)
        wait_for("both turns scored by cities", lambda: sql(
            server, "SELECT count(*) FROM scores WHERE scorer_id = 'cities'") == [[2]], server)

        page = dash.open("sessions")
        row = page.locator("tr", has_text="conv-dash")
        expect(row).to_contain_text("conversation (session)")
        expect(row).to_contain_text("cities")
        expect(row.locator("td").nth(2)).to_have_text("2")  # turns
        dash.shot("sessions")

        row.locator("a", has_text="conv-dash").click()
        page.wait_for_selector(".session-chat .turn")
        chat = page.locator(".session-chat")
        expect(chat.locator(".turn")).to_have_count(2)
        expect(page.locator(".turn-count")).to_have_text("2 turns, newest first")
        second, first = chat.locator(".turn").nth(0), chat.locator(".turn").nth(1)
        expect(first).to_contain_text("Turn 1")
        expect(first).to_contain_text("What is the weather in Paris")
        expect(second).to_contain_text("Turn 2")
        expect(second).to_contain_text("What is the weather in Lisbon")
        expect(first.locator(f"a[href='#/traces/{turns[0]}']")).to_have_count(1)
        expect(first.locator(".turn-scores")).to_contain_text("cities")
        scores = page.locator("section.panel", has_text="Session scores")
        expect(scores).to_contain_text("conversation")
        dash.shot("session")

        page = dash.open("overview")
        monitors = page.locator("section.monitors")
        expect(monitors).to_contain_text("cities-drop")
        expect(monitors).to_contain_text("ok")
        page = dash.open("scorers/cities")
        expect(page.locator("section.monitors")).to_contain_text("avg of cities over 1h lt 0.5")
        page = dash.open("scorers")
        expect(page.locator("section.monitors")).to_contain_text("cities-drop")
        assert dash.unexpected_errors() == []
    finally:
        dash.page.context.close()
        server.stop()
        receiver.close()
