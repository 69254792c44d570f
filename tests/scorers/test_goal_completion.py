"""create_goal_completion_scorer: the score and reason of every branch, runs on captured agent
traces (the largest included), a whole conversation (session), and a run too long for the
judge's context judged by navigating it."""

from __future__ import annotations

from typing import Any

import pytest
from agent_runs import (
    LARGEST,
    TOOLS_FOLDER,
    fixture_run,
    repeated_rows,
    rows_of,
    sized_reply,
    tool_call,
    trace_of,
    traced_run,
)
from judged import assert_recorded, judge, prompt_of
from traces.helpers import INDEX, client_info, gaps

from tracescore.scorers import CATALOGUE, create_goal_completion_scorer
from tracescore.scorers._goal_completion import (
    GoalAnalysis,
    goal_completion_reason,
    goal_completion_score,
)
from tracescore.scoring import Judge, NotScorableSignal
from tracescore.traces import Session
from tracescore.traces._session import turn_of


def goals(*statuses: str) -> GoalAnalysis:
    return GoalAnalysis.model_validate({"goals": [
        {"goal": f"goal {i}", "status": s, "evidence": f"e{i}"} for i, s in enumerate(statuses)]})


@pytest.mark.parametrize(("analysis", "expected"), [
    (goals("achieved"), 1.0),
    (goals("achieved", "partly", "not_achieved"), 0.5),
    (goals("partly", "partly"), 0.5),
    (goals("not_achieved"), 0.0),
    (goals(" Achieved. ", "unclear"), 0.5),  # verdict words are lenient; unknown ones count 0
])
def test_score(analysis: GoalAnalysis, expected: float) -> None:
    assert goal_completion_score(analysis) == pytest.approx(expected)


def test_no_goal_is_not_scorable_and_the_reason_lists_each_goal() -> None:
    nothing = goal_completion_score(goals())
    assert isinstance(nothing, NotScorableSignal)
    assert nothing.reason == "the judge found no goal in the conversation"
    assert goal_completion_reason(goals("achieved", "partly", "not_achieved"), 0.5) == (
        "1 of 3 goals achieved, 1 partly, 1 not achieved (score 0.5).\n"
        "✅ goal 0: e0\n◐ goal 1: e1\n❌ goal 2: e2")


GOALS = {"goals": [
    {"goal": "current weather in Paris", "status": "achieved", "evidence": "get_weather"},
    {"goal": "temperature in Fahrenheit", "status": "partly", "evidence": "64.4°F"}]}


@pytest.mark.parametrize("folder", sorted(INDEX))
def test_turn1_of_every_capture(folder: str, llm_server: Any) -> None:
    llm_server.script(GOALS)
    scorer = create_goal_completion_scorer(judge(llm_server), scale=2)
    result = scorer.run_sync(fixture_run(folder, "turn1"))
    assert result.score == 1.5  # (1 + 0.5) / 2 × 2
    assert result.preprocess_step_result["user_messages"] >= 1
    if "output" in gaps(folder, "turn1"):  # the client sent no final answer whole
        assert result.preprocess_step_result["final_answer"] == ""
    else:
        assert "Paris" in result.preprocess_step_result["final_answer"]
    prompt = prompt_of(llm_server.requests[0])
    question = "What is the weather in Paris right now, in Fahrenheit?"
    if "input" in gaps(folder, "turn1"):  # the question only inside a framework's template
        assert question in prompt
    else:
        assert f"User: {question}" in prompt
    # the tool as the model called it (Semantic Kernel qualifies it with its plugin's name);
    # where the client exports no tool name (CLIENT.json gap), its arguments still
    name = client_info(folder).get("tool_names", {}).get("get_weather", "get_weather")
    if "tool_calls" in gaps(folder, "turn1"):
        assert '(args: {"city": "Paris"})' in prompt
    else:
        assert f'#1 {name}(args: {{"city": "Paris"}})' in prompt
    assert result.reason is not None and result.reason.startswith("1 of 2 goals achieved")
    assert_recorded(result, ["analyze"])


def test_the_largest_capture(llm_server: Any) -> None:
    llm_server.script(GOALS)
    result = create_goal_completion_scorer(judge(llm_server)).run_sync(fixture_run(*LARGEST))
    assert result.score == 0.75
    assert "Lisbon" in prompt_of(llm_server.requests[0])


def test_a_session_judges_the_goals_of_the_whole_conversation(llm_server: Any) -> None:
    turns = [turn_of(trace_of(rows_of(TOOLS_FOLDER, s))) for s in ("turn1", "turn2")]
    run = Session("session-fixture-1", turns).scorer_run("agent")
    llm_server.script({"goals": [*GOALS["goals"], {"goal": "umbrella advice",
                                                   "status": "achieved", "evidence": "yes"}]})
    result = create_goal_completion_scorer(judge(llm_server)).run_sync(run)
    assert result.score == 0.83
    assert result.preprocess_step_result["user_messages"] == 2
    prompt = prompt_of(llm_server.requests[0])
    paris = prompt.index("User: What is the weather in Paris right now")
    assert paris < prompt.index("User: Should I bring an umbrella?")


def test_no_user_message_is_not_scorable_without_a_judge_call(llm_server: Any) -> None:
    result = create_goal_completion_scorer(judge(llm_server)).run_sync(
        input=[{"role": "system", "content": "be nice"}], output="Hello!")
    assert result.score is None and result.not_scorable is not None
    assert result.not_scorable.step == "preprocess"
    assert "no user message" in (result.not_scorable.reason or "")
    assert llm_server.requests == []


def test_a_run_too_long_for_the_judge_is_navigated(llm_server: Any) -> None:
    gpt4 = Judge(model="openai/gpt-4", api_base=llm_server.url)  # 8,192 input tokens
    llm_server.script(sized_reply(tool_calls=[tool_call("search_trace", query="timeout")]),
                      sized_reply(tool_calls=[tool_call("read_step", step="s288")]),
                      sized_reply(content=GOALS))
    # 801 spans: the whole conversation (~32,000 characters) does not fit gpt-4's context
    result = create_goal_completion_scorer(gpt4).run_sync(traced_run(repeated_rows(160)))
    assert result.score == 0.75 and result.not_scorable is None
    executions = result.judge["analyze"].executions
    assert len(executions) == 3
    assert "s288 [tool_call] get_weather" in (executions[1].prompt or "")
    assert "upstream timeout after 30 s" in (executions[2].prompt or "")
    first = llm_server.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == {
        "outline", "read_step", "read_span", "search_trace"}
    opening = first["messages"][-1]["content"]
    assert "Outline of the run: 801 steps, 1 with errors (s288)" in opening
    assert "The agent's final answer:\nRight now it is cloudy in Paris" in opening
    assert sum(e.usage.total_tokens for e in executions if e.usage) < 50_000


def test_in_the_catalogue() -> None:
    scorer = CATALOGUE["goal-completion-scorer"]("openai/gpt-4o-mini", scale=3)
    assert (scorer.id, scorer.name, scorer.type) == (
        "goal-completion-scorer", "Goal Completion (LLM)", "agent")
    with pytest.raises(TypeError, match="unknown option"):
        create_goal_completion_scorer("openai/x", options={"criterion": "x"})
    with pytest.raises(ValueError, match="max_tool_calls must be"):
        create_goal_completion_scorer("openai/x", options={"maxToolCalls": 0})
