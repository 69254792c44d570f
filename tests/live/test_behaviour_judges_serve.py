"""Issue 30 live: the four behaviour judges as ``[[scorers]]`` entries of a real ``tracescore
serve``, scoring captured OpenInference traces POSTed as captured (bytes as the client sent
them), one of them on a session target; the judge is this process's scripted server, reached
over loopback. The trace judge reads the stored trace through its tools, the tool-argument
scorer the tools the model was offered: both through the trace document the live scorer
passes."""

from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
from server_process import ServerProcess, running_server, sql

from tracescore.testing import Reply

from .conftest import FIXTURES

FOLDER = "py-openinference-openai"
CRITERION = "Every tool call returned a result."
CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.3
max_wait_seconds = 30
session_settle_seconds = 1
judge_model = "openai/gpt-4"
judge_api_base = "{url}"

[[scorers]]
use = "goal-completion-scorer"
needs_judge = true

[[scorers]]
use = "plan-adherence-scorer"
needs_judge = true

[[scorers]]
use = "tool-argument-scorer"
needs_judge = true

[[scorers]]
use = "trace-judge"
needs_judge = true
args = {{ criterion = "{criterion}", max_tool_calls = 3 }}

[[scorers]]
id = "goal-session"
use = "goal-completion-scorer"
needs_judge = true
target = "session"
"""


def respond(body: dict[str, Any]) -> Reply:
    """The scripted judge: which scorer asks is told by its instructions."""
    system = body["messages"][0]["content"]
    prompt = body["messages"][1]["content"]
    if body.get("tools"):  # the trace judge: one read, then the verdict
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(tool_calls=[{"name": "read_span", "arguments": {"span_id": "s2"}}])
        return Reply(content={"reasoning": "both calls returned", "satisfied": True,
                              "evidence": ["s2"]})
    if "achieved what its user wanted" in system:
        return Reply(content={"goals": [{"goal": "the weather", "status": "achieved",
                                         "evidence": "answered"}]})
    if "arguments an AI agent passed" in system:
        asked = re.findall(r"#(\d+) \w+", prompt.split("For each", 1)[0])
        return Reply(content={"calls": [{"index": int(i), "verdict": "correct",
                                         "reasoning": "as asked"} for i in asked]})
    return Reply(status=400, error_body={"error": {"message": f"unexpected: {system[:80]}"}})


def wait_for(what: str, check: Any, server: ServerProcess, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"{what} not seen\n{server.log()[-3000:]}"
        time.sleep(0.2)


def decided(server: ServerProcess) -> bool:
    [[open_pairs, closed]] = sql(server, """
        SELECT count(*) FILTER (WHERE decision IN ('pending', 'retrying')),
               count(*) FILTER (WHERE decision NOT IN ('pending', 'retrying'))
        FROM scoring_decisions""")
    return open_pairs == 0 and closed >= 3 * 4 + 1


def test_the_behaviour_judges_score_live(tmp_path: Path, llm_server: Any) -> None:
    llm_server.set_default(respond)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(url=llm_server.url, criterion=CRITERION))
    body = base64.b64decode((FIXTURES / FOLDER / "0001-traces.b64").read_text())
    index = json.loads((FIXTURES / "INDEX.json").read_text())[FOLDER]["traces"]
    ids = {t["scenario"]: t["traceId"] for t in index}
    with running_server(tmp_path / "live.duckdb", args=["--config", str(config)]) as server:
        posted = httpx.post(f"{server.url}/v1/traces", content=body, timeout=30,
                            headers={"content-type": "application/x-protobuf"})
        assert posted.status_code == 200, posted.text
        wait_for("every pair decided", lambda: decided(server), server)
        rows = sql(server, "SELECT scorer_id, trace_id, status, score, reason, "
                           "preprocess_step_result, analyze_prompt, session_id FROM scores")
        by = {(r[0], r[1] if r[7] is None else "session"): r for r in rows}

        for scenario in ("turn1", "turn2", "workflow"):
            goal = by[("goal-completion-scorer", ids[scenario])]
            assert (goal[2], goal[3]) == ("success", 1.0)
            plan = by[("plan-adherence-scorer", ids[scenario])]
            assert (plan[2], plan[3]) == ("not_scorable", None)
            assert plan[4].startswith("no stated plan")
            judged = by[("trace-judge", ids[scenario])]
            assert (judged[2], judged[3]) == ("success", 1.0)

        arguments = by[("tool-argument-scorer", ids["turn1"])]
        assert (arguments[2], arguments[3]) == ("success", 1.0)
        pre = json.loads(arguments[5]) if isinstance(arguments[5], str) else arguments[5]
        assert pre["tools_offered"] == ["get_weather", "convert_temperature"]  # from the trace
        assert all(c["schema_checked"] for c in pre["calls"])
        no_calls = by[("tool-argument-scorer", ids["turn2"])]
        assert (no_calls[2], no_calls[4]) == (
            "not_scorable", "the agent made no tool calls, so there are no arguments to judge")

        executions = sql(server, "SELECT e.prompt, e.output FROM judge_executions e "
                                 "JOIN scores s USING (score_id) WHERE s.scorer_id = "
                                 f"'trace-judge' AND s.trace_id = '{ids['turn1']}' "
                                 "ORDER BY e.created_at")
        assert len(executions) == 2
        assert "Outline of the run: 6 steps" in executions[0][0]
        assert '"llm.tools.0.tool.json_schema"' in executions[1][0]  # a span's raw attributes
        assert "max_tool_calls" in str(executions[0][1])

        session = by[("goal-session", "session")]
        assert (session[2], session[3], session[7]) == ("success", 1.0, "session-fixture-1")
        assert session[1] == ids["turn2"]
        prompt = session[6]
        assert prompt.index("What is the weather in Paris") < prompt.index(
            "Should I bring an umbrella?")
