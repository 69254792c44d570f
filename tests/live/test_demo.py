"""``tracescore demo`` end to end: traces through the OTel SDK, live scores, short ids that work."""

from __future__ import annotations

import re
from pathlib import Path

from server_process import running_server

from .test_serve import cli, write_config

SCORERS = """
[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
"""


def test_demo_prints_scores_and_its_short_ids_work(tmp_path: Path) -> None:
    config = write_config(tmp_path, SCORERS)
    with running_server(tmp_path / "demo.duckdb", args=["--config", str(config)]) as server:
        demo = cli("demo", "--url", server.url, "--traces", "2", "--timeout", "60")
        assert demo.returncode == 0, demo.stderr
        assert "sent 2 agent traces" in demo.stderr
        rows = [line for line in demo.stdout.splitlines() if "no-tool-errors" in line]
        assert len(rows) == 2
        hint = re.search(r"`tracescore trace show ([0-9a-f]{8}) --url (\S+)`", demo.stderr)
        assert hint is not None and hint.group(2) == server.url
        assert hint.group(1) in {r.split("|")[0].strip() for r in rows}  # a printed id
        shown = cli("trace", "show", hint.group(1), "--url", server.url)
        assert shown.returncode == 0, shown.stderr
        assert "agent_run" in shown.stdout
