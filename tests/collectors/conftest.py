"""Fixtures for the collector examples: one real ``tracescore serve`` with live scoring and an
API key, SQL over its HTTP API, and a helper that runs an example as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import running_server

REPO = Path(__file__).resolve().parents[2]
COLLECTORS = REPO / "collectors"
API_KEY = "collectors-test-key"
SCORER_ID = "called-get-weather"

# Live scoring with a code check (no judge): fast ticks, a short quiet period.
CONFIG = f"""
[live]
interval_seconds = 0.2
settle_seconds = 0.5

[[scorers]]
id = "{SCORER_ID}"
use = "tracescore.scorers.checks:called_tool"
args = {{ tool_name = "get_weather" }}
"""


@dataclass
class Tracescore:
    """A running server: where to send, and SQL to look."""

    http_url: str
    grpc_url: str
    api_key: str

    def sql(self, query: str, *params: Any) -> list[dict[str, Any]]:
        """Rows of a read query as dicts, through POST /api/sql."""
        response = httpx.post(f"{self.http_url}/api/sql",
                              json={"sql": query, "params": list(params)},
                              headers={"authorization": f"Bearer {self.api_key}"}, timeout=30)
        assert response.status_code == 200, response.text
        body = response.json()
        return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]

    def wait_for_rows(self, query: str, *params: Any, count: int = 1,
                      timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """Poll a query until it returns at least ``count`` rows (or give back what it has)."""
        deadline = time.monotonic() + timeout_s
        while True:
            rows = self.sql(query, *params)
            if len(rows) >= count or time.monotonic() > deadline:
                return rows
            time.sleep(0.2)

    def has_table(self, name: str) -> bool:
        """Whether the database has this table or view (``scores`` once live scoring exists)."""
        rows = self.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_name = ?", name)
        return bool(rows)


@pytest.fixture(scope="package")
def tracescore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracescore]:
    """``tracescore serve`` on loopback ports, API key on, live scoring every 0.2 s."""
    work = tmp_path_factory.mktemp("tracescore")
    config = work / "tracescore.toml"
    config.write_text(CONFIG)
    with running_server(work / "traces.duckdb", args=["--config", str(config)],
                        api_key=API_KEY) as server:
        yield Tracescore(http_url=server.url, grpc_url=f"http://{server.grpc_target}",
                         api_key=API_KEY)


@dataclass
class Run:
    """What an example printed, and its trace id when it printed one."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def trace_id(self) -> str:
        """The ``trace_id=<hex>`` line the examples print last."""
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("trace_id="):
                return line.removeprefix("trace_id=").strip()
        raise AssertionError(f"no trace_id line in the output:\n{self.stdout}\n{self.stderr}")


def run_example(script: str, *args: str, env: dict[str, str] | None = None,
                timeout_s: float = 120) -> Run:
    """Run ``collectors/python/<script>`` with the venv's Python and a clean OTLP environment."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("OTEL_", "OPENAI_", "TRACESCORE_"))}
    proc = subprocess.run([sys.executable, str(COLLECTORS / "python" / script), *args],
                          env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout_s, cwd=COLLECTORS / "python")
    return Run(proc.returncode, proc.stdout, proc.stderr)
