"""create_hallucination_scorer against the scripted judge server, with the seed's examples."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tracescore.model import ScorerRun
from tracescore.scorers import create_hallucination_scorer, extract_tool_results
from tracescore.scoring import Judge, ScorerRunError
from tracescore.testing import error


def judge(server: Any) -> Judge:
    return Judge(model="openai/scripted-judge", api_base=server.url)


def verdicts(claims: list[str], words: list[str]) -> dict[str, Any]:
    return {"verdicts": [{"statement": c, "verdict": w, "reason": "r"}
                         for c, w in zip(claims, words, strict=True)]}


def test_iphone_no_hallucination_scores_zero(llm_server: Any) -> None:
    context = ["The iPhone was first released in 2007.", "Steve Jobs unveiled it at Macworld.",
               "The original model had a 3.5-inch screen."]
    answer = ("The iPhone was first released in 2007, when Steve Jobs unveiled it at Macworld. "
              "The original iPhone featured a 3.5-inch screen.")
    claims = ["The iPhone was first released in 2007.", "Steve Jobs unveiled it at Macworld.",
              "The original iPhone featured a 3.5-inch screen."]
    llm_server.script({"claims": claims}, verdicts(claims, ["no", "no", "no"]),
                      "The score is 0 because every claim is supported by the context.")
    scorer = create_hallucination_scorer(judge(llm_server), context=context)
    result = scorer.run_sync(input=[{"role": "user", "content": "When was the first iPhone "
                                                                "released?"}],
                             output={"text": answer})
    assert result.score == 0
    assert result.reason == "The score is 0 because every claim is supported by the context."
    assert result.preprocess_step_result == {"claims": claims}
    assert all(line in (result.analyze_prompt or "") for line in context)
    assert "When was the first iPhone released?" in (result.generate_reason_prompt or "")
    assert result.scorer_id == "hallucination-scorer"


def test_star_wars_two_of_four_contradicted_scores_half(llm_server: Any) -> None:
    context = ["The first Star Wars movie was released in 1977.",
               "It was directed by George Lucas.", "The film earned $775 million worldwide.",
               "The movie was filmed in Tunisia and England."]
    answer = ("The first Star Wars movie came out in 1977 and was directed by George Lucas. It "
              "made over $1 billion at the box office and was filmed entirely in California.")
    claims = ["The first Star Wars movie came out in 1977.", "It was directed by George Lucas.",
              "It made over $1 billion at the box office.", "It was filmed entirely in California."]
    llm_server.script({"claims": claims}, verdicts(claims, ["no", "no", "yes", "yes"]),
                      "The score is 0.5 because the box office and filming claims contradict "
                      "the context.")
    scorer = create_hallucination_scorer(judge(llm_server), context=context)
    result = scorer.run_sync(input=[{"role": "user", "content": "Tell me about the first Star "
                                                                "Wars movie."}],
                             output={"role": "assistant", "text": answer})
    assert result.score == 0.5
    assert answer in (result.preprocess_prompt or "")
    assert "$775 million" in (result.analyze_prompt or "")


def test_wright_brothers_complete_hallucination_scores_one(llm_server: Any) -> None:
    context = ["The Wright brothers made their first flight in 1903.",
               "The flight lasted 12 seconds.", "It covered a distance of 120 feet."]
    claims = ["The first flight was in 1908.", "The flight lasted about 2 minutes.",
              "The flight covered nearly a mile."]
    llm_server.script({"claims": claims}, verdicts(claims, ["yes", "yes", "yes"]),
                      {"reason": "The score is 1 because every claim contradicts the context."})
    scorer = create_hallucination_scorer(judge(llm_server), context=context)
    result = scorer.run_sync(
        input=[{"role": "user", "content": "When did the Wright brothers first fly?"}],
        output={"text": "The Wright brothers achieved their historic first flight in 1908. The "
                        "flight lasted about 2 minutes and covered nearly a mile."})
    assert result.score == 1
    assert result.reason == "The score is 1 because every claim contradicts the context."


@pytest.mark.parametrize(("words", "expected"), [
    (["Yes", " yes ", "no"], 0.67),
    (["yes", "contradicted", "no", "NO"], 0.25),
    (["maybe"], 0.0),
])
def test_verdict_words(llm_server: Any, words: list[str], expected: float) -> None:
    claims = [f"c{i}" for i in range(len(words))]
    llm_server.script({"claims": claims}, verdicts(claims, words), "r")
    scorer = create_hallucination_scorer(judge(llm_server), context=["x"])
    assert scorer.run_sync(input="q", output="an answer").score == expected


def test_scale(llm_server: Any) -> None:
    llm_server.script({"claims": ["a", "b"]}, verdicts(["a", "b"], ["yes", "no"]), "r")
    scorer = create_hallucination_scorer(judge(llm_server), scale=5, context=["x"])
    assert scorer.run_sync(input="q", output="an answer").score == 2.5


def test_empty_output_scores_zero(llm_server: Any) -> None:
    # even if the judge invents a claim for an empty answer, nothing was said: no hallucination
    llm_server.script({"claims": ["invented"]}, verdicts(["invented"], ["yes"]), "r")
    scorer = create_hallucination_scorer(judge(llm_server), context=["x"])
    assert scorer.run_sync(input="q", output={"text": ""}).score == 0


def test_zero_claims_score_zero(llm_server: Any) -> None:
    llm_server.script({"claims": []}, {"verdicts": []}, "r")
    scorer = create_hallucination_scorer(judge(llm_server), context=["x"])
    assert scorer.run_sync(input="q", output="Hello!").score == 0


def test_get_context_is_called_for_analyze_and_reason(llm_server: Any) -> None:
    seen: list[tuple[str, float | None, Any]] = []

    def get_context(run: ScorerRun, results: Any, score: float | None, step: str) -> list[str]:
        seen.append((step, score, results.preprocess_step_result))
        return [f"context for {step}", *[f"{r.tool_name}: {r.result}"
                                         for r in extract_tool_results(run.output)]]

    llm_server.script({"claims": ["a", "b"]}, verdicts(["a", "b"], ["yes", "no"]), "r")
    scorer = create_hallucination_scorer(judge(llm_server), context=["static, ignored"],
                                         get_context=get_context)
    output = [{"role": "assistant", "content": "a b", "tool_invocations": [
        {"tool_name": "lookup", "state": "result", "result": "facts"}]}]
    result = scorer.run_sync(input="q", output=output)
    assert result.score == 0.5
    assert [(step, score) for step, score, _ in seen] == [("analyze", None),
                                                          ("generate_reason", 0.5)]
    assert seen[0][2] == {"claims": ["a", "b"]}
    assert "context for analyze" in (result.analyze_prompt or "")
    assert "lookup: facts" in (result.analyze_prompt or "")
    assert "context for generate_reason" in (result.generate_reason_prompt or "")
    assert "static, ignored" not in (result.analyze_prompt or "")


def test_async_get_context(llm_server: Any) -> None:
    async def get_context(run: Any, results: Any, score: Any, step: str) -> list[str]:
        await asyncio.sleep(0)
        return ["async context"]

    llm_server.script({"claims": ["a"]}, verdicts(["a"], ["no"]), "r")
    result = create_hallucination_scorer(judge(llm_server), get_context=get_context).run_sync(
        input="q", output="a")
    assert "async context" in (result.analyze_prompt or "")
    assert "async context" in (result.generate_reason_prompt or "")


def test_keyword_only_get_context(llm_server: Any) -> None:
    steps: list[str] = []

    def get_context(*, run: Any, results: Any, score: Any, step: str) -> str:
        steps.append(step)
        return "keyword context"

    llm_server.script({"claims": ["a"]}, verdicts(["a"], ["no"]), "r")
    result = create_hallucination_scorer(judge(llm_server), get_context=get_context).run_sync(
        input="q", output="a")
    assert steps == ["analyze", "generate_reason"]
    assert "keyword context" in (result.analyze_prompt or "")


def test_get_context_failure_is_a_run_error(llm_server: Any) -> None:
    def get_context(*args: Any) -> list[str]:
        raise RuntimeError("context store unavailable")

    llm_server.script({"claims": ["a"]})
    scorer = create_hallucination_scorer(judge(llm_server), get_context=get_context)
    with pytest.raises(ScorerRunError, match="context store unavailable") as info:
        scorer.run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"


def test_judge_failure_is_a_run_error(llm_server: Any) -> None:
    llm_server.script(error(401, "bad key"))
    with pytest.raises(ScorerRunError) as info:
        create_hallucination_scorer(judge(llm_server)).run_sync(input="q", output="a")
    assert info.value.failed_step == "preprocess"
    assert info.value.completed_steps == []


def test_mastra_options_spelling(llm_server: Any) -> None:
    llm_server.script({"claims": ["a"]}, verdicts(["a"], ["yes"]), "r")
    scorer = create_hallucination_scorer(judge(llm_server), options={
        "scale": 2, "getContext": lambda run, results, score, step: ["ctx"]})
    result = scorer.run_sync(input="q", output="a")
    assert result.score == 2
    assert "ctx" in (result.analyze_prompt or "")
