"""Live scoring in real processes: OTel SDK exporter → ``tracescore serve`` → scores via SQL.

The judge is the scripted OpenAI-compatible server of this test process; the server reaches it
over loopback through litellm.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, running_server, start_server

from tracescore.live import is_sampled, send_agent_traces
from tracescore.testing import Reply, error

SCORERS_PY = '''
import asyncio

from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep, not_scorable


def judged(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade the answer.",
                  api_base=api_base)
    return create_scorer("judged", "scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade: " + run.output[-1].content))


def _boom(run, results):
    raise RuntimeError("this scorer always fails")


async def _slowly(run, results):
    await asyncio.sleep(0.1)
    return 1.0


broken = create_scorer("broken", "always fails").generate_score(_boom)
slow = create_scorer("slow", "takes 0.1 s").generate_score(_slowly)
skip = (create_scorer("skip", "never applies").preprocess(lambda run: not_scorable("not for me"))
        .generate_score(lambda run, results: 1.0))
'''

LIVE = """
[live]
interval_seconds = 0.2
settle_seconds = 0.5
max_wait_seconds = 30
retry_base_seconds = 0
max_attempts = 2
{extra_live}
"""


def write_config(tmp_path: Path, scorers: str, *, extra_live: str = "") -> Path:
    (tmp_path / "myscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(LIVE.format(extra_live=extra_live) + scorers)
    return config


def sql(server: ServerProcess, query: str) -> list[list[Any]]:
    with server.client() as client:
        answer = client.post("/api/sql", json={"sql": query})
    assert answer.status_code == 200, answer.text
    return answer.json()["rows"]


def wait_until_decided(server: ServerProcess, ids: list[str], scorers: int,
                       timeout_s: float = 90) -> None:
    """Poll until every (trace, scorer) pair has a decision and none is open."""
    listed = ", ".join(f"'{t}'" for t in ids)
    query = ("SELECT count(DISTINCT trace_id || scorer_id), count(*) FILTER (WHERE decision IN "
             f"('pending', 'retrying', 'over_budget')) FROM scoring_decisions "
             f"WHERE trace_id IN ({listed})")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        [[decided, still_open]] = sql(server, query)
        if decided == len(ids) * scorers and still_open == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"not decided in {timeout_s} s: {decided}/{len(ids) * scorers}, "
                         f"{still_open} open\n{server.log()[-3000:]}")


def wait_for_metrics(server: ServerProcess, lines: list[str], timeout_s: float = 10) -> str:
    """GET /metrics until it shows every line (counters follow the commit by a moment)."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = httpx.get(f"{server.url}/metrics").text
        missing = [line for line in lines if line not in text]
        if not missing or time.monotonic() > deadline:
            assert not missing, text
            return text
        time.sleep(0.1)


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracescore.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_live_scores_end_to_end(tmp_path: Path, llm_server: Any) -> None:
    llm_server.script(error(429, "slow down", retry_after=0.3), error(500), error(500))
    llm_server.set_default(lambda body: Reply(content={"score": 0.9}, prompt_tokens=100,
                                              completion_tokens=10))
    config = write_config(tmp_path, f"""
[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
[[scorers]]
id = "judged"
use = "myscorers.py:judged"
args = {{ api_base = "{llm_server.url}" }}
[[scorers]]
use = "myscorers.py:broken"
[[scorers]]
use = "myscorers.py:skip"
[[scorers]]
id = "half"
use = "tracescore.scorers.checks:no_tool_errors"
sample_rate = 0.5
""")
    with running_server(tmp_path / "live.duckdb", args=["--config", str(config)]) as server:
        ids = send_agent_traces(server.url, count=8)
        wait_until_decided(server, ids, scorers=5)

        rows = sql(server, "SELECT trace_id, score FROM scores WHERE scorer_id = "
                           "'no-tool-errors' AND source = 'live'")
        by_trace = dict(rows)
        assert [by_trace[t] for t in ids] == [1, 1, 1, 0, 1, 1, 1, 0]  # runs 3 and 7 fail a tool

        judged = sql(server, "SELECT status, score, judge_input_tokens, judge_output_tokens, "
                             "judge_cost FROM scores WHERE scorer_id = 'judged'")
        assert len(judged) == 8
        assert {tuple(r[:4]) for r in judged} == {("success", 0.9, 100, 10)}
        assert all(r[4] > 0 for r in judged)
        codes = sql(server, "SELECT error_code, count(*) FROM judge_executions "
                            "WHERE status = 'failed' GROUP BY 1 ORDER BY 1")
        assert codes == [["429", 1], ["500", 2]]
        attempts = sql(server, "SELECT DISTINCT attempts FROM scoring_decisions "
                               "WHERE scorer_id = 'judged'")
        assert attempts == [[1]]  # rate limits and 5xx spend no attempt

        broken = sql(server, "SELECT d.decision, d.attempts, s.status FROM scoring_decisions d "
                             "JOIN scores s USING (score_id) WHERE d.scorer_id = 'broken'")
        assert broken == [["failed", 2, "failed"]] * 8
        skipped = sql(server, "SELECT DISTINCT decision, last_error FROM scoring_decisions "
                              "WHERE scorer_id = 'skip'")
        assert skipped == [["not_scorable", "not scorable at preprocess: not for me"]]

        half = {r[0] for r in sql(server, "SELECT trace_id FROM scores WHERE scorer_id = 'half'")}
        assert half == {t for t in ids if is_sampled(t, 0.5)}

        expected = ['tracescore_scores_total{scorer_id="judged",status="success"} 8.0',
                    'tracescore_scores_total{scorer_id="broken",status="failed"} 8.0',
                    'tracescore_judge_tokens_total{kind="input",scorer_id="judged"} 800.0',
                    'tracescore_spans_received_total{project="default"}']
        metrics = wait_for_metrics(server, expected)
        assert "tracescore_scoring_lag_seconds" in metrics

        listing = cli("scorers", "--url", server.url)
        assert listing.returncode == 0, listing.stderr
        [judged_line] = [line for line in listing.stdout.splitlines()
                         if line.startswith("judged ")]
        assert "| 8 " in judged_line  # scored


def test_restart_in_the_middle_loses_nothing_and_scores_nothing_twice(tmp_path: Path) -> None:
    config = write_config(tmp_path, """
[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
[[scorers]]
use = "myscorers.py:slow"
""", extra_live="concurrency = 1")
    server = start_server(tmp_path / "live.duckdb", args=["--config", str(config)])
    try:
        first = send_agent_traces(server.url, count=8)
        deadline = time.monotonic() + 60
        while not sql(server, "SELECT count(*) FROM scores WHERE scorer_id = 'slow'")[0][0]:
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.02)
        server.kill()  # kill -9 while runs are in flight and pairs are pending
        left = sql_file(tmp_path / "live.duckdb", "SELECT count(*) FROM scoring_decisions "
                                                  "WHERE decision = 'pending'")
        assert left[0][0] > 0  # the restart really happened in the middle
        server.start()
        second = send_agent_traces(server.url, count=3, start=8)
        wait_until_decided(server, first + second, scorers=2)
        counts = sql(server, "SELECT scorer_id, count(*), count(DISTINCT trace_id) FROM scores "
                             "GROUP BY 1 ORDER BY 1")
        assert counts == [["no-tool-errors", 11, 11], ["slow", 11, 11]]
    finally:
        server.stop()


def sql_file(db: Path, query: str) -> list[tuple[Any, ...]]:
    """A query on a database file no server holds."""
    from tracescore.store import Store

    with Store(db, read_only=True) as store:
        return [tuple(row.values()) for row in store.read(query)]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ('use = "tracescore.scorers.checks:no_tool_errors"\nsample_rate = 2',
         "key 'sample_rate'"),
        ('use = "no_such_package.scorers:thing"', "key 'use': cannot import"),
        ('use = "tracescore.scorers.checks:no_tool_errors"\nfilter = "no_such_column = 1"',
         "key 'filter'"),
        ('use = "tracescore.scorers.checks:no_tool_errors"\ntarget = "everything"',
         "key 'target'"),
    ],
)
def test_config_errors_stop_start_up_with_a_sentence(tmp_path: Path, entry: str,
                                                     expected: str) -> None:
    config = write_config(tmp_path, f'[[scorers]]\nid = "first"\nuse = '
                                    f'"tracescore.scorers.checks:no_tool_errors"\n'
                                    f'[[scorers]]\nid = "bad"\n{entry}\n')
    result = cli("serve", "--config", str(config), "--db", str(tmp_path / "db.duckdb"),
                 "--http-port", "0", "--no-grpc")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "[[scorers]]" in result.stderr and "'bad'" in result.stderr
    assert expected in result.stderr and str(config) in result.stderr


def test_backfill_and_scorers_through_a_server_and_on_a_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, """
[[scorers]]
id = "no-tool-errors"
use = "tracescore.scorers.checks:no_tool_errors"
[[scorers]]
id = "efficiency"
use = "tracescore.live:trajectory_efficiency_scorer"
""", extra_live="enabled = false")
    db = tmp_path / "live.duckdb"
    with running_server(db, args=["--config", str(config)]) as server:
        ids = send_agent_traces(server.url, count=3)
        time.sleep(0.6)  # backfill takes settled traces only (settle_seconds = 0.5)
        assert sql(server, "SELECT count(*) FROM scoring_decisions") == [[0]]  # live is off
        plan = cli("backfill", "--scorer", "no-tool-errors", "--dry-run", "--url", server.url)
        assert plan.returncode == 0, plan.stderr
        assert "3 settled trace(s)" in plan.stdout and "3 pair(s) to score" in plan.stdout
        assert "nothing was scored" in plan.stdout
        assert sql(server, "SELECT count(*) FROM scores") == [[0]]
        done = cli("backfill", "--scorer", "no-tool-errors", "--url", server.url)
        assert done.returncode == 0, done.stderr
        assert "scored: 3" in done.stdout
        rows = sql(server, "SELECT DISTINCT source FROM scores")
        assert rows == [["backfill"]]
        with server.client() as client:
            unknown = client.post("/api/live/backfill", json={"scorer": "nope"})
        assert unknown.status_code == 400
        assert "'nope' is not registered" in unknown.json()["error"]["message"]
    # The server is gone: work on the file directly, with the same config.
    done = cli("backfill", "--scorer", "efficiency", "--db", str(db), "--config", str(config),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "scored: 3" in done.stdout
    listing = cli("scorers", "--db", str(db), "--config", str(config), "--format", "json",
                  cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    import json

    scored = {row["id"]: row["scored"] for row in json.loads(listing.stdout)}
    assert scored == {"no-tool-errors": 3, "efficiency": 3}
    assert len(ids) == 3
