"""``tracescore scorers`` says why nothing happens (retrying, last error, paused reason), and
``--config`` goes with ``--url`` for ``scorers`` and ``backfill``."""

from __future__ import annotations

import json
import time
from pathlib import Path

from server_process import running_server

from tracescore.live import send_agent_traces

from .test_serve import cli, sql, write_config

SCORERS = """
[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
[[scorers]]
id = "broken"
use = "myscorers.py:broken"
"""


def test_scorers_shows_retrying_and_the_last_error_and_compares_a_config(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, SCORERS)
    config.write_text(config.read_text().replace("max_attempts = 2", "max_attempts = 3")
                      .replace("retry_base_seconds = 0", "retry_base_seconds = 3600"))
    with running_server(tmp_path / "db.duckdb", args=["--config", str(config)]) as server:
        send_agent_traces(server.url, count=2)
        deadline = time.monotonic() + 60
        query = ("SELECT count(*) FROM scoring_decisions WHERE scorer_id = 'broken' "
                 "AND decision = 'retrying'")
        while sql(server, query) != [[2]]:
            assert time.monotonic() < deadline, sql(server, "SELECT * FROM scoring_decisions")
            time.sleep(0.2)

        table = cli("scorers", "--url", server.url)
        assert table.returncode == 0, table.stderr
        header, _, *lines = table.stdout.splitlines()
        columns = [c.strip() for c in header.split("|")]
        assert {"retrying", "last_error", "pending"} <= set(columns)
        [broken] = [dict(zip(columns, (v.strip() for v in line.split("|")), strict=False))
                    for line in lines if line.startswith("broken ")]
        assert broken["retrying"] == "2" and broken["state"] == "running"
        assert broken["last_error"].startswith("attempt 1 of 3 failed")
        assert len(broken["last_error"]) <= 60

        as_json = cli("scorers", "--url", server.url, "--format", "json")
        rows = {row["id"]: row for row in json.loads(as_json.stdout)}
        assert rows["broken"]["retrying"] == 2
        assert "this scorer always fails" in rows["broken"]["last_error"]
        assert rows["broken"]["last_error_at"].endswith("Z")
        assert rows["no-tool-errors"]["retrying"] == 0
        assert rows["no-tool-errors"]["last_error"] is None

        # --config with --url: the file names the scorers; differences are spelled out.
        other = tmp_path / "other.toml"
        other.write_text(SCORERS.replace('id = "no-tool-errors"', 'id = "extra"'))
        compared = cli("scorers", "--url", server.url, "--config", str(other), cwd=tmp_path)
        assert compared.returncode == 0, compared.stderr
        assert "registry differs from the config file" in compared.stdout
        assert f"extra: in {other} but not on the server" in compared.stdout
        assert f"no-tool-errors: on the server but not in {other}" in compared.stdout
        assert "broken:" not in compared.stdout.split("differs")[1]  # same version

        refused = cli("backfill", "--scorer", "extra", "--url", server.url, "--config",
                      str(other), cwd=tmp_path)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert f"'extra' is in {other} but the server at {server.url} does not have it" in (
            refused.stderr)
        same = cli("backfill", "--scorer", "no-tool-errors", "--dry-run", "--url", server.url,
                   "--config", str(config), cwd=tmp_path)
        assert same.returncode == 0, same.stderr
        assert "dry run: nothing was scored" in same.stdout
