"""filter_run as a prepare_run: parts, tools, message windows, dropped fields."""

from __future__ import annotations

from typing import Any

from tracescore.model import AgentInput, Message, ScorerRun, get_assistant_message
from tracescore.scoring import create_scorer, filter_run


def _tool(name: str) -> dict[str, Any]:
    return {"type": "tool-invocation",
            "toolInvocation": {"toolName": name, "args": {"q": name}, "state": "result",
                               "result": "ok"}}


def _run() -> ScorerRun:
    agent_input = AgentInput(
        input_messages=[Message(role="user", content="What is the weather in Paris?")],
        remembered_messages=[Message(role="user", content=f"old {i}") for i in range(5)],
        system_messages=[Message(role="system", content="You are helpful.")],
    )
    output = [
        {"role": "assistant", "parts": [{"type": "reasoning", "text": "need weather"},
                                        _tool("weather.current"), _tool("search_web")]},
        {"role": "assistant", "parts": [{"type": "text", "text": "It is sunny."}]},
    ]
    return ScorerRun(input=agent_input, output=output, ground_truth="sunny",
                     expected_trajectory={"steps": []}, request_context={"tenant": "a"})


def test_part_types_keep_only_matching_parts() -> None:
    run = filter_run(part_types=["text"])(_run())
    assert [m.content for m in run.output] == ["It is sunny."]  # the tool-only message is gone
    assert run.input.input_messages[0].content == "What is the weather in Paris?"
    assert run.input.system_messages[0].content == "You are helpful."


def test_part_types_are_prefix_matched() -> None:
    run = filter_run(part_types=["tool"])(_run())
    (message,) = run.output
    assert [p.type for p in message.parts] == ["tool-invocation", "tool-invocation"]
    assert [t.tool_name for t in message.tool_invocations] == ["weather.current", "search_web"]
    assert message.content == ""


def test_tool_names_keep_only_those_tools_by_prefix() -> None:
    run = filter_run(tool_names=["weather"])(_run())
    first, second = run.output
    assert [t.tool_name for t in first.tool_invocations] == ["weather.current"]
    assert [p.type for p in first.parts] == ["reasoning", "tool-invocation"]
    assert second.content == "It is sunny."


def test_message_windows_keep_the_last_n() -> None:
    run = filter_run(max_remembered_messages=2, max_output_messages=1)(_run())
    assert [m.content for m in run.input.remembered_messages] == ["old 3", "old 4"]
    assert [m.content for m in run.output] == ["It is sunny."]
    none_kept = filter_run(max_remembered_messages=0)(_run())
    assert none_kept.input.remembered_messages == []


def test_drop_flags_and_untouched_fields() -> None:
    original = _run()
    run = filter_run(drop_request_context=True, drop_expected_trajectory=True,
                     drop_ground_truth=True)(original)
    assert (run.request_context, run.expected_trajectory, run.ground_truth) == (None, None, None)
    assert run.run_id == original.run_id
    assert original.ground_truth == "sunny"  # the original run is not changed
    kept = filter_run()(original)
    assert kept.ground_truth == "sunny" and kept.request_context == {"tenant": "a"}


def test_plain_strings_pass_unchanged() -> None:
    run = filter_run(part_types=["text"], max_output_messages=1)(ScorerRun(input="q", output="a"))
    assert (run.input, run.output) == ("q", "a")


async def test_filter_run_as_prepare_run_changes_what_steps_see_and_the_result() -> None:
    seen: dict[str, Any] = {}

    def analyze(run: ScorerRun) -> int:
        seen["tools"] = [t.tool_name for m in run.output for t in m.tool_invocations]
        return len(run.output)

    scorer = (create_scorer("filtered", type="agent",
                            prepare_run=filter_run(tool_names=["search"], drop_ground_truth=True))
              .analyze(analyze).generate_score(lambda run, r: r.analyze_step_result / 2))
    result = await scorer.run(_run())
    assert seen["tools"] == ["search_web"]
    assert result.score == 1.0
    assert result.ground_truth is None
    assert get_assistant_message(result.output) == "It is sunny."
