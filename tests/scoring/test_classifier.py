"""create_classifier_scorer against the scripted judge server (logprobs included)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from tracescore.model import Trajectory
from tracescore.scoring import (
    Judge,
    PromptStep,
    ScorerDefinitionError,
    ScorerRunError,
    create_classifier_scorer,
    create_scorer,
    probability_of_true,
)
from tracescore.testing import Reply, error, token_logprobs

RUN = {
    "input": [{"role": "user", "content": "What is the capital of Australia?"}],
    "output": [{"role": "assistant", "content": "The capital of Australia is Canberra."}],
}
ROUTE = {"correct": "Fully correct", "partial": "Partly correct", "incorrect": "Wrong"}


def judge(server: Any) -> Judge:
    return Judge(model="openai/scripted-judge", api_base=server.url)


def last_user(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def test_choice_maps_through_scores(llm_server: Any) -> None:
    llm_server.script(Reply(content={"choice": "partial"}, prompt_tokens=80, completion_tokens=6))
    scorer = create_classifier_scorer(
        "route-score", judge=judge(llm_server), question="How correct is the answer?",
        choices=ROUTE, scores={"correct": 1, "partial": 0.4, "incorrect": 0})
    result = scorer.run_sync(**RUN)
    assert result.score == 0.4
    assert result.reason == ("Classifier question 'How correct is the answer?' selected "
                             "'partial' (score: 0.4).")
    assert result.analyze_step_result == {"question": "How correct is the answer?",
                                          "kind": "choice", "choice": "partial"}
    prompt = result.analyze_prompt or ""
    assert "- partial: Partly correct" in prompt and "Canberra" in prompt
    executions = result.judge["analyze"].executions
    assert [e.status for e in executions] == ["success"]
    assert executions[0].usage is not None and executions[0].usage.input_tokens == 80
    request = llm_server.requests[0]
    assert "logprobs" not in request
    assert "classify" in request["messages"][0]["content"]


@pytest.mark.parametrize(("level", "expected"), [(0, 0.0), (1, 1 / 3), (2, 2 / 3), (3, 1.0)])
def test_level_k_of_n_scores_k_over_n_minus_1(llm_server: Any, level: int,
                                              expected: float) -> None:
    llm_server.script({"level": level})
    labels = ["Poor", "Fair", "Good", "Excellent"]
    scorer = create_classifier_scorer("quality", judge=judge(llm_server),
                                      question="How good is the answer?", levels=labels)
    result = scorer.run_sync(**RUN)
    assert result.score == pytest.approx(expected)
    assert result.analyze_step_result["label"] == labels[level]
    assert f"selected '{labels[level]}'" in (result.reason or "")
    assert "3. Excellent" in (result.analyze_prompt or "")


def test_levels_as_a_count(llm_server: Any) -> None:
    llm_server.script({"level": 3})
    scorer = create_classifier_scorer("quality", judge=judge(llm_server),
                                      question="How good is the answer?", levels=5)
    result = scorer.run_sync(**RUN)
    assert result.score == pytest.approx(0.75)
    assert result.analyze_step_result["label"] == "3"
    assert result.reason == ("Classifier question 'How good is the answer?' selected '3' "
                             "(score: 0.75).")
    assert "from 0 (the worst) to 4 (the best)" in (result.analyze_prompt or "")
    assert '"maximum": 4' in llm_server.requests[0]["messages"][-1]["content"]


def test_boolean_reads_probability_from_logprobs(llm_server: Any) -> None:
    tokens = ['{"', "answer", '":', " true", "}"]
    llm_server.script(Reply(content='{"answer": true}', logprobs=token_logprobs(
        tokens, {3: {" true": math.log(0.6), " false": math.log(0.3), " maybe": -5.0}})))
    scorer = create_classifier_scorer("factual", judge=judge(llm_server),
                                      question="Is the answer factual?",
                                      boolean={"true": "Factual", "false": "Not factual"})
    result = scorer.run_sync(**RUN)
    assert result.score == pytest.approx(0.6 / 0.9)
    evidence = result.analyze_step_result
    assert evidence["answer"] is True and evidence["probability_source"] == "logprobs"
    request = llm_server.requests[0]
    assert request["logprobs"] is True and request["top_logprobs"] == 5
    assert result.reason == (f"Classifier question 'Is the answer factual?' selected 'true' "
                             f"(score: {0.6 / 0.9:g}).")


def test_boolean_without_logprobs_scores_one_or_zero(llm_server: Any) -> None:
    llm_server.script({"answer": False}, {"answer": True})
    scorer = create_classifier_scorer("factual", judge=judge(llm_server),
                                      question="Is it factual?", boolean=True)
    first, second = scorer.run_sync(**RUN), scorer.run_sync(**RUN)
    assert (first.score, second.score) == (0.0, 1.0)
    assert first.analyze_step_result["probability_source"] == "answer"
    assert first.reason == "Classifier question 'Is it factual?' selected 'false' (score: 0)."


@pytest.mark.parametrize(("answer", "alternatives", "expected"), [
    (True, {"true": -0.1}, math.exp(-0.1)),          # only the chosen token is listed
    (False, {"false": math.log(0.8)}, 0.2),          # P(true) = 1 - P(false)
    (False, {"false": math.log(0.5), "True": math.log(0.5)}, 0.5),  # case and quotes ignored
])
def test_probability_of_true(answer: bool, alternatives: dict[str, float],
                             expected: float) -> None:
    chosen = "true" if answer else "false"
    entries = token_logprobs(['{"answer":', chosen, "}"], {1: alternatives})
    assert probability_of_true(entries) == pytest.approx(expected)


def test_probability_of_true_without_an_answer_token() -> None:
    assert probability_of_true(token_logprobs(["yes"])) is None
    assert probability_of_true(None) is None


def test_state_selector_decides_what_the_judge_reads(llm_server: Any) -> None:
    llm_server.script({"choice": "correct"})

    async def state(run: Any) -> dict[str, Any]:
        return {"reply": run.output[0]["content"], "facts": {"capital": "Canberra"}}

    scorer = create_classifier_scorer(
        "grounded", judge="openai/scripted-judge", question="Is the reply grounded?",
        choices=["correct", "incorrect"], scores={"correct": 1.0, "incorrect": 0.0},
        state=state)
    judged = create_classifier_scorer(
        "grounded", judge=Judge(model="openai/scripted-judge", api_base=llm_server.url,
                                instructions="Be strict."),
        question="Is the reply grounded?", choices=["correct", "incorrect"],
        scores={"correct": 1.0, "incorrect": 0.0}, state=state)
    assert scorer.judge is not None and scorer.judge.model == "openai/scripted-judge"
    result = judged.run_sync(**RUN)
    assert result.score == 1.0
    prompt = result.analyze_prompt or ""
    assert json.dumps({"capital": "Canberra"}, indent=2).replace("\n", "\n  ") in prompt
    assert "What is the capital" not in prompt
    assert llm_server.requests[0]["messages"][0]["content"].startswith("Be strict.")


def test_failed_judge_call_raises_with_the_snapshot(llm_server: Any) -> None:
    llm_server.script(error(400, "bad request"))
    scorer = create_classifier_scorer("factual", judge=judge(llm_server), question="Factual?",
                                      boolean=True)
    with pytest.raises(ScorerRunError) as info:
        scorer.run_sync(**RUN)
    assert info.value.failed_step == "analyze"
    assert info.value.result is not None
    assert info.value.result.judge["analyze"].executions[0].status == "failed"


def test_an_answer_outside_the_choices_is_refused(llm_server: Any) -> None:
    llm_server.script({"choice": "great"}, {"choice": "wrong"})
    scorer = create_classifier_scorer("route", judge=judge(llm_server), question="Route?",
                                      choices=["right", "wrong"], scores={"right": 1, "wrong": 0})
    result = scorer.run_sync(**RUN)
    assert result.score == 0.0
    assert result.judge["analyze"].executions[0].attempt_count == 2


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"choices": ROUTE, "scores": {"correct": 1, "partial": 0.5}}, "missing: incorrect"),
    ({"choices": ROUTE, "scores": {"correct": 1, "partial": 0.5, "incorrect": 0, "x": 1}},
     "unknown: x"),
    ({"choices": ROUTE, "scores": {"correct": 1.5, "partial": 0.5, "incorrect": -1}},
     "outside 0-1: correct, incorrect"),
    ({"choices": ROUTE, "scores": {"correct": "1", "partial": math.nan, "incorrect": 0}},
     "not a finite number: correct, partial"),
    ({"choices": ROUTE}, "needs scores="),
    ({"levels": ["a", "b"], "scores": {"a": 0, "b": 1}}, "scores= only applies to choices"),
    ({"levels": ["only"]}, "at least two"),
    ({"levels": 1}, "needs 2 to 101 levels, got 1"),
    ({"levels": True}, "needs 2 to 101 levels, got True"),
    ({"choices": ["a", "a"], "scores": {"a": 1}}, "names 'a' twice"),
    ({"choices": "abc", "scores": {}}, "not one string"),
    ({}, "exactly one of choices="),
    ({"levels": ["a", "b"], "boolean": True}, "got levels, boolean"),
    ({"boolean": {"yes": "x"}}, "unknown key(s) yes"),
])
def test_construction_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ScorerDefinitionError) as info:
        create_classifier_scorer("c", judge="openai/x", question="Q?", **kwargs)
    assert message in str(info.value)
    assert "classifier scorer 'c'" in str(info.value)


def test_question_and_id_are_required() -> None:
    with pytest.raises(ScorerDefinitionError, match="question must be"):
        create_classifier_scorer("c", judge="openai/x", question=" ", boolean=True)
    with pytest.raises(ScorerDefinitionError, match="needs an id"):
        create_classifier_scorer("", judge="openai/x", question="Q?", boolean=True)


def test_prompt_step_logprobs_reach_parse_output_and_calculate_score(llm_server: Any) -> None:
    entries = token_logprobs(["0", ".", "7"], {0: {"0": -0.5, "1": -1.0}})
    llm_server.script(Reply(content='{"score": 0.7}', logprobs=entries))
    seen: list[Any] = []

    def calculate(run: Any, results: Any, output: Any, logprobs: Any) -> float:
        seen.append(logprobs)
        return float(output["score"])

    scorer = create_scorer("p", "d", judge=judge(llm_server).replace(instructions="i")
                           ).generate_score(PromptStep("score", lambda run, results: "go",
                                                       calculate_score=calculate, logprobs=2))
    assert scorer.run_sync(input="q", output="a").score == 0.7
    assert seen[0][0]["top_logprobs"][0] == {"token": "0", "logprob": -0.5}
    assert llm_server.requests[0]["top_logprobs"] == 2


def test_prompt_step_logprobs_must_be_0_to_20() -> None:
    with pytest.raises(ScorerDefinitionError, match="0 to 20"):
        create_scorer("p", "d").analyze(PromptStep("a", lambda r: "x", output_schema={},
                                                   logprobs=21))


def test_default_state_reads_a_trajectory_s_raw_output(llm_server: Any) -> None:
    llm_server.script({"answer": True})
    scorer = create_classifier_scorer("done", judge=judge(llm_server), question="Done?",
                                      boolean=True, type="trajectory")
    trajectory = {"steps": [{"step_type": "tool_call", "name": "search"}],
                  "raw_output": [{"role": "assistant", "content": "Found three flights."}]}
    result = scorer.run_sync(input="Find flights", output=Trajectory.model_validate(trajectory))
    prompt = result.analyze_prompt or ""
    assert '"output": "Found three flights."' in prompt and '"input": "Find flights"' in prompt
