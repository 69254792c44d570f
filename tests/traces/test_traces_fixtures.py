"""The four captured clients, per scenario of tests/fixtures/SCENARIO.json: the same agent input,
output and trajectory whatever convention traced the run."""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.model import AgentInput, Message, ScorerRun, Trajectory
from tracescore.traces import (
    extract_trajectory_from_trace,
    find_target_spans,
    scorer_input,
    trace_to_agent_run,
)

from .helpers import CASES, INDEX, SCENARIO, fixture_trace, scenario_tools

SYSTEM = SCENARIO["system_prompt"]
TURN1_Q = SCENARIO["turn1"]["input_messages"][0]["text"]
TURN1_A = SCENARIO["turn1"]["final_text"]
TURN2_Q = SCENARIO["turn2"]["input_messages"][0]["text"]
TURN2_A = SCENARIO["turn2"]["final_text"]
LISBON_A = SCENARIO["workflow"]["nested_agent_final_text"]

# (prompt, completion) tokens of each single model call, read from each capture's model spans.
TOKENS = {
    ("mastra-otel-exporter-protobuf", "turn1"): [(231, 12), (308, 13), (376, 12)],
    ("mastra-otel-exporter-protobuf", "turn2"): [(415, 16)],
    ("mastra-otel-exporter-protobuf", "workflow"): [(228, 12), (306, 13), (374, 12)],
    ("py-openinference-openai", "turn1"): [(189, 12), (268, 13), (336, 12)],
    ("py-openinference-openai", "turn2"): [(375, 16)],
    ("py-openinference-openai", "workflow"): [(186, 12), (266, 13), (334, 12)],
    ("py-openai-v2-genai-span", "turn1"): [(189, 12), (268, 13), (336, 12)],
    ("py-openai-v2-genai-span", "turn2"): [(375, 16)],
    ("py-openai-v2-genai-span", "workflow"): [(186, 12), (266, 13), (334, 12)],
    ("aisdk5-experimental-telemetry", "turn1"): [(240, 12), (317, 13), (385, 12)],
    ("aisdk5-experimental-telemetry", "turn2"): [(424, 16)],
}
TURN_CASES = [c for c in CASES if c[1] in ("turn1", "turn2")]
WORKFLOW_CASES = [c for c in CASES if c[1] == "workflow"]


def _tool_calls(messages: list[Message]) -> list[tuple[str, Any, Any, str]]:
    return [
        (inv.tool_name, inv.args, inv.result, inv.state)
        for message in messages
        for inv in message.tool_invocations
    ]


def _shape(steps: list[Any]) -> list[Any]:
    """Trajectory steps as (step_type, name[, children]) for comparing nesting."""
    out: list[Any] = []
    for step in steps:
        if step.children:
            out.append((step.step_type, step.name, _shape(step.children)))
        else:
            out.append((step.step_type, step.name))
    return out


_turn1_tools = scenario_tools


AGENT_LOOP = [
    ("model_generation", "gpt-4o-mini"),
    ("tool_call", "get_weather"),
    ("model_generation", "gpt-4o-mini"),
    ("tool_call", "convert_temperature"),
    ("model_generation", "gpt-4o-mini"),
]


@pytest.mark.parametrize(("folder", "scenario"), TURN_CASES)
def test_agent_input(folder: str, scenario: str) -> None:
    run = trace_to_agent_run(fixture_trace(folder, scenario))
    assert isinstance(run, ScorerRun)
    assert isinstance(run.input, AgentInput)
    question = TURN1_Q if scenario == "turn1" else TURN2_Q
    assert [(m.role, m.content) for m in run.input.input_messages] == [("user", question)]
    assert [(m.role, m.content) for m in run.input.system_messages] == [("system", SYSTEM)]
    remembered = run.input.remembered_messages
    if scenario == "turn1":
        assert remembered == []
    else:
        assert remembered[0].role == "user" and remembered[0].content == TURN1_Q
        assert remembered[-1].role == "assistant" and remembered[-1].content == TURN1_A
        assert all(m.role != "system" for m in remembered)
        assert TURN2_Q not in [m.content for m in remembered]
        # Every client here keeps turn 1's tool calls in the history, with their results.
        assert _tool_calls(remembered) == _turn1_tools("Paris")


@pytest.mark.parametrize(("folder", "scenario"), TURN_CASES)
def test_agent_output(folder: str, scenario: str) -> None:
    run = trace_to_agent_run(fixture_trace(folder, scenario))
    output = run.output
    assert [m.role for m in output] == ["assistant"]
    answer = TURN1_A if scenario == "turn1" else TURN2_A
    assert output[0].content == answer
    expected = _turn1_tools("Paris") if scenario == "turn1" else []
    assert _tool_calls(output) == expected
    # Parts: the invocations in call order, then the answer.
    kinds = [p.type for p in output[0].parts]
    assert kinds == ["tool-invocation"] * len(expected) + ["text"]
    assert run.trace_id == INDEX[folder]["traces"][["turn1", "turn2"].index(scenario)]["traceId"]
    assert (
        run.span_id
        == INDEX[folder]["traces"][["turn1", "turn2"].index(scenario)]["root"][0]["spanId"]
    )


@pytest.mark.parametrize(("folder", "scenario"), TURN_CASES)
def test_agent_trajectory(folder: str, scenario: str) -> None:
    trajectory = extract_trajectory_from_trace(fixture_trace(folder, scenario))
    assert isinstance(trajectory, Trajectory)
    expected = AGENT_LOOP if scenario == "turn1" else [("model_generation", "gpt-4o-mini")]
    assert _shape(trajectory.steps) == expected
    tools = [s for s in trajectory.steps if s.step_type == "tool_call"]
    assert [(s.tool_args, s.tool_result, s.success) for s in tools] == [
        (args, result, True) for _, args, result, _ in (_turn1_tools("Paris") if tools else [])
    ]
    models = [s for s in trajectory.steps if s.step_type == "model_generation"]
    assert [(s.prompt_tokens, s.completion_tokens) for s in models] == TOKENS[(folder, scenario)]
    assert all(s.model_id == "gpt-4o-mini" for s in models)
    assert models[-1].finish_reason == "stop"
    assert trajectory.total_duration_ms and trajectory.total_duration_ms > 0
    assert trajectory.raw_output is not None
    assert trajectory.raw_output[0].content == (TURN1_A if scenario == "turn1" else TURN2_A)


@pytest.mark.parametrize(("folder", "scenario"), TURN_CASES)
def test_scorer_input_for_agent(folder: str, scenario: str) -> None:
    trace = fixture_trace(folder, scenario)
    data = scorer_input(trace)
    assert set(data) == {"trace_id", "span_id", "kind", "input", "output", "trajectory"}
    assert data["kind"] == "agent"
    assert data["trace_id"] == trace.trace_id
    assert data["span_id"] == find_target_spans(trace, "trace")[0]
    assert set(data["input"]) >= {
        "input_messages",
        "remembered_messages",
        "system_messages",
        "tagged_system_messages",
    }
    question = TURN1_Q if scenario == "turn1" else TURN2_Q
    assert data["input"]["input_messages"][0]["content"] == question
    assert data["output"][0]["role"] == "assistant"
    assert data["output"][0]["content"] == (TURN1_A if scenario == "turn1" else TURN2_A)
    names = [inv["tool_name"] for inv in data["output"][0]["tool_invocations"]]
    assert names == (["get_weather", "convert_temperature"] if scenario == "turn1" else [])
    steps = data["trajectory"]["steps"]
    assert [(s["step_type"], s["name"]) for s in steps] == (
        AGENT_LOOP if scenario == "turn1" else [("model_generation", "gpt-4o-mini")]
    )


@pytest.mark.parametrize(("folder", "scenario"), WORKFLOW_CASES)
def test_workflow(folder: str, scenario: str) -> None:
    trace = fixture_trace(folder, scenario)
    data = scorer_input(trace)
    assert data["kind"] == "workflow"
    assert data["span_id"] == INDEX[folder]["traces"][2]["root"][0]["spanId"]
    assert SCENARIO["workflow"]["input"] in str(data["input"])
    assert SCENARIO["workflow"]["output"] in str(data["output"])

    trajectory = extract_trajectory_from_trace(trace)
    agent_loop = [(t, n) for t, n in AGENT_LOOP]
    shape = _shape(trajectory.steps)
    assert shape[0] == ("workflow_step", "parse-request")
    assert shape[2] == ("workflow_step", "format-report")
    step_type, name, children = shape[1]
    assert (step_type, name) == ("workflow_step", "ask-weather-agent")
    assert len(children) == 1 and children[0][0] == "agent_run"
    assert children[0][2] == agent_loop
    assert [s.step_id for s in trajectory.steps] == [
        "parse-request",
        "ask-weather-agent",
        "format-report",
    ]
    assert all(s.status == "success" for s in trajectory.steps)
    raw = trajectory.raw_workflow_result
    assert raw is not None
    assert raw.step_execution_path == ["parse-request", "ask-weather-agent", "format-report"]
    if folder != "py-openai-v2-genai-span":  # its step spans carry only workflow.step.id
        assert "Lisbon" in str(raw.step_results["parse-request"]["output"])
        assert "[Lisbon]" in str(raw.step_results["format-report"]["output"])
    nested = trajectory.steps[1].children[0]
    models = [s for s in nested.children if s.step_type == "model_generation"]
    assert [(s.prompt_tokens, s.completion_tokens) for s in models] == TOKENS[(folder, scenario)]

    # The nested agent, as an agent scorer sees it.
    run = trace_to_agent_run(trace)
    assert run.span_id == nested.metadata["span_id"]
    assert [m.content for m in run.input.input_messages] == [
        "What is the weather in Lisbon, in Fahrenheit?"
    ]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.output[0].content == LISBON_A
    assert _tool_calls(run.output) == _turn1_tools("Lisbon")


@pytest.mark.parametrize(("folder", "scenario"), CASES)
def test_find_target_spans(folder: str, scenario: str) -> None:
    trace = fixture_trace(folder, scenario)
    root = INDEX[folder]["traces"][[s for _, s in CASES if _ == folder].index(scenario)]["root"][0]
    assert find_target_spans(trace, "trace") == [root["spanId"]]
    calls = find_target_spans(trace, "model_generation")
    assert len(calls) == len(TOKENS[(folder, scenario)])
    assert len(find_target_spans(trace, "tool_call")) == (0 if scenario == "turn2" else 2)
    assert len(find_target_spans(trace, "agent_run")) == 1
    expected_steps = 3 if scenario == "workflow" else 0
    assert len(find_target_spans(trace, "workflow_step")) == expected_steps
    assert len(find_target_spans(trace, "workflow_run")) == (1 if scenario == "workflow" else 0)


def test_tokens_are_not_double_counted_where_parents_repeat_them() -> None:
    """The AI SDK root repeats the last call's usage; Mastra's model_generation sums nothing here
    but wraps three calls: only single calls count."""
    trace = fixture_trace("aisdk5-experimental-telemetry", "turn1")
    root = trace.steps[0]
    assert root.usage == {"input_tokens": 385, "output_tokens": 12}
    assert not root.is_model_call
    total = sum(s.usage["input_tokens"] for s in root.walk() if s.is_model_call and s.usage)
    assert total == 240 + 317 + 385
