"""Issue 12 defect 9 (second half): a provider that never recovers cannot keep a pair forever.

A real ``tracescore serve`` process scores with a judge that is the scripted server of this test
process. A provider that always answers a body that is not JSON (litellm reports it as a 500) or
always 503 used to keep every pair ``retrying`` with no end; now ``[live]
transient_retry_deadline_seconds`` ends each pair as ``failed`` with the last error, and the
provider hears no more from it. Through a storm of mixed faults every pair still ends exactly once.
"""

from __future__ import annotations

import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from live.test_serve import write_config
from server_process import ServerProcess, running_server, sql, start_server

from tracescore.live import send_agent_traces
from tracescore.testing import Reply, error


def config(tmp_path: Path, llm_url: str, live: str) -> Path:
    """The live test config with the scripted-judge scorer ``judged`` alone."""
    return write_config(tmp_path, f"""
[[scorers]]
id = "judged"
use = "myscorers.py:judged"
args = {{ api_base = "{llm_url}" }}
""", extra_live=live)


def wait_until_closed(server: ServerProcess, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    query = ("SELECT count(*), count(*) FILTER (WHERE decision IN ('pending', 'retrying', "
             "'over_budget')) FROM scoring_decisions")
    while time.monotonic() < deadline:
        [[decided, still_open]] = sql(server, query)
        if decided == count and still_open == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"{decided} decided, {still_open} open after {timeout_s} s; "
                         f"{sql(server, 'SELECT decision, last_error FROM scoring_decisions')}"
                         f"\n{server.log()[-3000:]}")


@pytest.mark.parametrize("fault", ["malformed", "503"])
def test_a_provider_that_never_recovers_ends_each_pair_failed(tmp_path: Path, llm_server: Any,
                                                              fault: str) -> None:
    reply = Reply(raw_body=b'{"choices": [{"message": oops') if fault == "malformed" else error(
        503, "the provider is down")
    llm_server.set_default(lambda body: reply)
    path = config(tmp_path, llm_server.url, "transient_retry_deadline_seconds = 2")
    with running_server(tmp_path / "cap.duckdb", args=["--config", str(path)]) as server:
        send_agent_traces(server.url, count=3)
        wait_until_closed(server, 3, timeout_s=90)
        rows = sql(server, "SELECT decision, last_error FROM scoring_decisions")
        assert {row[0] for row in rows} == {"failed"}
        for _, last_error in rows:
            assert "gave up after" in last_error
            assert "transient_retry_deadline_seconds = 2" in last_error
            assert ("500" in last_error or "InternalServerError" in last_error
                    or "503" in last_error or "ServiceUnavailable" in last_error), last_error
        scores = sql(server, "SELECT status, count(*), max(judge_input_tokens) "
                             "FROM scores GROUP BY 1")
        assert scores == [["failed", 3, 0]]  # no answer ever carried usage
        [[failed_calls, pairs]] = sql(server, "SELECT count(*), count(DISTINCT score_id) FROM "
                                              "judge_executions WHERE status = 'failed'")
        assert pairs == 3 and failed_calls >= 2 * 3  # it did retry before giving up
        heard = len(llm_server.requests)
        time.sleep(2.5)  # longer than any backoff it could still be waiting out
        assert len(llm_server.requests) == heard  # nothing retries any more


def test_a_restart_does_not_start_the_retry_window_again(tmp_path: Path,
                                                         llm_server: Any) -> None:
    """The window counts from the pair's first failed judge call as stored, so a server that
    restarts (here: kill -9) gives a failing pair no fresh deadline."""
    llm_server.set_default(lambda body: error(503, "the provider is down"))
    path = config(tmp_path, llm_server.url, "transient_retry_deadline_seconds = 8")
    server = start_server(tmp_path / "restart.duckdb", args=["--config", str(path)])
    try:
        send_agent_traces(server.url, count=2)
        deadline = time.monotonic() + 60
        while sql(server, "SELECT count(*) FROM judge_executions")[0][0] < 2 * 2:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.05)
        assert sql(server, "SELECT DISTINCT decision FROM scoring_decisions") == [["retrying"]]
        server.kill()  # about 1 s into the window; the restart alone takes longer than that
        server.start()
        wait_until_closed(server, 2, timeout_s=90)
        rows = sql(server, """
            SELECT d.decision, d.last_error,
                   epoch(s.created_at) - (SELECT epoch(min(e.created_at)) FROM judge_executions e
                                          WHERE e.score_id = s.score_id)
            FROM scoring_decisions d JOIN scores s USING (score_id)""")
        assert len(rows) == 2
        for decision, last_error, window in rows:
            assert decision == "failed"
            found = re.search(r"gave up after (\d+) s", last_error)
            assert found, last_error
            gave_up_after = float(found.group(1))
            # counted from the first failure before the crash, not from the first after it
            assert window >= 8 and abs(gave_up_after - window) <= 1.5, (last_error, window)
    finally:
        server.stop()


def test_a_fault_storm_still_scores_every_pair_exactly_once(tmp_path: Path,
                                                            llm_server: Any) -> None:
    rng = random.Random(12)
    lock = threading.Lock()

    def stormy(body: dict[str, Any]) -> Reply:
        with lock:
            roll = rng.random()
        if roll < 0.15:
            return error(429, "slow down", retry_after=0.1)
        if roll < 0.3:
            return error(500)
        if roll < 0.4:
            return Reply(raw_body=b"<html>bad gateway</html>")
        return Reply(content={"score": 0.75}, prompt_tokens=40, completion_tokens=4)

    llm_server.set_default(stormy)
    path = config(tmp_path, llm_server.url,
                  "transient_retry_deadline_seconds = 600\nconcurrency = 8")
    with running_server(tmp_path / "storm.duckdb", args=["--config", str(path)]) as server:
        ids = send_agent_traces(server.url, count=12)
        wait_until_closed(server, 12, timeout_s=150)
        assert sql(server, "SELECT decision, count(*) FROM scoring_decisions GROUP BY 1") == [
            ["scored", 12]]
        per_trace = sql(server, "SELECT trace_id, count(*), min(score), max(score) FROM scores "
                                "GROUP BY 1")
        assert sorted(row[0] for row in per_trace) == sorted(ids)
        assert all(row[1:] == [1, 0.75, 0.75] for row in per_trace)
        # every answered judge call is on record once, and the totals add them all up
        [[executions, successes]] = sql(server, "SELECT count(*), count(*) FILTER (WHERE status "
                                                "= 'success') FROM judge_executions")
        assert successes == 12 and executions == len(llm_server.requests)
        [[tokens]] = sql(server, "SELECT sum(judge_input_tokens) FROM scores")
        [[recorded]] = sql(server, "SELECT sum(input_tokens) FROM judge_executions")
        assert tokens == recorded == 12 * 40
