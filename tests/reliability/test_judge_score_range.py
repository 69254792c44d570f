"""Issue 27, item 9: a judge provider answering ``{"score": 1e308}`` to a prompt
``generate_score`` step (declared scale: the default 0 to 1) makes the run ``failed`` with the
value in its error, in a real ``tracescore serve`` scoring live traffic. Before, every trace got
a successful score of 1e308 that dominated averages and monitors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from server_process import running_server, sql

from tracescore.live import send_agent_traces
from tracescore.testing import Reply

SCORERS_PY = '''
from tracescore import create_scorer
from tracescore.scoring import Judge, PromptStep


def judged(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade the answer.",
                  api_base=api_base)
    return create_scorer("judged", "scripted judge", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade: " + run.output[-1].content))


def ten_point(api_base):
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade 1 to 10.",
                  api_base=api_base)
    return create_scorer("ten-point", "1 to 10", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade: " + run.output[-1].content,
                   score_range=(1, 10)))
'''

CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.3
max_wait_seconds = 30
retry_base_seconds = 0
max_attempts = 1

[[scorers]]
id = "judged"
use = "rangescorers.py:judged"
args = {{ api_base = "{url}" }}

[[scorers]]
id = "ten-point"
use = "rangescorers.py:ten_point"
args = {{ api_base = "{url}" }}
"""


def test_a_score_outside_the_declared_scale_is_a_failed_run(tmp_path: Path,
                                                           llm_server: Any) -> None:
    def answer(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]["content"]
        return Reply(content={"score": 7 if "1 to 10" in system else 1e308})

    llm_server.set_default(answer)
    (tmp_path / "rangescorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(url=llm_server.url))
    with running_server(tmp_path / "range.duckdb", args=["--config", str(config)]) as server:
        sent = send_agent_traces(server.url, count=3)
        deadline = time.monotonic() + 90
        while sql(server, "SELECT count(*) FROM scoring_decisions WHERE decision IN "
                          "('scored', 'failed')") != [[6]]:
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        rows = sql(server, "SELECT trace_id, status, score, error FROM scores "
                           "WHERE scorer_id = 'judged' ORDER BY trace_id")
        assert [r[0] for r in rows] == sorted(sent)
        for _, status, score, error in rows:
            assert (status, score) == ("failed", None)
            assert "1e+308" in error and "score_range [0, 1]" in error
        assert sql(server, "SELECT max(score) FROM scores") == [[7.0]]
        assert sql(server, "SELECT count(*), min(score) FROM scores WHERE scorer_id = "
                           "'ten-point' AND status = 'success'") == [[3, 7.0]]
        [[output]] = sql(server, "SELECT DISTINCT e.output FROM judge_executions e "
                                 "JOIN scores s USING (score_id) WHERE s.scorer_id = 'judged'")
        assert "1e+308" in output  # what the judge said is kept on its execution
