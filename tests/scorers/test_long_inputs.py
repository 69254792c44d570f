"""Long inputs in every LLM scorer: a prompt too long for the judge's context (litellm's model
map) is not scorable with the sizes, never a score; a builder spec with ``navigate=True`` reads
the run through the tools instead."""

from __future__ import annotations

from typing import Any

from agent_runs import repeated_rows, sized_reply, tool_call, traced_run

from tracescore.scorers import create_trajectory_accuracy_scorer_llm
from tracescore.scorers._builder import Ask, Judged, LLMScorerSpec, Loose, build_llm_scorer
from tracescore.scorers._navigating import navigation_evidence
from tracescore.scorers._trace_tools import whole_text
from tracescore.scoring import Judge


def gpt4(server: Any) -> Judge:
    return Judge(model="openai/gpt-4", api_base=server.url)  # 8,192 input tokens


def test_an_oversized_trace_is_not_scorable_never_zero(llm_server: Any) -> None:
    run = traced_run(repeated_rows(), "trajectory")  # 401 spans, ~400 steps to list
    result = create_trajectory_accuracy_scorer_llm(gpt4(llm_server)).run_sync(run)
    assert result.score is None and result.not_scorable is not None
    assert result.not_scorable.step == "analyze"
    reason = result.not_scorable.reason or ""
    assert reason.startswith("the analyze prompt needs ")
    assert "but the judge model openai/gpt-4 takes at most 8,192 input tokens" in reason
    assert llm_server.requests == [] and result.judge == {}
    assert result.preprocess_step_result["step_count"] == 400


class Found(Loose):
    """The reply of the spec below."""

    found: bool


def _prompt(j: Judged) -> str:
    shown = navigation_evidence(j) if j.navigating else whole_text(j.trace_view())
    return f"Did any tool call fail?\n\n{shown}"


ANY_FAILURE = LLMScorerSpec(
    id="any-failure", name="Any failure", description="d", instructions="You read runs.",
    analyze=Ask("look", _prompt, Found), score=lambda j: 1.0 if j.analyze.found else 0.0,
    type=None, navigate=True, option_names=())


def test_a_navigate_spec_reads_a_long_run_and_sends_a_short_one_whole(llm_server: Any) -> None:
    scorer = build_llm_scorer(ANY_FAILURE, gpt4(llm_server), {"max_tool_calls": 2})
    llm_server.script(sized_reply(tool_calls=[tool_call("search_trace", query="timeout")]),
                      sized_reply(content={"found": True}),
                      sized_reply(content={"found": False}))
    long = scorer.run_sync(traced_run(repeated_rows(), None))
    assert long.score == 1.0 and len(long.judge["analyze"].executions) == 2
    assert "tools" in llm_server.requests[0]
    assert "at most 2 times" in llm_server.requests[0]["messages"][-1]["content"]
    short = scorer.run_sync(traced_run(repeated_rows(loops=2, fail_at=None), None))
    assert short.score == 0.0 and "tools" not in llm_server.requests[2]
    assert "input (" in (short.analyze_prompt or "")  # the steps in full
