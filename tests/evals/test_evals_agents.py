"""run_evals against agents: plain functions, sync and async objects with real memory,
multi-turn ``inputs`` and ``turns``, options and request context, and every agent scorer form."""

from __future__ import annotations

from typing import Any

import pytest
from evals_helpers import (
    AsyncMemoryAgent,
    MemoryAgent,
    contains,
    fixed,
    matches_ground_truth,
    weather_tool_message,
)

from tracescore.evals import (
    AgentResponse,
    AgentScorerConfig,
    EvalItem,
    EvalResult,
    run_evals,
    run_evals_sync,
)
from tracescore.model import AgentInput, Message, Trajectory, get_user_message
from tracescore.scoring import create_scorer


async def test_plain_function_agent_is_scored_on_every_item() -> None:
    def shout(text: str) -> str:
        return text.upper()

    result = await run_evals(
        shout,
        [{"input": "hello", "ground_truth": "HELLO"}, {"input": "bye", "ground_truth": "BYE!"}],
        scorers=[matches_ground_truth("exact"), fixed("constant", 0.25)],
    )
    assert isinstance(result, EvalResult)
    assert result.scores == {"exact": 0.5, "constant": 0.25}
    assert result.summary.total_items == 2
    assert result.summary.errors == 0
    assert result.verdict is None and result.gate_results is None
    assert [i.input for i in result.items] == ["hello", "bye"]
    assert [i.output[0].content for i in result.items] == ["HELLO", "BYE"]
    assert result.items[0].scorer_results["exact"].score == 1.0
    assert result.items[1].scorer_results["exact"].score == 0.0


async def test_agent_scorers_see_an_agent_input_and_output_messages() -> None:
    seen: list[tuple[Any, Any]] = []

    def record(run: Any, results: Any) -> float:
        seen.append((run.input, run.output))
        return 1.0

    scorer = create_scorer("record", "records what it sees").generate_score(record)
    await run_evals(lambda text: f"echo {text}", [{"input": "ping"}], scorers=[scorer])
    (scorer_input, scorer_output), = seen
    assert isinstance(scorer_input, AgentInput)
    assert [m.content for m in scorer_input.input_messages] == ["ping"]
    assert all(isinstance(m, Message) for m in scorer_output)
    assert [(m.role, m.content) for m in scorer_output] == [("assistant", "echo ping")]


@pytest.mark.parametrize("agent_class", [MemoryAgent, AsyncMemoryAgent])
async def test_multi_turn_inputs_share_a_thread_so_memory_recall_is_real(agent_class: Any) -> None:
    agent = agent_class()
    data = [
        {"inputs": ["My name is Ada", "What is my name?"]},
        {"inputs": ["My name is Bob", "What is my name?"]},
        {"input": "What is my name?"},
    ]
    result = await run_evals(agent, data, scorers=[contains("recalls", "Your name is")])
    assert result.scores == {"recalls": pytest.approx(2 / 3)}
    assert result.items[0].output[-1].content == "Your name is Ada."
    assert result.items[1].output[-1].content == "Your name is Bob."
    assert result.items[2].output[-1].content == "I do not know your name."
    # The two turns of one item share a generated thread; items get different threads.
    threads = [c["thread_id"] for c in agent.calls]
    assert threads[0] == threads[1] and threads[2] == threads[3]
    assert threads[0] != threads[2] and threads[0] is not None
    assert threads[4] is None
    # resource_id defaults to the thread id.
    assert [c["resource_id"] for c in agent.calls[:2]] == [threads[0], threads[0]]


async def test_multi_turn_scorers_see_first_input_and_accumulated_output() -> None:
    seen: list[tuple[str, int]] = []

    def record(run: Any, results: Any) -> float:
        seen.append((get_user_message(run.input), len(run.output)))
        return 1.0

    scorer = create_scorer("record", "x").generate_score(record)
    result = await run_evals(MemoryAgent(), [{"inputs": ["one", "two", "three"]}],
                             scorers=[scorer])
    assert seen == [("one", 3)]  # scored once per item, on all three turns' output
    assert [m.content for m in result.items[0].output] == [
        "You said: one", "You said: two", "You said: three",
    ]
    assert result.items[0].input == ["one", "two", "three"]


async def test_target_options_pass_through_and_can_pin_the_resource() -> None:
    agent = MemoryAgent()
    await run_evals(
        agent,
        [{"inputs": ["a", "b"]}, {"input": "c"}],
        scorers=[fixed("f", 1.0)],
        target_options={"resource_id": "user-7", "temperature": 0.2},
    )
    assert [c["resource_id"] for c in agent.calls] == ["user-7", "user-7", "user-7"]
    assert all(c["options"] == {"temperature": 0.2} for c in agent.calls)
    assert agent.calls[0]["thread_id"] == agent.calls[1]["thread_id"] is not None


async def test_request_context_reaches_the_agent_and_every_scorer() -> None:
    agent = MemoryAgent()
    contexts: list[Any] = []

    def record(run: Any, results: Any) -> float:
        contexts.append(run.request_context)
        return 1.0

    await run_evals(
        agent,
        [EvalItem(input="hi", request_context={"user_id": "u1"})],
        scorers=[create_scorer("ctx", "x").generate_score(record)],
        gates=[fixed("gate", 1.0)],
    )
    assert agent.calls[0]["request_context"] == {"user_id": "u1"}
    assert contexts == [{"user_id": "u1"}]


async def test_turns_assertions_see_only_their_turn_and_aggregate_by_index() -> None:
    seen: list[tuple[str, list[str], list[str]]] = []

    def record(run: Any, results: Any) -> float:
        seen.append((get_user_message(run.input),
                     [m.content for m in run.input.remembered_messages],
                     [m.content for m in run.output]))
        return 1.0

    turn_probe = create_scorer("probe", "x").generate_score(record)

    def item(name: str, recall_gate: Any) -> dict[str, Any]:
        return {"turns": [
            {"input": f"My name is {name}", "scorers": [turn_probe]},
            {"input": "What is my name?", "gates": [recall_gate],
             "scorers": [{"scorer": fixed("polite", 0.5), "threshold": 0.4}]},
        ]}

    result = await run_evals(
        MemoryAgent(),
        [item("Ada", contains("recall", "Ada")), item("Bob", contains("recall", "Ada"))],
        scorers=[contains("whole-conversation", "Your name is")],
    )
    # Turn 0's probe saw turn 0 only; nothing remembered yet.
    assert seen[0] == ("My name is Ada", [], ["Nice to meet you, Ada."])
    assert seen[1] == ("My name is Bob", [], ["Nice to meet you, Bob."])
    # Top-level scorers saw the accumulated conversation.
    assert result.scores == {"whole-conversation": 1.0}
    turns = result.turn_results
    assert turns is not None and [t.index for t in turns] == [0, 1]
    assert turns[0].scores == {"probe": 1.0}
    assert turns[1].scores == {"polite": 0.5}
    assert [(g.id, g.passed, g.score) for g in turns[1].gate_results] == [("recall", False, 0.5)]
    assert [(r.id, r.passed) for r in turns[1].threshold_results] == [("polite", True)]
    assert result.verdict == "failed"  # a per-turn gate averaged below 1.0
    item_turns = result.items[1].turn_results
    assert item_turns is not None
    assert item_turns[1].gate_results["recall"].score == 0.0
    assert [m.content for m in item_turns[1].output] == ["Your name is Bob."]


async def test_turn_scorers_remember_earlier_turns_in_their_input() -> None:
    remembered: list[list[str]] = []

    def record(run: Any, results: Any) -> float:
        remembered.append([m.content for m in run.input.remembered_messages])
        return 1.0

    probe = create_scorer("probe", "x").generate_score(record)
    await run_evals(MemoryAgent(), [{"turns": ["first", {"input": "second", "scorers": [probe]}]}])
    assert remembered == [["first", "You said: first"]]


async def test_agent_scorer_config_gives_trajectory_scorers_a_trajectory() -> None:
    def agent(text: str) -> list[dict[str, Any]]:
        return weather_tool_message(text)

    seen: list[Any] = []

    def called_weather(run: Any, results: Any) -> float:
        seen.append((run.output, run.expected_trajectory))
        names = [step.name for step in run.output.steps]
        return 1.0 if names == ["get_weather"] else 0.0

    trajectory_scorer = create_scorer("called-weather", "x").generate_score(called_weather)
    result = await run_evals(
        agent,
        [{"input": "Paris", "expected_trajectory": {"steps": [{"name": "get_weather"}]}}],
        scorers=AgentScorerConfig(agent=[contains("mentions", "Paris")],
                                  trajectory=[{"scorer": trajectory_scorer, "threshold": 1.0}]),
    )
    assert result.scores == {"agent": {"mentions": 1.0}, "trajectory": {"called-weather": 1.0}}
    trajectory, expected = seen[0]
    assert isinstance(trajectory, Trajectory)
    assert trajectory.steps[0].tool_args == {"city": "Paris"}
    assert expected == {"steps": [{"name": "get_weather"}]}
    assert result.threshold_results is not None
    assert [(r.id, r.group, r.passed) for r in result.threshold_results] == [
        ("called-weather", "trajectory", True)
    ]
    assert set(result.items[0].scorer_results) == {"agent", "trajectory"}


async def test_agent_scorer_config_as_a_plain_dict_and_trajectory_typed_gates() -> None:
    def agent(text: str) -> list[dict[str, Any]]:
        return weather_tool_message(text, ok=text != "Oslo")

    tool_ok = create_scorer("tool-ok", "x", type="trajectory").generate_score(
        lambda run, results: 1.0 if all(s.success for s in run.output.steps) else 0.0
    )
    result = await run_evals(
        agent, [{"input": "Paris"}, {"input": "Oslo"}],
        scorers={"agent": [fixed("q", 0.9)]}, gates=[tool_ok],
    )
    assert result.scores == {"agent": {"q": 0.9}}
    assert result.gate_results is not None
    assert [(g.id, g.score, g.passed) for g in result.gate_results] == [("tool-ok", 0.5, False)]
    assert result.verdict == "failed"


async def test_agent_return_shapes_are_normalised() -> None:
    answers: dict[str, Any] = {
        "str": "plain",
        "list": [{"role": "assistant", "content": "from list"}],
        "response": AgentResponse(messages=[Message(role="assistant", content="typed")],
                                  trace_id="a" * 32),
        "dict": {"text": "from dict"},
    }
    result = await run_evals(lambda key: answers[key], [{"input": k} for k in answers],
                             scorers=[fixed("f", 1.0)])
    assert [i.output[-1].content for i in result.items] == [
        "plain", "from list", "typed", "from dict",
    ]
    assert result.items[2].trace_id == "a" * 32


def test_run_evals_sync_is_a_shell_over_run_evals() -> None:
    result = run_evals_sync(lambda text: text, [{"input": "x"}], scorers=[fixed("f", 0.5)])
    assert result.scores == {"f": 0.5}


async def test_run_evals_sync_refuses_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match="await run_evals"):
        run_evals_sync(lambda text: text, [{"input": "x"}], scorers=[fixed("f", 0.5)])


def test_agent_response_and_workflow_result_take_positional_fields() -> None:
    from tracescore.evals import WorkflowRunResult

    response = AgentResponse(["hi"], trace_id="t" * 32)
    assert [(m.role, m.content) for m in response.messages] == [("assistant", "hi")]
    assert response.text == "hi" and response.trace_id == "t" * 32
    run = WorkflowRunResult("success", {"total": 1}, {"s": {"status": "success"}}, ["s"])
    assert (run.status, run.result, run.step_execution_path) == ("success", {"total": 1}, ["s"])
    assert WorkflowRunResult(steps={"a": {"status": "success"}}).step_results == {
        "a": {"status": "success"}}


async def test_an_input_that_is_no_message_still_reaches_the_scorers() -> None:
    seen: list[Any] = []
    scorer = create_scorer("rec", "x").generate_score(
        lambda run, results: seen.append(run.input) or 1.0)
    result = await run_evals(lambda value: "done", [{"input": {"parts": "not a list"}}],
                             scorers=[scorer])
    assert result.summary.errors == 0 and result.scores == {"rec": 1.0}
    assert isinstance(seen[0], AgentInput) and "not a list" in seen[0].input_messages[0].content
