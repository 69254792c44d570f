"""Rescore after a fixed judge, exactly once across ``kill -9``, in a real ``tracescore serve``.

The judge (the scripted server of this test process) first answers with text that is not JSON,
so every pair of the judge scorer ends ``failed`` (one attempt). The judge is fixed (slow:
1 s per answer, so pairs are in flight), ``POST /api/live/rescore`` turns the failed pairs into
pending ones, and the server is killed with SIGKILL while their judge calls are out. After the
restart the live scorer finishes them: each pair ends with exactly one ``success`` row under its
new score id, the old ``failed`` rows, their judge executions and the old decisions stay as
history.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from server_process import sql, start_server

from live.test_serve import write_config
from tracescore.live import send_agent_traces
from tracescore.testing import Reply

TRACES = 10


def wait_for(server: Any, query: str, expected: Any, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        got = sql(server, query)
        if got == expected:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{query}: {got} != {expected}\n{server.log()[-3000:]}")
        time.sleep(0.2)


def test_rescore_turns_failed_pairs_into_scores_exactly_once_across_kill_9(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.set_default(lambda body: Reply(content="this is not json"))
    config = write_config(tmp_path, f"""
[[scorers]]
id = "judged"
use = "myscorers.py:judged"
args = {{ api_base = "{llm_server.url}" }}
""", extra_live="judge_cache_max_bytes = 0")
    config.write_text(config.read_text().replace("max_attempts = 2", "max_attempts = 1"))
    server = start_server(tmp_path / "rescore.duckdb", args=["--config", str(config),
                                                               "--no-grpc"])
    try:
        ids = send_agent_traces(server.url, count=TRACES)
        wait_for(server, "SELECT decision, count(*) FROM scoring_decisions GROUP BY 1",
                 [["failed", TRACES]])
        failed = dict(sql(server, "SELECT trace_id, score_id FROM scoring_decisions"))

        with server.client() as client:
            dry = client.post("/api/live/rescore", json={"scorer": "judged", "failed": True,
                                                         "dry_run": True}).json()
            assert (dry["pairs"], dry["picked"], dry["dry_run"]) == (
                TRACES, {"failed": TRACES}, True)
            one = client.post("/api/live/rescore", json={
                "scorer": "judged", "trace": [ids[0][:8]], "dry_run": True}).json()
            assert one["pairs"] == 1 and one["trace_ids"] == [ids[0]]  # a prefix names it
            vague = client.post("/api/live/rescore", json={"scorer": "judged"})
            assert vague.status_code == 400 and "failed, since or trace" in vague.json()[
                "error"]["message"]
        usage = subprocess.run([sys.executable, "-m", "tracescore.cli", "rescore", "--scorer",
                                "judged", "--url", server.url], capture_output=True, text=True,
                               timeout=120)
        assert usage.returncode == 2 and "--failed, --since T or --trace ID" in usage.stderr

        calls_before = len(llm_server.requests)
        llm_server.set_default(lambda body: Reply(content={"score": 0.8}, delay_s=1.0))
        rescoring = threading.Thread(target=lambda: _post_quietly(server.url), daemon=True)
        rescoring.start()
        wait_for(server, "SELECT count(*) FROM scoring_decision_history", [[TRACES]])
        time.sleep(0.3)
        assert len(llm_server.requests) > calls_before  # judge calls are out
        server.kill()
        server.start()
        wait_for(server, "SELECT decision, count(*) FROM scoring_decisions GROUP BY 1",
                 [["scored", TRACES]])
        decisions = dict(sql(server, "SELECT trace_id, score_id FROM scoring_decisions"))
        scores = sql(server, "SELECT trace_id, score_id, status FROM scores ORDER BY status")
        history = sql(server, "SELECT trace_id, decision, score_id, archived_by "
                              "FROM scoring_decision_history")
        old_executions = sql(server, "SELECT count(*) FROM judge_executions WHERE score_id IN "
                                     "(SELECT score_id FROM scoring_decision_history)")
    finally:
        server.stop()
    successes = [(t, s) for t, s, status in scores if status == "success"]
    assert sorted(successes) == sorted(decisions.items())  # exactly one per pair, linked
    assert sorted((t, s) for t, s, status in scores if status == "failed") == sorted(
        failed.items())  # the old rows stay
    assert sorted((t, d, s, by) for t, d, s, by in history) == sorted(
        (t, "failed", s, "rescore") for t, s in failed.items())
    assert set(decisions.values()).isdisjoint(failed.values())
    assert old_executions[0][0] >= TRACES


def _post_quietly(url: str) -> None:
    try:
        httpx.post(f"{url}/api/live/rescore", json={"scorer": "judged", "failed": True},
                   timeout=60)
    except httpx.HTTPError:
        pass  # the server is killed while it answers
