"""create_tool_call_accuracy_scorer_code (Mastra's cases, plus the subsequence order rule)."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message, tool_invocation

from tracescore.scorers import create_tool_call_accuracy_scorer_code
from tracescore.scoring import ScorerRunError


def calls(*names: str, state: str = "result") -> list[dict[str, Any]]:
    return [message("Working on it.", id="output-1", tool_invocations=[
        tool_invocation(n, tool_call_id=f"call-{i}", args={}, result={}, state=state)
        for i, n in enumerate(names)])]


def run(scorer: Any, output: Any, user: str = "What is the weather?") -> Any:
    return scorer.run_sync({"input": agent_input(user), "output": output})


def test_identity() -> None:
    scorer = create_tool_call_accuracy_scorer_code(expected_tool="weather-tool")
    assert scorer.id == "code-tool-call-accuracy-scorer"
    assert scorer.name == "Tool Call Accuracy Scorer"
    assert "weather-tool" in scorer.description


def test_expected_tool_called() -> None:
    result = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool"),
                 calls("weather-tool"))
    assert result.score == 1
    pre = result.preprocess_step_result
    assert pre["correct_tool_called"] is True
    assert pre["actual_tools"] == ["weather-tool"]
    assert pre["correct_order_called"] is None
    assert pre["tool_call_infos"][0]["tool_call_id"] == "call-0"


def test_wrong_tool() -> None:
    result = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool"),
                 calls("calculator-tool"))
    assert result.score == 0
    assert result.preprocess_step_result["correct_tool_called"] is False


def test_no_tools() -> None:
    result = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool"),
                 [message("I cannot help with that.")])
    assert result.score == 0
    assert result.preprocess_step_result["has_tool_calls"] is False
    assert result.preprocess_step_result["actual_tools"] == []


def test_among_several_tools() -> None:
    output = calls("search-tool", "weather-tool", "calendar-tool")
    loose = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool"), output)
    assert loose.score == 1
    assert loose.preprocess_step_result["actual_tools"] == ["search-tool", "weather-tool",
                                                            "calendar-tool"]
    strict = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool",
                                                       strict_mode=True), output)
    assert strict.score == 0
    assert strict.preprocess_step_result["correct_tool_called"] is False


def test_only_the_expected_tool_in_strict_mode() -> None:
    result = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool",
                                                       strict_mode=True), calls("weather-tool"))
    assert result.score == 1 and result.preprocess_step_result["correct_tool_called"] is True


def test_call_state_counts() -> None:
    result = run(create_tool_call_accuracy_scorer_code(expected_tool="weather-tool"),
                 calls("weather-tool", state="call"))
    assert result.score == 1


def test_empty_input_or_output_raises() -> None:
    scorer = create_tool_call_accuracy_scorer_code(expected_tool="weather-tool")
    with pytest.raises(ScorerRunError, match="Input and output messages cannot be null or empty"):
        scorer.run_sync({"input": agent_input(), "output": [message("test")]})
    with pytest.raises(ScorerRunError, match="Input and output messages cannot be null or empty"):
        scorer.run_sync({"input": agent_input("What is the weather?"), "output": []})


@pytest.mark.parametrize(("actual", "strict", "score"), [
    (["search-tool", "weather-tool"], True, 1),
    (["weather-tool", "search-tool"], True, 0),
    (["search-tool", "calendar-tool", "weather-tool"], False, 1),
    (["weather-tool", "calendar-tool", "search-tool"], False, 0),
    (["search-tool", "log-tool", "weather-tool"], True, 0),
    # a later call in the right order counts (Mastra compares first occurrences and says 0)
    (["weather-tool", "search-tool", "weather-tool"], False, 1),
])
def test_order(actual: list[str], strict: bool, score: int) -> None:
    scorer = create_tool_call_accuracy_scorer_code(
        expected_tool="search-tool", expected_tool_order=["search-tool", "weather-tool"],
        strict_mode=strict)
    result = run(scorer, calls(*actual))
    assert result.score == score
    assert result.preprocess_step_result["correct_order_called"] is bool(score)
    assert result.preprocess_step_result["actual_tools"] == actual


def test_order_needs_every_tool() -> None:
    scorer = create_tool_call_accuracy_scorer_code(
        expected_tool_order=["search-tool", "weather-tool", "calendar-tool"])
    result = run(scorer, calls("search-tool", "weather-tool"))
    assert result.score == 0 and result.preprocess_step_result["correct_order_called"] is False


def test_needs_a_tool_or_an_order() -> None:
    with pytest.raises(ValueError, match="expected_tool"):
        create_tool_call_accuracy_scorer_code()


def test_loose_shapes() -> None:
    scorer = create_tool_call_accuracy_scorer_code(expected_tool="search")
    output = [{"role": "assistant", "content": "", "tool_invocations": [
        {"tool_name": "search", "state": "result", "result": {}}]}]
    assert scorer.run_sync(input="find it", output=output).score == 1
