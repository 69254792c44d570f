"""Running judges without surprises in a real ``tracescore serve``: the judge-call cache, a hung
judge and its timeout, an unpriced judge, sample segments; what ``tracescore scorers`` and
``/metrics`` show of them; and a USD budget over an unpriced judge that refuses to start.

Agent runs go through the real OpenTelemetry SDK exporter; the judge is the scripted server of
this test process, which answers each scorer by the marker its prompt starts with.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from server_process import running_server, sql

from tracescore.live import send_agent_traces
from tracescore.testing import Reply

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep


def judge(api_base, marker, model="openai/gpt-4o-mini", temperature=0.0):
    judge = Judge(model=model, instructions="Grade the answer.", api_base=api_base,
                  model_settings={"temperature": temperature})
    return create_scorer(marker, "a scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: marker + ": " + run.output[-1].content))
'''

CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.5
max_wait_seconds = 30
retry_base_seconds = 0
transient_retry_deadline_seconds = 1

[live.budget]
max_judge_cost_usd_per_hour = {usd}
max_judge_cost_usd_per_day = {usd}
max_judge_tokens_per_hour = 1000000

[[scorers]]
id = "cached"
use = "myscorers.py:judge"
args = {{ api_base = "{url}", marker = "cached" }}

[[scorers]]
id = "hung"
use = "myscorers.py:judge"
args = {{ api_base = "{url}", marker = "hung" }}
judge_timeout_seconds = 0.5
judge_cache = false

[[scorers]]
id = "unpriced"
use = "myscorers.py:judge"
args = {{ api_base = "{url}", marker = "unpriced", model = "openai/scripted", temperature = 1.0 }}

[[scorers]]
id = "segmented"
use = "tracescore.scorers.checks:no_tool_errors"
sample = [{{ where = "service_name = 'noisy-agent'", rate = 0.0 }}]
"""


def answer(body: dict[str, Any]) -> Reply:
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("hung"):
        return Reply(content={"score": 1}, delay_s=3.0)
    return Reply(content={"score": 0.75}, prompt_tokens=100, completion_tokens=10)


def write(tmp_path: Path, url: str, *, usd: float) -> Path:
    (tmp_path / "myscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(url=url, usd=usd))
    return config


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracescore.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_cache_timeout_prices_and_segments_in_a_real_server(tmp_path: Path,
                                                            llm_server: Any) -> None:
    llm_server.set_default(answer)
    config = write(tmp_path, llm_server.url, usd=0)
    with running_server(tmp_path / "judges.duckdb", args=["--config", str(config),
                                                         "--no-grpc"]) as server:
        first = send_agent_traces(server.url, count=2)
        second = send_agent_traces(server.url, count=2)  # the same runs again: same prompts
        noisy = send_agent_traces(server.url, count=2, service_name="noisy-agent", start=5)
        deadline = time.monotonic() + 90
        query = ("SELECT count(*) FILTER (WHERE decision IN ('pending', 'retrying')), count(*) "
                 "FROM scoring_decisions")
        while time.monotonic() < deadline:
            [[still_open, decided]] = sql(server, query)
            if still_open == 0 and decided == 6 * 4:
                break
            time.sleep(0.3)
        cached = sql(server, "SELECT e.cached, e.saved_cost > 0 FROM judge_executions e "
                             "WHERE e.scorer_id = 'cached' ORDER BY e.created_at")
        hung = sql(server, "SELECT decision, last_error FROM scoring_decisions "
                           "WHERE scorer_id = 'hung'")
        unpriced = sql(server, "SELECT judge_cost, cost_source, judge_total_tokens FROM scores "
                               "WHERE scorer_id = 'unpriced'")
        segmented = dict(sql(server, "SELECT trace_id, decision FROM scoring_decisions "
                                     "WHERE scorer_id = 'segmented'"))
        metrics = server.client().get("/metrics").text
        table = cli("scorers", "--url", server.url)
        as_json = server.client().get("/api/live/scorers").json()["scorers"]
    calls_by_marker = [r["messages"][-1]["content"].split(":")[0] for r in llm_server.requests]
    # The cache: the same question asked once per distinct run (four runs, two sent twice),
    # even when both pairs of a run are scored at the same moment.
    assert calls_by_marker.count("cached") == 4
    assert sorted(c for c, _ in cached) == [False] * 4 + [True] * 2
    assert all(saved for c, saved in cached if c)
    assert 'tracescore_judge_cache_hits_total{scorer_id="cached"} 2.0' in metrics
    assert 'tracescore_judge_calls_in_flight{scorer_id="hung"}' in metrics
    # The hung judge: each attempt failed at the scorer's timeout, the pair ends failed.
    assert {d for d, _ in hung} == {"failed"}
    assert all("judge_timeout_seconds = 0.5" in error for _, error in hung)
    # The unpriced judge: NULL cost, never $0; tokens counted.
    assert unpriced and all(c is None and s == "unpriced" and t == 110 for c, s, t in unpriced)
    by_id = {row["id"]: row for row in as_json}
    assert by_id["unpriced"]["judge_unpriced"] == 6 and by_id["unpriced"]["judge_cost_usd"] is None
    assert by_id["cached"]["judge_cache_hits"] == 2
    assert by_id["hung"]["judge_timeout_seconds"] == 0.5
    line = next(text for text in table.stdout.splitlines() if text.startswith("unpriced "))
    assert "unpriced" in line.split()[1:], table.stdout
    # Segments: the noisy service is sampled out, the others scored.
    assert {segmented[t] for t in noisy} == {"sampled_out"}
    assert {segmented[t] for t in first + second} == {"scored"}


def test_a_usd_budget_over_an_unpriced_judge_refuses_to_start(tmp_path: Path,
                                                              llm_server: Any) -> None:
    config = write(tmp_path, llm_server.url, usd=5)
    done = cli("serve", "--config", str(config), "--db", str(tmp_path / "x.duckdb"),
               "--http-port", "0", "--no-grpc")
    assert done.returncode != 0
    assert "judge model 'openai/scripted' has no known price" in done.stderr
    assert '[pricing."openai/scripted"]' in done.stderr and "max_judge_tokens_per_hour" in (
        done.stderr)
    checked = cli("check", "--config", str(config), "--no-call")
    assert checked.returncode == 1
    assert "judge prices: scorer 'unpriced'" in checked.stdout, checked.stdout
