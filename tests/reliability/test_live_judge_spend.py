"""Issue 12 defect 9 (first half): judge spend survives ``kill -9`` during live scoring.

A real ``tracescore serve`` process runs a two-step judge scorer (analyze, then grade) against
the scripted provider of this test process. The analyze answers come back at once, the grade
requests hang; the server is killed with SIGKILL while they hang. Before the fix the analyze
executions lived only in memory until the run ended, so they were lost: the restart called the
judge again and no table held what the first calls cost, so budgets under-counted. Now each
execution is stored when its answer arrives, the pair is marked in flight, and the final score
row's totals include the spend from before the crash. What can still be lost is documented in
docs/live.md: the usage of the requests that were unanswered at the crash.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from live.test_serve import write_config
from server_process import ServerProcess, start_server

from tracescore.live import send_agent_traces
from tracescore.testing import Reply

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep

ANALYSIS = {"type": "object", "properties": {"verdict": {"type": "string"}},
            "required": ["verdict"]}


def two_step(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Judge the answer.",
                  api_base=api_base)
    return (create_scorer("two-step", "analyze, then grade", type="agent", judge=judge)
            .analyze(PromptStep("analyze",
                                lambda run, results: "ANALYZE: " + run.output[-1].content,
                                output_schema=ANALYSIS))
            .generate_score(PromptStep(
                "grade", lambda run, results: "GRADE: " + results.analyze_step_result["verdict"])))
'''

TRACES = 3
TOKENS = 100
HANG_S = 120.0


def prompt_of(body: dict[str, Any]) -> str:
    return " ".join(str(m.get("content")) for m in body.get("messages", []))


def sql_file(db: Path, query: str) -> list[tuple[Any, ...]]:
    """A query on a database file no server holds (after the kill)."""
    from tracescore.store import Store

    with Store(db, read_only=True) as store:
        return [tuple(row.values()) for row in store.read(query)]


def sql(server: ServerProcess, query: str) -> list[list[Any]]:
    with server.client() as client:
        answer = client.post("/api/sql", json={"sql": query})
    assert answer.status_code == 200, answer.text
    rows: list[list[Any]] = answer.json()["rows"]
    return rows


def wait_for(what: str, check: Any, timeout_s: float, server: ServerProcess) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in {timeout_s} s\n{server.log()[-3000:]}")
        time.sleep(0.05)


def test_spend_of_answered_judge_calls_survives_kill_9(tmp_path: Path, llm_server: Any) -> None:
    def before_the_crash(body: dict[str, Any]) -> Reply:
        if "GRADE:" in prompt_of(body):
            return Reply(content={"score": 0.5}, delay_s=HANG_S)  # still in flight at the kill
        return Reply(content={"verdict": "fine"}, prompt_tokens=TOKENS, completion_tokens=10)

    llm_server.set_default(before_the_crash)
    (tmp_path / "spendscorers.py").write_text(SCORERS_PY)
    config = write_config(tmp_path, f"""
[[scorers]]
id = "two-step"
use = "spendscorers.py:two_step"
args = {{ api_base = "{llm_server.url}" }}
""", extra_live="concurrency = 8")
    db = tmp_path / "spend.duckdb"
    server = start_server(db, args=["--config", str(config)])
    try:
        send_agent_traces(server.url, count=TRACES)
        wait_for("every grade request in flight",
                 lambda: sum("GRADE:" in prompt_of(b) for b in list(llm_server.requests))
                 >= TRACES, 90, server)
        # The analyze answers came back before the grade requests went out; give their rows
        # a moment to commit (the old code never wrote them before the run ended), then crash.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and sql(
                server, "SELECT count(*) FROM judge_executions")[0][0] < TRACES:
            time.sleep(0.05)
        server.kill()

        stored = sql_file(db, "SELECT step, count(*), sum(input_tokens), sum(cost_amount) > 0 "
                              "FROM judge_executions GROUP BY 1")
        assert stored == [("analyze", TRACES, TRACES * TOKENS, True)]
        marks = sql_file(db, "SELECT decision, last_error FROM scoring_decisions")
        assert len(marks) == TRACES
        assert all(d == "retrying" and "in flight since" in e for d, e in marks), marks
        assert sql_file(db, "SELECT count(*) FROM scores") == [(0,)]

        llm_server.set_default(lambda body: Reply(
            content={"score": 0.5} if "GRADE:" in prompt_of(body) else {"verdict": "fine"},
            prompt_tokens=TOKENS, completion_tokens=10))
        server.start()
        wait_for("every pair scored", lambda: sql(
            server, "SELECT count(*) FROM scoring_decisions WHERE decision = 'scored'")[0][0]
            == TRACES, 90, server)

        rows = sql(server, "SELECT s.judge_input_tokens, s.judge_cost, "
                           "(SELECT sum(input_tokens) FROM judge_executions e "
                           " WHERE e.score_id = s.score_id), "
                           "(SELECT sum(cost_amount) FROM judge_executions e "
                           " WHERE e.score_id = s.score_id), "
                           "(SELECT count(*) FROM judge_executions e "
                           " WHERE e.score_id = s.score_id AND e.step = 'analyze') "
                           "FROM scores s")
        assert len(rows) == TRACES
        for tokens, cost, recorded_tokens, recorded_cost, analyses in rows:
            # analyze before the crash + analyze and grade after it; the grade request that
            # hung at the crash never answered, so its usage is unknown (documented).
            assert analyses == 2
            assert tokens == recorded_tokens == 3 * TOKENS
            assert abs(cost - recorded_cost) < 1e-12 and cost > 0
        [[hour_tokens]] = sql(server, "SELECT sum(total_tokens) FROM judge_executions "
                                      "WHERE created_at >= now()::TIMESTAMP - INTERVAL 1 HOUR")
        assert hour_tokens == TRACES * 3 * (TOKENS + 10)  # what the budget window sums
    finally:
        server.stop()
