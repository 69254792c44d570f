"""Every captured client, one set of assertions: the scorer input is the scenario's, whatever the
framework and its instrumentation (tests/fixtures/SCENARIO.json; issue 11).

Each folder of tests/fixtures is one real client configuration. Per scenario trace, one test per
assertion: the exact input text, the system prompt, the remembered history (with turn 1's tool
calls), the final output text, the tool calls with args and results, the flat per-call
trajectory, the tokens of each call, the tool spans, the agent's name, the session, the workflow
shape and the nested agent by span id. Where a client really does not capture something, its
``CLIENT.json`` lists a gap (``{"assertion", "scenarios", "reason"}``) and that one assertion
is skipped for that scenario with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from tracescore.model import Message, ScorerRun, Trajectory
from tracescore.traces import (
    Step,
    Trace,
    extract_trajectory_from_trace,
    find_target_spans,
    scorer_input,
    trace_to_agent_run,
)

from .helpers import (
    ALL_CASES,
    ALL_FOLDERS,
    FIXTURES,
    INDEX,
    SCENARIO,
    client_info,
    fixture_trace,
    gaps,
    model_usage,
    scenario_tools,
    scenarios,
)

SYSTEM = SCENARIO["system_prompt"]
LISBON_Q = "What is the weather in Lisbon, in Fahrenheit?"
QUESTIONS = {
    "turn1": SCENARIO["turn1"]["input_messages"][0]["text"],
    "turn2": SCENARIO["turn2"]["input_messages"][0]["text"],
    "workflow": LISBON_Q,
    "handoff": LISBON_Q,  # to a triage agent, which hands off to the weather agent
}
ANSWERS = {
    "turn1": SCENARIO["turn1"]["final_text"],
    "turn2": SCENARIO["turn2"]["final_text"],
    "workflow": SCENARIO["workflow"]["nested_agent_final_text"],
    "handoff": SCENARIO["workflow"]["nested_agent_final_text"],
}
SHARED_AGENT_NAMES = {
    "mastra-otel-exporter-protobuf": "Weather Agent",
    "aisdk5-experimental-telemetry": "weather-agent",
    "py-openai-v2-genai-span": "weather-agent",
    "py-openinference-openai": "weather-agent",
}
LOOP = [
    ("model_generation", None),
    ("tool_call", "get_weather"),
    ("model_generation", None),
    ("tool_call", "convert_temperature"),
    ("model_generation", None),
]


def _tools(scenario: str, folder: str = "") -> list[tuple[str, Any, Any, str]]:
    """The scenario's tool calls, named as the client offered them to the model (CLIENT.json
    ``tool_names``: Semantic Kernel qualifies them with the plugin's name)."""
    if scenario == "turn2":
        return []
    names = client_info(folder).get("tool_names") or {} if folder else {}
    return [
        (names.get(name, name), args, result, state)
        for name, args, result, state in scenario_tools(
            "Paris" if scenario == "turn1" else "Lisbon"
        )
    ]


def _calls(messages: list[Message]) -> list[tuple[str, Any, Any, str]]:
    return [
        (inv.tool_name, inv.args, inv.result, inv.state)
        for message in messages
        for inv in message.tool_invocations
    ]


class _View:
    """What scorers see of one scenario trace (built once per trace)."""

    def __init__(self, folder: str, scenario: str) -> None:
        self.folder = folder
        self.scenario = scenario
        self.trace: Trace = fixture_trace(folder, scenario)
        self.data = scorer_input(self.trace)
        self.run: ScorerRun = trace_to_agent_run(self.trace)
        self.agent_trajectory: Trajectory = extract_trajectory_from_trace(
            self.trace, self.run.span_id
        )

    def step(self, span_id: str | None) -> Step:
        for root in self.trace.steps:
            for step in root.walk():
                if step.span_id == span_id:
                    return step
        raise AssertionError(f"no step {span_id}")


@cache
def _view(folder: str, scenario: str) -> _View:
    return _View(folder, scenario)


# --- what an agent scorer sees (a turn's agent, or a workflow's nested agent) ---------------


def _input(v: _View) -> None:
    assert [(m.role, m.content) for m in v.run.input.input_messages] == [
        ("user", QUESTIONS[v.scenario])
    ]


def _triage_instructions(folder: str) -> str:
    """The instructions of the agent that was offered a handoff: the first request offering a
    tool that is not one of the scenario's (``transfer_to_*``, ``delegate_task``)."""
    scenario_tools = {tool["name"] for tool in SCENARIO["tools"]}
    for line in (FIXTURES / folder / "requests.jsonl").read_text().splitlines():
        body = json.loads(line)["body"]
        names = [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])]
        if any(n not in scenario_tools for n in names):
            if body.get("instructions"):
                return str(body["instructions"])
            system = [m for m in body.get("messages", []) if m.get("role") == "system"]
            return str(system[0]["content"]) if system else ""
    raise AssertionError("no request offered a handoff")


def _system(v: _View) -> None:
    expected = _triage_instructions(v.folder) if v.scenario == "handoff" else SYSTEM
    assert [m.content for m in v.run.input.system_messages] == [expected]


def _history(v: _View) -> None:
    remembered = v.run.input.remembered_messages
    if v.scenario != "turn2":
        assert remembered == []
        return
    assert (remembered[0].role, remembered[0].content) == ("user", QUESTIONS["turn1"])
    assert (remembered[-1].role, remembered[-1].content) == ("assistant", ANSWERS["turn1"])
    assert all(m.role != "system" for m in remembered)
    assert QUESTIONS["turn2"] not in [m.content for m in remembered]


def _history_tools(v: _View) -> None:
    if v.scenario == "turn2":
        assert _calls(v.run.input.remembered_messages) == _tools("turn1", v.folder)


def _output(v: _View) -> None:
    assert [m.role for m in v.run.output] == ["assistant"]
    assert v.run.output[0].content == ANSWERS[v.scenario]


def _tool_calls(v: _View) -> None:
    assert _calls(v.run.output) == _tools(v.scenario, v.folder)


def _trajectory(v: _View) -> None:
    """One flat list of this run's calls in order: each model call, each tool call beside it."""
    steps = v.agent_trajectory.steps
    if v.scenario == "handoff":
        # The triage agent's call that handed off, then the handed-to agent's run as a child.
        assert [s.step_type for s in steps] == ["model_generation", "agent_run"]
        steps = steps[1].children or []
    assert all(not s.children for s in steps), [s.step_type for s in steps]
    flat = [(s.step_type, s.name if s.step_type == "tool_call" else None) for s in steps]
    names = client_info(v.folder).get("tool_names") or {}
    loop = [(kind, names.get(name, name) if name else name) for kind, name in LOOP]
    assert flat == (loop if _tools(v.scenario) else loop[:1])
    models = [s for s in steps if s.step_type == "model_generation"]
    # The requested model, maybe with a router's provider prefix (LiteLLM's "openai/…").
    assert all(s.model_id and SCENARIO["model"]["requested"] in s.model_id for s in models)
    tools = [s for s in steps if s.step_type == "tool_call"]
    assert [(s.tool_args, s.tool_result) for s in tools] == [
        (args, result) for _, args, result, _ in _tools(v.scenario, v.folder)
    ]
    if "output" in gaps(v.folder, v.scenario):  # no final answer sent whole: none shown
        assert not (v.agent_trajectory.raw_output or [Message(role="assistant")])[0].content
        return
    assert v.agent_trajectory.raw_output is not None
    assert v.agent_trajectory.raw_output[0].content == ANSWERS[v.scenario]


def _tokens(v: _View) -> None:
    steps = v.agent_trajectory.steps
    models = [s for s in steps if s.step_type == "model_generation"]
    models += [c for s in steps for c in s.children or [] if c.step_type == "model_generation"]
    assert models and all(s.prompt_tokens and s.completion_tokens for s in models)


def _tool_spans(v: _View) -> None:
    """The tool executions are spans of their own (targetable by tool_call scorers)."""
    assert len(find_target_spans(v.trace, "tool_call")) == len(_tools(v.scenario))
    steps = v.agent_trajectory.steps
    tools = [s for s in [*steps, *(c for s in steps for c in s.children or [])]]
    tools = [s for s in tools if s.step_type == "tool_call"]
    assert len(tools) == len(_tools(v.scenario))
    assert all(s.success and s.metadata and s.metadata.get("span_id") for s in tools)


def _agent_name(v: _View) -> None:
    name = client_info(v.folder).get("agent_name") or SHARED_AGENT_NAMES.get(v.folder)
    if name is None:
        pytest.skip("the client names no agent")
    name = name.split(" (")[0]  # "weather_agent (handoff: triage_agent → weather_agent)"
    step = v.step(v.run.span_id)
    if v.scenario == "handoff":
        [step] = [c for c in step.children if c.kind == "agent_run"]
    assert step.name == name


def _session(v: _View) -> None:
    if v.scenario == "workflow" and not client_info(v.folder):
        pytest.skip("the shared workflow captures set no conversation id")
    assert v.run.request_context and v.run.request_context.get("conversation_id")


AGENT_ASSERTIONS: dict[str, Callable[[_View], None]] = {
    "input": _input,
    "system": _system,
    "history": _history,
    "history_tools": _history_tools,
    "output": _output,
    "tool_calls": _tool_calls,
    "trajectory": _trajectory,
    "tokens": _tokens,
    "tool_spans": _tool_spans,
    "agent_name": _agent_name,
    "session": _session,
}


# --- the target of a trace ------------------------------------------------------------------


def _target(v: _View) -> None:
    """The default target: the agent run of a turn (the same when asked for by its span id)."""
    data = v.data
    if v.scenario == "workflow":
        assert data["kind"] == "workflow"
        return
    assert data["kind"] == "agent"
    assert data["span_id"] == find_target_spans(v.trace, "trace")[0]
    assert find_target_spans(v.trace, "agent_run")[:1] == [data["span_id"]]
    assert data["span_id"] == v.run.span_id
    by_id = scorer_input(v.trace, data["span_id"])
    assert by_id["kind"] == "agent" and by_id["input"] == data["input"]


def _norm(name: str) -> str:
    """A step name in one spelling: ``parse_request``, ``ParseRequest`` → ``parse-request``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).replace("_", "-").lower()


def _workflow_shape(v: _View) -> None:
    """Steps in order, the nested agent a child of the middle one (or, where the framework makes
    the agent itself a node of the workflow, the middle node)."""
    trajectory = extract_trajectory_from_trace(v.trace)
    steps = trajectory.steps
    names = [_norm(s.name) for s in steps]
    assert [names[0], names[-1]] == ["parse-request", "format-report"] and len(steps) == 3
    middle = steps[1]
    if middle.step_type == "agent_run":  # Google ADK: the agent node is the step
        nested = middle
        assert [s.step_type for s in (steps[0], steps[2])] == ["workflow_step"] * 2
    else:
        assert names[1] == "ask-weather-agent"
        assert [s.step_type for s in steps] == ["workflow_step"] * 3
        [nested] = middle.children or []
    raw = trajectory.raw_workflow_result
    assert raw is not None
    assert [_norm(p) for p in raw.step_execution_path] == [
        n for n, s in zip(names, steps, strict=True) if s.step_type == "workflow_step"
    ]
    assert nested.step_type == "agent_run"
    assert nested.metadata is not None and nested.metadata["span_id"] == v.run.span_id


def _nested_agent(v: _View) -> None:
    """The nested agent is the trace's one agent run, targetable by its span id."""
    span_id = v.run.span_id
    assert span_id and find_target_spans(v.trace, "agent_run") == [span_id]
    by_id = scorer_input(v.trace, span_id)
    assert by_id["kind"] == "agent" and by_id["span_id"] == span_id
    assert by_id["input"]["input_messages"][0]["content"] == QUESTIONS["workflow"]
    assert by_id["output"][0]["content"] == ANSWERS["workflow"]


def _workflow(v: _View) -> None:
    """The workflow run's own input and output text."""
    assert SCENARIO["workflow"]["input"] in str(v.data["input"])
    assert SCENARIO["workflow"]["output"] in str(v.data["output"])


def _handoff(v: _View) -> None:
    """The handed-to agent is a child of the triage agent, targetable by its span id, with its
    own system prompt, the user's question and the answer."""
    [nested] = [c for c in v.step(v.run.span_id).children if c.kind == "agent_run"]
    assert find_target_spans(v.trace, "agent_run") == [v.run.span_id, nested.span_id]
    run = trace_to_agent_run(v.trace, nested.span_id)
    assert [m.content for m in run.input.input_messages] == [LISBON_Q]
    assert [m.content for m in run.input.system_messages] == [SYSTEM]
    assert run.input.remembered_messages == []
    assert run.output[0].content == ANSWERS["handoff"]
    assert _calls(run.output) == _tools("handoff", v.folder)


HANDOFF_ASSERTIONS: dict[str, Callable[[_View], None]] = {"handoff": _handoff}


WORKFLOW_ASSERTIONS: dict[str, Callable[[_View], None]] = {
    "workflow": _workflow,
    "workflow_shape": _workflow_shape,
    "nested_agent": _nested_agent,
}


# Gaps a client's CLIENT.json states in its ``where`` text but not under an assertion name.
STATED_GAPS = {
    ("py-crewai-openinference", "turn2", "history_tools"): "the app hands CrewAI turn 1 as "
    "user and assistant text only, without its tool calls (CLIENT.json where.history)",
}


def _cases() -> list[Any]:
    out = []
    for folder, scenario in ALL_CASES:
        names = ["target", *AGENT_ASSERTIONS]
        if scenario == "workflow":
            names += list(WORKFLOW_ASSERTIONS)
        if scenario == "handoff":
            names += list(HANDOFF_ASSERTIONS)
        for name in names:
            out.append(pytest.param(folder, scenario, name, id=f"{folder}-{scenario}-{name}"))
    return out


ASSERTIONS = {
    "target": _target,
    **AGENT_ASSERTIONS,
    **WORKFLOW_ASSERTIONS,
    **HANDOFF_ASSERTIONS,
}


@pytest.mark.parametrize(("folder", "scenario", "assertion"), _cases())
def test_client_scenario(folder: str, scenario: str, assertion: str) -> None:
    """One assertion on one scenario trace of one client (skipped where the client says it does
    not capture that)."""
    found = gaps(folder, scenario)
    reason = (
        found.get(assertion)
        or (found.get("history") if assertion == "history_tools" else None)
        or STATED_GAPS.get((folder, scenario, assertion))
    )
    if reason is not None:
        pytest.skip(f"{folder} {scenario}: {reason}")
    ASSERTIONS[assertion](_view(folder, scenario))


@pytest.mark.parametrize("folder", ALL_FOLDERS)
def test_tokens_per_call_are_counted_once(folder: str) -> None:
    """Each model request the client made is one model call with that request's tokens: across
    the capture's traces, in time order, the calls' tokens are the stand-in's answers, request by
    request (no call counted twice, none missing)."""
    reasons = {gaps(folder, s).get("tokens") for s in scenarios(folder)} - {None}
    if reasons:
        pytest.skip("; ".join(sorted(str(r) for r in reasons)))
    calls: list[Step] = []
    for item in INDEX[folder]["traces"]:
        trace = fixture_trace(folder, item["scenario"])
        calls.extend(s for root in trace.steps for s in root.walk() if s.is_model_call)
    calls.sort(key=lambda s: s.start_time_ns)
    tokens = [
        ((s.usage or {}).get("input_tokens"), (s.usage or {}).get("output_tokens")) for s in calls
    ]
    assert tokens == list(model_usage(folder))
