"""create_completeness_scorer: elements, the coverage rule and the null checks, worked by hand."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message, tool_invocation

from tracescore.scorers import create_completeness_scorer
from tracescore.scorers._completeness import coverage, extract_elements
from tracescore.scoring import ScorerRunError


def score(input: Any, output: Any) -> Any:  # noqa: A002
    return create_completeness_scorer().run_sync(input=input, output=output)


def test_elements_are_words_plus_verb_infinitives() -> None:
    assert extract_elements("The cat RAN, then it's Café-time!") == [
        "the", "cat", "ran", "run", "then", "it", "s", "cafe", "time"]
    assert extract_elements("She went home") == ["she", "went", "go", "home"]
    assert extract_elements("  ") == []


@pytest.mark.parametrize(("inputs", "outputs", "expected"), [
    (["cars"], ["car"], 1.0),            # 3/4 of "cars", inside it: covered
    (["car"], ["cars"], 0.0),            # up to 3 characters: must be equal
    (["cars"], ["carsharing"], 0.0),     # inside, but 4/10 is not more than 60 %
    (["dioxide"], ["dioxides"], 1.0),    # 7/8
    (["sunlight", "sun"], ["sunlit"], 0.0),
    (["abc", "wxyz"], ["abc", "wxyz", "more"], 1.0),
    ([], [], 1.0),
    ([], ["anything"], 0.0),
    (["word"], [], 0.0),
])
def test_coverage_rule(inputs: list[str], outputs: list[str], expected: float) -> None:
    assert coverage(inputs, outputs) == expected


def test_agent_run_scores_the_covered_share() -> None:
    # input: the cat ran (+run) | output: a cat runs (+run) -> the, ran missing: 2 of 4
    result = score(agent_input("The cat ran"), [message("A cat runs")])
    assert result.score == 0.5
    pre = result.preprocess_step_result
    assert pre["input_elements"] == ["the", "cat", "ran", "run"]
    assert pre["output_elements"] == ["a", "cat", "runs", "run"]
    assert pre["missing_elements"] == ["the", "ran"]
    assert pre["element_counts"] == {"input": 4, "output": 4}
    assert result.scorer_id == "completeness-scorer"
    assert create_completeness_scorer().name == "Completeness Scorer"


def test_every_output_message_counts() -> None:
    output = [message("Looking it up.", tool_invocations=[tool_invocation("weather")]),
              message("", tool_invocations=[tool_invocation("weather", tool_call_id="c2")]),
              message("Sunny today")]
    result = score(agent_input("Is it sunny today?"), output)
    # is (+ "be"), it, sunny, today against looking, look, it, up, sunny, today: 3 of 5
    assert result.preprocess_step_result["input_elements"] == ["is", "be", "it", "sunny",
                                                               "today"]
    assert result.preprocess_step_result["missing_elements"] == ["is", "be"]
    assert result.score == 0.6


def test_empty_texts() -> None:
    assert score("", "").score == 1.0
    assert score("!!", "something").score == 0.0
    assert score("word", "").score == 0.0


@pytest.mark.parametrize(("input", "output"), [
    (None, "text"),
    ("text", None),
    ([{"role": "user", "content": None}], "text"),
    ({"inputMessages": [{"role": "user", "content": None}]}, "text"),
    ("text", [{"role": "assistant", "content": "ok"}, None]),
])
def test_null_text_raises(input: Any, output: Any) -> None:  # noqa: A002
    with pytest.raises(ScorerRunError) as info:
        score(input, output)
    assert info.value.failed_step == "preprocess"
    assert str(info.value.cause) == "Inputs cannot be null or undefined"
