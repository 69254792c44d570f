"""Issue 27, item 12: ``tracescore backfill`` of a ``target = "session"`` scorer against a real
server (live scoring off, so the conversation waits for the backfill) prints its report instead
of ending in ``KeyError: 'traces'``."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner
from server_process import running_server, sql

from tracescore.cli import main
from tracescore.live import send_agent_traces

SCORERS_PY = '''
from tracescore import create_scorer

turns = create_scorer("turns", "turns seen", type="agent").generate_score(
    lambda run, results: float(len(run.input.remembered_messages)))
'''

CONFIG = """
[live]
enabled = false
settle_seconds = 0.3
max_wait_seconds = 30
session_settle_seconds = 1

[[scorers]]
id = "turns"
use = "backfillscorers.py:turns"
target = "session"
"""


def test_backfill_of_a_session_scorer_prints_its_report(tmp_path: Path) -> None:
    (tmp_path / "backfillscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG)
    with running_server(tmp_path / "backfill.duckdb", args=["--config", str(config)]) as server:
        send_agent_traces(server.url, count=2, conversation_id="conv-backfill")
        deadline = time.monotonic() + 60
        while sql(server, "SELECT count(*) FROM sessions") != [[1]]:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        time.sleep(1.2)  # the session goes quiet (session_settle_seconds)
        runner = CliRunner()
        planned = runner.invoke(main, ["backfill", "--scorer", "turns", "--dry-run",
                                       "--url", server.url])
        assert planned.exit_code == 0, planned.output
        assert "1 quiet session state(s) not yet decided by turns" in planned.output
        assert "1 pair(s) to score" in planned.output
        assert "dry run: nothing was scored" in planned.output

        done = runner.invoke(main, ["backfill", "--scorer", "turns", "--url", server.url])
        assert done.exit_code == 0, done.output
        assert "1 quiet session state(s) not yet decided by turns" in done.output
        assert "scored: 1" in done.output
        [[source, session_id, score]] = sql(
            server, "SELECT source, session_id, score FROM scores WHERE scorer_id = 'turns'")
        assert (source, session_id) == ("backfill", "conv-backfill") and score >= 2
