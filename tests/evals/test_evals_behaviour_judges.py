"""run_evals with the behaviour judges (issue 30): an agent that plans, calls tools and answers,
scored by goal completion, plan adherence, tool-argument correctness and the trace judge (which
navigates the run's own data, no trace needed); goal completion per turn of a conversation."""

from __future__ import annotations

import re
from typing import Any

from tracescore import Judge, run_evals_sync
from tracescore.scorers import (
    create_goal_completion_scorer,
    create_plan_adherence_scorer,
    create_tool_argument_scorer,
    create_trace_judge,
)
from tracescore.testing import Reply, ScriptedLLMServer

WEATHER = {"name": "get_weather", "description": "Current weather of a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def weather_agent(text: str) -> list[dict[str, Any]]:
    """States a plan, calls get_weather for the city it was asked about, answers."""
    city = "Umbrella" if "umbrella" in text else text.rsplit(" ", 1)[-1].strip("?")
    call = {"type": "tool-invocation", "tool_invocation": {
        "tool_call_id": "c1", "tool_name": "get_weather", "args": {"city": city},
        "state": "result", "result": {"temperatureC": 18}}}
    return [{"role": "assistant", "parts": [
        {"type": "text", "text": f"I will look up the weather in {city}."}, call,
        {"type": "text", "text": f"It is 18°C in {city}."}]}]


def respond(body: dict[str, Any]) -> Reply:
    system = body["messages"][0]["content"]
    prompt = body["messages"][1]["content"]
    if body.get("tools"):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply(tool_calls=[{"name": "search_trace",
                                      "arguments": {"query": "get_weather"}}])
        return Reply(content={"reasoning": "one call, answered", "satisfied": True})
    if "achieved what its user wanted" in system:
        return Reply(content={"goals": [{"goal": "weather", "status": "achieved",
                                         "evidence": "18°C"}]})
    if "followed the plan" in system:
        return Reply(content={"steps": [{"step": "look up the weather", "planned": True,
                                         "verdict": "followed", "evidence": "#1"}]})
    asked = re.findall(r"#(\d+) \w+", prompt.split("For each", 1)[0])
    return Reply(content={"calls": [{"index": int(i), "verdict": "correct"} for i in asked]})


def test_run_evals_with_the_behaviour_judges() -> None:
    with ScriptedLLMServer() as server:
        server.set_default(respond)
        judge = Judge(model="openai/scripted-judge", api_base=server.url)
        result = run_evals_sync(
            weather_agent,
            [{"input": "What is the weather in Oslo",
              "request_context": {"tool_definitions": [WEATHER]}}],
            scorers=[create_goal_completion_scorer(judge), create_plan_adherence_scorer(judge),
                     create_tool_argument_scorer(judge),
                     create_trace_judge(judge, criterion="It looked the weather up.")],
        )
        assert result.scores == {"goal-completion-scorer": 1.0, "plan-adherence-scorer": 1.0,
                                 "tool-argument-scorer": 1.0, "trace-judge": 1.0}
        [item] = result.items
        arguments = item.scorer_results["tool-argument-scorer"]
        assert arguments.preprocess_step_result["tools_offered"] == ["get_weather"]
        plan = item.scorer_results["plan-adherence-scorer"]
        assert plan.preprocess_step_result["plan"] == "I will look up the weather in Oslo."
        navigated = item.scorer_results["trace-judge"].judge["analyze"].executions
        assert "get_weather" in (navigated[1].prompt or "")  # the search over the run's data


def test_goal_completion_per_turn_sees_the_earlier_turns() -> None:
    with ScriptedLLMServer() as server:
        server.set_default(respond)
        judge = Judge(model="openai/scripted-judge", api_base=server.url)
        result = run_evals_sync(weather_agent, [{"turns": [
            "What is the weather in Lisbon",
            {"input": "Should I bring an umbrella?",
             "scorers": [create_goal_completion_scorer(judge)]}]}])
        [turn] = [t for t in result.items[0].turn_results or [] if t.index == 1]
        goal = turn.scorer_results["goal-completion-scorer"]
        assert goal.score == 1.0 and goal.preprocess_step_result["user_messages"] == 2
        prompt = goal.analyze_prompt or ""
        assert prompt.index("User: What is the weather in Lisbon") < prompt.index(
            "User: Should I bring an umbrella?")
