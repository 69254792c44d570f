"""The agent's spend through a real ``tracescore serve``: totals on ``GET /api/traces``, model
calls on ``GET /api/traces/{id}``, the agent metrics on ``/metrics``, ``tracescore cost`` and
``tracescore trace show`` against the server, and a bad ``[pricing]`` entry stopping start-up."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from server_process import ServerProcess, running_server

from .helpers import post_otlp, sql

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURE = "py-openai-v2-genai-span"

CONFIG = """
[live]
enabled = false
interval_seconds = 0.2
settle_seconds = 0.3

[pricing."gpt-4o-mini-2024-07-18"]
input_cost_per_token = 1e-06
output_cost_per_token = 4e-06
"""


@pytest.fixture(scope="module")
def cost_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("agent-cost")
    config = root / "tracescore.toml"
    config.write_text(CONFIG)
    with running_server(root / "db" / "tracescore.duckdb", args=["--config", str(config)]) as s:
        body = base64.b64decode((FIXTURES / CAPTURE / "0001-traces.b64").read_text())
        assert post_otlp(s, body, project="costs").status_code == 200
        _wait_for_totals(s)
        yield s


def _wait_for_totals(server: ServerProcess, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pending = sql(server, "SELECT count(*) FROM traces WHERE totals_received_at IS NULL")
        if pending[0][0] == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"trace totals not computed in {timeout_s} s:\n{server.log()}")


def _calls(server: ServerProcess) -> list[dict[str, Any]]:
    answer = httpx.post(f"{server.url}/api/sql",
                        json={"sql": "SELECT * FROM model_calls ORDER BY started_at"}).json()
    return [dict(zip(answer["columns"], row, strict=True)) for row in answer["rows"]]


def test_traces_api_returns_totals_priced_by_the_config(cost_server: ServerProcess) -> None:
    calls = _calls(cost_server)
    assert calls and all(c["cost_source"] == "config" for c in calls)
    for call in calls:
        assert call["cost_usd"] == pytest.approx(
            call["input_tokens"] * 1e-06 + call["output_tokens"] * 4e-06)
    listed = httpx.get(f"{cost_server.url}/api/traces",
                       params={"project": "costs", "sort": "cost_usd"}).json()["traces"]
    costs = [t["cost_usd"] for t in listed]
    assert costs == sorted(costs, reverse=True)
    top = listed[0]
    mine = [c for c in calls if c["trace_id"] == top["trace_id"]]
    assert top["model_call_count"] == len(mine) == 3
    assert top["total_tokens"] == sum(c["total_tokens"] for c in mine)
    assert top["models"] == ["gpt-4o-mini-2024-07-18"]
    cheap = min(costs)
    above = httpx.get(f"{cost_server.url}/api/traces",
                      params={"project": "costs", "min_cost_usd": cheap}).json()["traces"]
    assert cheap not in [t["cost_usd"] for t in above] and len(above) == len(listed) - 1
    bad = httpx.get(f"{cost_server.url}/api/traces", params={"sort": "name; drop"})
    assert bad.status_code == 400

    detail = httpx.get(f"{cost_server.url}/api/traces/{top['trace_id']}").json()
    assert [c["span_id"] for c in detail["model_calls"]] == [c["span_id"] for c in mine]
    assert detail["trace"]["cost_usd"] == pytest.approx(top["cost_usd"])


def test_metrics_count_the_agent_tokens_cost_and_durations(cost_server: ServerProcess) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{cost_server.url}/metrics").text
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]

    def total(name: str, **labels: str) -> float:
        return sum(s.value for s in samples if s.name == name
                   and all(s.labels.get(k) == v for k, v in labels.items()))

    calls = _calls(cost_server)
    model = "gpt-4o-mini-2024-07-18"
    assert total("tracescore_agent_tokens_total", project="costs", model=model,
                 kind="input") == sum(c["input_tokens"] for c in calls)
    assert total("tracescore_agent_tokens_total", kind="output") == sum(
        c["output_tokens"] for c in calls)
    assert total("tracescore_agent_cost_usd_total", model=model) == pytest.approx(
        sum(c["cost_usd"] for c in calls))
    assert total("tracescore_model_call_duration_seconds_count", model=model) == len(calls)
    assert total("tracescore_model_call_duration_seconds_sum", model=model) == pytest.approx(
        sum(c["duration_ms"] for c in calls) / 1000)
    pending = [s for s in samples if s.name == "tracescore_agent_traces_pending"]
    assert [s.value for s in pending] == [0.0]  # every trace computed: no backlog


def test_cost_command_groups_by_model_and_day(cost_server: ServerProcess) -> None:
    from tracescore.cli import main

    calls = _calls(cost_server)
    runner = CliRunner()
    result = runner.invoke(main, ["cost", "--url", cost_server.url, "--since", "3650d",
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["model"] == "gpt-4o-mini-2024-07-18"
    assert row["calls"] == len(calls)
    assert row["input_tokens"] == sum(c["input_tokens"] for c in calls)
    assert row["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls), abs=1e-6)

    by_day = runner.invoke(main, ["cost", "--url", cost_server.url, "--since", "3650d",
                                  "--by", "day"])
    assert by_day.exit_code == 0, by_day.output
    assert f"total: {len(calls)} model calls" in by_day.output
    none = runner.invoke(main, ["cost", "--url", cost_server.url, "--since", "1s",
                                "--format", "json"])
    assert none.exit_code == 0 and json.loads(none.output) == []
    wrong = runner.invoke(main, ["cost", "--url", cost_server.url, "--since", "soon"])
    assert wrong.exit_code == 2 and "--since" in wrong.output


def test_trace_show_prints_each_call_and_the_total(cost_server: ServerProcess) -> None:
    from tracescore.cli import main

    calls = _calls(cost_server)
    trace_id = max({c["trace_id"] for c in calls},
                   key=lambda t: sum(1 for c in calls if c["trace_id"] == t))
    mine = [c for c in calls if c["trace_id"] == trace_id]
    result = CliRunner().invoke(main, ["trace", "show", trace_id, "--url", cost_server.url])
    assert result.exit_code == 0, result.output
    for call in mine:
        line = next(ln for ln in result.output.splitlines() if call["span_id"] in ln
                    and "in " in ln)
        assert f"in {call['input_tokens']}" in line and f"out {call['output_tokens']}" in line
    total_in = sum(c["input_tokens"] for c in mine)
    assert f"total: {len(mine)} model calls, {total_in} input" in result.output


def test_a_bad_pricing_entry_stops_start_up(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[pricing."m"]\ninput_cost_per_token = 1e-6\n')
    result = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--db", str(tmp_path / "x.duckdb"),
         "--config", str(config), "--http-port", "0", "--grpc-port", "0"],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )
    assert result.returncode != 0
    assert '[pricing."m"]' in result.stderr and "output_cost_per_token" in result.stderr
