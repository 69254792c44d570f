"""Issue 16's "done when", in real processes: a two-turn conversation sent by the OpenTelemetry
SDK is one ``sessions`` row, a session scorer scores it once when it goes quiet (and not again
across a ``kill -9`` restart, but again after a third turn), and a monitor on a dropping scorer
POSTs to a loopback webhook receiver and flips ``tracescore_monitor_state`` on ``/metrics``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from server_process import ServerProcess, start_server

from tracescore.cli import main
from tracescore.live import send_agent_traces

from .test_monitors import Receiver
from .test_serve import sql

SCORERS_PY = '''
from tracescore import create_scorer


def _remembered(run, results):
    return float(len(run.input.remembered_messages))


conversation = create_scorer("conversation", "earlier turns seen", type="agent").generate_score(
    _remembered)


def _first_cities(run, results):
    text = " ".join(m.content for m in run.input.input_messages)
    return 1.0 if ("Paris" in text or "Lisbon" in text) else 0.0


cities = create_scorer("cities", "asked about Paris or Lisbon", type="agent").generate_score(
    _first_cities)
'''

CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.3
max_wait_seconds = 30
session_settle_seconds = 2
allow_private_webhooks = true

[[scorers]]
id = "conversation"
use = "sessionscorers.py:conversation"
target = "session"

[[scorers]]
id = "cities"
use = "sessionscorers.py:cities"

[[monitors]]
id = "cities-drop"
scorer = "cities"
aggregate = "avg"
window = "1h"
op = "lt"
threshold = 0.5
min_samples = 2
evaluate_every = "1s"
notify = ["{url}/hook"]
"""


def wait_for(what: str, check: Any, server: ServerProcess, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in {timeout_s} s\n{server.log()[-3000:]}")
        time.sleep(0.1)


def metric(server: ServerProcess, line_start: str) -> float | None:
    with server.client() as client:
        text = client.get("/metrics").text
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return None


def session_scores(server: ServerProcess) -> list[list[Any]]:
    return sql(server, "SELECT trace_id, span_id, session_id, score FROM scores "
                       "WHERE scorer_id = 'conversation' ORDER BY created_at")


def test_conversation_session_score_and_monitor(tmp_path: Path) -> None:
    receiver = Receiver()
    (tmp_path / "sessionscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(url=receiver.url))
    server = start_server(tmp_path / "sessions.duckdb", args=["--config", str(config)])
    try:
        state = 'tracescore_monitor_state{monitor="cities-drop"}'
        assert metric(server, state) == 0.0  # exported from the first scrape
        turns = send_agent_traces(server.url, count=2, conversation_id="conv-e2e")
        wait_for("one scored session", lambda: len(session_scores(server)) == 1, server)
        [[session_id, trace_count, last_trace]] = sql(
            server, "SELECT session_id, trace_count, last_trace_id FROM sessions")
        assert (session_id, trace_count, last_trace) == ("conv-e2e", 2, turns[1])
        [[trace_id, span_id, scored_session, score]] = session_scores(server)
        assert (trace_id, span_id, scored_session) == (turns[1], None, "conv-e2e")
        assert score >= 2  # turn 1's question and answer are remembered by turn 2

        server.kill()  # kill -9: the scored state must not be scored again
        server.start()
        time.sleep(3)  # longer than session_settle_seconds, several ticks
        assert len(session_scores(server)) == 1

        [third] = send_agent_traces(server.url, count=1, start=2, conversation_id="conv-e2e")
        wait_for("the third turn scored", lambda: len(session_scores(server)) == 2, server)
        assert session_scores(server)[1][0] == third
        assert sql(server, "SELECT count(*) FROM scoring_decisions "
                           "WHERE scorer_id = 'conversation'") == [[2]]

        assert metric(server, state) == 0.0
        send_agent_traces(server.url, count=4, start=3)  # cities the scorer gives 0
        wait_for("the monitor breached", lambda: metric(server, state) == 1.0, server)
        wait_for("the webhook POST", lambda: bool(receiver.posts), server)
        [(path, payload)] = receiver.posts
        assert path == "/hook" and payload["state"] == "breached"
        assert payload["monitor_id"] == "cities-drop" and payload["value"] < 0.5
        wait_for("the notification recorded", lambda: sql(
            server, "SELECT count(*) FROM monitor_events WHERE notified_at IS NOT NULL")
            == [[1]], server)
        value = metric(server, 'tracescore_monitor_value{monitor="cities-drop"}')
        assert value is not None and value < 0.5
        with server.client() as client:
            [listed] = client.get("/api/live/monitors").json()["monitors"]
        assert listed["state"] == "breached" and listed["last_event"]["state"] == "breached"
        server.stop()
        shown = CliRunner().invoke(main, ["monitors", "--db", str(server.db), "--config",
                                          str(config)])
        assert shown.exit_code == 0, shown.output
        [row] = [line for line in shown.output.splitlines() if line.startswith("cities-drop")]
        assert "breached" in row and "avg over 1h lt 0.5" in row
    finally:
        server.stop()
        receiver.close()
