"""create_trace_judge: a scripted judge navigating captured traces and a 400-span trace built
from a captured agent loop, within its caps; over a cap or the context, not scorable."""

from __future__ import annotations

from typing import Any

import pytest
from agent_runs import (
    LARGEST,
    TOOLS_FOLDER,
    fixture_run,
    repeated_rows,
    sized_reply,
    tool_call,
    traced_run,
)
from judged import judge

from tracescore.model import ScorerRun
from tracescore.scorers import CATALOGUE, create_trace_judge
from tracescore.scorers._trace_judge import TraceVerdict, trace_judge_reason, trace_judge_score
from tracescore.scoring import Judge

CRITERION = "Every tool call succeeded, or the agent retried a failed one."
MET = {"reasoning": "s288 failed and the next loop retried", "satisfied": True,
       "evidence": ["s288", "s293"]}


def test_score_and_reason() -> None:
    met = TraceVerdict.model_validate(MET)
    assert trace_judge_score(met) == 1.0 and trace_judge_score(None) == 0.0
    assert trace_judge_reason(met, CRITERION) == (
        f"✅ Criterion met.\n\n{CRITERION}\n\ns288 failed and the next loop retried\n\n"
        "Evidence: s288, s293")
    unmet = TraceVerdict.model_validate({"satisfied": False})
    assert trace_judge_reason(unmet, "c") == (
        "❌ Criterion not met.\n\nc\n\n(no reasoning returned by the judge)")


def gpt4(server: Any) -> Judge:
    return Judge(model="openai/gpt-4", api_base=server.url)  # 8,192 tokens, priced


def test_a_captured_trace_read_through_its_tools(llm_server: Any) -> None:
    llm_server.script(
        sized_reply(tool_calls=[tool_call("outline")]),
        sized_reply(tool_calls=[tool_call("read_span", span_id="s2"),
                                tool_call("read_step", step="s3")]),
        sized_reply(content={"reasoning": "both calls returned", "satisfied": True,
                             "evidence": ["s3", "s5"]}))
    scorer = create_trace_judge(gpt4(llm_server), criterion=CRITERION)
    result = scorer.run_sync(fixture_run(TOOLS_FOLDER, "turn1", None))
    assert result.score == 1.0 and result.reason is not None
    assert result.reason.endswith("Evidence: s3, s5")
    first, second, last = result.judge["analyze"].executions
    assert "Outline of the run: 6 steps, 0 with errors" in (first.prompt or "")
    assert "What is the weather in Paris right now, in Fahrenheit?" in (first.prompt or "")
    assert "max_tool_calls" in first.output["budget"]
    # what was read is in the executions: the span's raw attributes, the tool step
    assert '"llm.tools.0.tool.json_schema"' in (last.prompt or "")
    assert "s3 [tool_call] get_weather" in (last.prompt or "")
    assert all(e.cost is not None and e.cost.amount > 0 for e in (first, second, last))


def test_the_400_span_trace_is_judged_within_its_caps(llm_server: Any) -> None:
    rows = repeated_rows()
    llm_server.script(
        sized_reply(tool_calls=[tool_call("search_trace", query="upstream timeout")]),
        sized_reply(tool_calls=[tool_call("read_step", step="s288")]),
        sized_reply(tool_calls=[tool_call("outline", start=281)]),
        sized_reply(content=MET))
    result = create_trace_judge(gpt4(llm_server), criterion=CRITERION, max_tool_calls=5,
                                max_tokens=30_000).run_sync(traced_run(rows, None))
    assert len(rows) == 401
    assert result.score == 1.0 and result.not_scorable is None
    executions = result.judge["analyze"].executions
    assert len(executions) == 4
    assert (executions[1].prompt or "").startswith(
        '→ search_trace {"query": "upstream timeout"}\ns288 [tool_call] get_weather')
    assert "ERROR: upstream timeout after 30 s" in (executions[2].prompt or "")
    used = sum(e.usage.total_tokens for e in executions if e.usage)
    assert used <= 30_000
    assert executions[2].output["budget"]["tokens"] <= 30_000
    opening = llm_server.requests[0]["messages"][-1]["content"]
    assert "Outline of the run: 401 steps, 1 with errors (s288)" in opening
    assert "at most 5 times and use at most 30,000 tokens" in opening


@pytest.mark.parametrize(("caps", "replies", "why"), [
    ({"max_tool_calls": 2}, 3, "over max_tool_calls = 2"),
    ({"max_tokens": 6_000}, 3, "which would take it over max_tokens = 6,000"),
    ({"max_cost_usd": 0.2}, 3, "which would take it over max_cost_usd = $0.2"),
])
def test_an_over_budget_run_is_not_scorable(caps: dict[str, Any], replies: int, why: str,
                                            llm_server: Any) -> None:
    llm_server.script(*[sized_reply(tool_calls=[tool_call("read_step", step=f"s{i * 5 + 2}")])
                        for i in range(replies)])
    result = create_trace_judge(gpt4(llm_server), criterion=CRITERION, **caps).run_sync(
        traced_run(repeated_rows(), None))
    assert result.score is None and result.not_scorable is not None
    reason = result.not_scorable.reason or ""
    assert reason.startswith("the navigating judge stopped before answering: ")
    assert why in reason and "it read: read_step" in reason
    assert result.judge["analyze"].executions  # what it spent is recorded


def test_the_largest_capture_is_navigated_not_sent_whole(llm_server: Any) -> None:
    llm_server.script(sized_reply(tool_calls=[tool_call("search_trace", query="Lisbon")]),
                      sized_reply(content={"reasoning": "ok", "satisfied": False}))
    result = create_trace_judge(gpt4(llm_server), criterion=CRITERION).run_sync(
        fixture_run(*LARGEST, None))
    assert result.score == 0.0 and result.reason is not None
    assert result.reason.startswith("❌ Criterion not met.")
    first = llm_server.requests[0]["messages"][-1]["content"]
    assert "Outline of the run: 28 steps" in first and len(first) < 12_000


def test_a_run_without_its_trace_is_navigated_from_its_data(llm_server: Any) -> None:
    llm_server.script(sized_reply(tool_calls=[tool_call("read_span", span_id="s6")]),
                      sized_reply(content=MET))
    run = fixture_run(TOOLS_FOLDER, "turn1")
    plain = ScorerRun(input=run.input, output=run.output)
    result = create_trace_judge(judge(llm_server), criterion=CRITERION).run_sync(plain)
    assert result.score == 1.0
    read = result.judge["analyze"].executions[1].prompt or ""
    assert "no span attributes: this run was scored from its data" in read


def test_construction() -> None:
    scorer = CATALOGUE["trace-judge"]("openai/gpt-4o-mini", criterion="no errors")
    assert (scorer.id, scorer.name, scorer.type) == ("trace-judge", "Trace Judge (LLM)", None)
    with pytest.raises(ValueError, match="needs a criterion"):
        create_trace_judge("openai/x", criterion=" ")
    with pytest.raises(ValueError, match="max_tokens must be a whole number of at least 1"):
        create_trace_judge("openai/x", criterion="c", max_tokens=0)
