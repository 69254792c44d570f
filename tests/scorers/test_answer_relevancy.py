"""create_answer_relevancy_scorer against the scripted judge server."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message

from tracescore.scorers import create_answer_relevancy_scorer
from tracescore.scoring import Judge, ScorerRunError


def judge(server: Any) -> Judge:
    return Judge(model="openai/scripted-judge", api_base=server.url)


def results(*words: str) -> dict[str, Any]:
    return {"results": [{"result": w, "reason": "r"} for w in words]}


def test_relevant_partly_and_off_topic(llm_server: Any) -> None:
    statements = ["Paris is the capital of France.", "France is in Europe.",
                  "I like turtles.", "The capital has 2 million people."]
    llm_server.script({"statements": statements}, results("yes", "unsure", "no", "yes"),
                      "The score is 0.58 because one statement is off topic.")
    scorer = create_answer_relevancy_scorer(judge(llm_server))
    result = scorer.run_sync({"input": agent_input("What is the capital of France?"),
                              "output": [message(" ".join(statements))]})
    # (2 + 0.3) / 4 = 0.575, rounded half up
    assert result.score == 0.58
    assert result.preprocess_step_result == {"statements": statements}
    assert [r["result"] for r in result.analyze_step_result["results"]] == ["yes", "unsure", "no",
                                                                           "yes"]
    assert "What is the capital of France?" in (result.analyze_prompt or "")
    assert "I like turtles." in (result.analyze_prompt or "")
    assert result.reason == "The score is 0.58 because one statement is off topic."
    assert result.scorer_id == "answer-relevancy-scorer"


@pytest.mark.parametrize(("weight", "scale", "words", "expected"), [
    (0.3, 1, ["Yes", " unsure ", "bogus"], 0.43),
    (0.5, 1, ["unsure", "unsure"], 0.5),
    (0.0, 1, ["unsure", "yes"], 0.5),
    (0.3, 10, ["yes", "no"], 5.0),
])
def test_weights_words_and_scale(llm_server: Any, weight: float, scale: float,
                                 words: list[str], expected: float) -> None:
    llm_server.script({"statements": [f"s{i}" for i in range(len(words))]}, results(*words), "r")
    scorer = create_answer_relevancy_scorer(judge(llm_server), uncertainty_weight=weight,
                                            scale=scale)
    assert scorer.run_sync(input="q", output="answer").score == expected


def test_no_statements_score_zero(llm_server: Any) -> None:
    llm_server.script({"statements": []}, {"results": []}, "r")
    result = create_answer_relevancy_scorer(judge(llm_server)).run_sync(input="q", output="")
    assert result.score == 0


def test_mastra_options(llm_server: Any) -> None:
    llm_server.script({"statements": ["a", "b"]}, results("unsure", "yes"), "r")
    scorer = create_answer_relevancy_scorer(judge(llm_server),
                                            options={"uncertaintyWeight": 0.5, "scale": 2})
    assert scorer.run_sync(input="q", output="a b").score == 1.5


def test_invalid_analysis_twice_fails_the_run(llm_server: Any) -> None:
    llm_server.script({"statements": ["a"]}, {"wrong": []}, {"still": "wrong"})
    with pytest.raises(ScorerRunError) as info:
        create_answer_relevancy_scorer(judge(llm_server)).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.judge["analyze"].executions[0].attempt_count == 2


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        create_answer_relevancy_scorer("openai/x", uncertainty_weight=2)
    with pytest.raises(ValueError):
        create_answer_relevancy_scorer("openai/x", scale=-1)
    with pytest.raises(TypeError, match="uncertainty_weight"):
        create_answer_relevancy_scorer("openai/x", options={"uncertainty_wieght": 0.5})
