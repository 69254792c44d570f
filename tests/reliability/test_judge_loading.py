"""Issue 27, "Also": a restarted server acknowledges OTLP before the judge machinery (litellm,
seconds to import, tens of seconds on a loaded machine) has loaded; the judge scorers start
once it has. Against a real ``tracescore serve`` with a judge scorer on the scripted judge."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from server_process import ServerProcess, sql

from tracescore.live import send_agent_traces
from tracescore.testing import Reply

from ._helpers import PROTOBUF, span_ids, span_request

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep


def judged(model, api_base):
    judge = Judge(model=model, instructions="Grade the answer.", api_base=api_base)
    return create_scorer("judged", "scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade: " + run.output[-1].content))
'''

CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.3
max_wait_seconds = 30

[[scorers]]
id = "judged"
use = "loadingscorers.py:judged"
needs_judge = true
"""


def test_otlp_is_acknowledged_while_the_judges_load(tmp_path: Path, llm_server: Any) -> None:
    from server_process import free_port

    llm_server.set_default(lambda body: Reply(content={"score": 0.75}))
    (tmp_path / "loadingscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG)
    server = ServerProcess(db=tmp_path / "judges.duckdb", http_port=free_port(),
                           grpc_port=free_port(), args=("--config", str(config)),
                           env={"TRACESCORE_JUDGE_MODEL": "openai/gpt-4o-mini",
                                "TRACESCORE_JUDGE_API_BASE": llm_server.url})
    server.start()  # returns at the first 200 of /healthz
    try:
        request = span_request(20)
        answer = httpx.post(f"{server.url}/v1/traces", content=request.SerializeToString(),
                            headers=PROTOBUF, timeout=30)
        health = httpx.get(f"{server.url}/healthz", timeout=30).json()
        assert answer.status_code == 200
        assert health["judges"] == "loading", health  # acknowledged before the judges loaded
        assert sql(server, "SELECT count(*) FROM spans WHERE list_contains(?, span_id)",
                   [span_ids(request)]) == [[20]]

        deadline = time.monotonic() + 180
        while httpx.get(f"{server.url}/healthz", timeout=30).json()["judges"] != "ready":
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        assert "judge machinery ready in" in server.log()
        [trace_id] = send_agent_traces(server.url, count=1)
        while sql(server, "SELECT count(*) FROM scores WHERE trace_id = ?", [trace_id]) != [[1]]:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        [[status, score]] = sql(server, "SELECT status, score FROM scores WHERE trace_id = ?",
                                [trace_id])
        assert (status, score) == ("success", 0.75)  # the judge side works once loaded
    finally:
        server.stop()
