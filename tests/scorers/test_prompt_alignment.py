"""create_prompt_alignment_scorer_llm: weights per mode, history, a run, errors."""

from __future__ import annotations

from typing import Any

import pytest
from judged import assert_recorded, judge

from tracescore.scorers import create_prompt_alignment_scorer_llm
from tracescore.scorers._prompt_alignment import (
    AlignmentAnalysis,
    history_limit,
    mode_weights,
    prompt_alignment_score,
)
from tracescore.scoring import ScorerRunError
from tracescore.testing import error


def reply(intent: float, req: float, comp: float, appr: float) -> dict[str, Any]:
    return {
        "intent_alignment": {"score": intent, "primary_intent": "list", "is_addressed": True,
                             "reasoning": "r"},
        "requirements_fulfillment": {"requirements": [
            {"requirement": "three items", "is_fulfilled": True, "reasoning": "r"}],
            "overall_score": req},
        "completeness": {"score": comp, "missing_elements": [], "reasoning": "r"},
        "response_appropriateness": {"score": appr, "format_alignment": True,
                                     "tone_alignment": True, "reasoning": "r"},
        "overall_assessment": "fine"}


@pytest.mark.parametrize(("mode", "expected"), [
    ("user", 0.4 * 1 + 0.3 * 0.5 + 0.2 * 0 + 0.1 * 1),
    ("system", 0.35 * 1 + 0.35 * 0.5 + 0.15 * 0 + 0.15 * 1),
    ("both", 0.7 * 0.65 + 0.3 * 0.675),  # the system weights count 30 %, unlike Mastra
])
def test_formula(mode: str, expected: float) -> None:
    analysis = AlignmentAnalysis.model_validate(reply(1, 0.5, 0, 1))
    assert prompt_alignment_score(analysis, mode) == pytest.approx(expected)


def test_weights_sum_to_one_and_no_analysis_scores_zero() -> None:
    for mode in ("user", "system", "both"):
        assert sum(mode_weights(mode)) == pytest.approx(1.0)
    assert prompt_alignment_score(None) == 0.0


def test_history_limit() -> None:
    assert history_limit(False) == 0 and history_limit(True) == 10
    assert history_limit({"maxMessages": 2}) == 2
    with pytest.raises(ValueError, match="at least 1"):
        history_limit({"max_messages": 0})
    with pytest.raises(TypeError, match="True/False"):
        history_limit("yes")


AGENT_INPUT = {
    "input_messages": [{"role": "user", "content": "List three fruits as bullets."}],
    "remembered_messages": [{"role": "user", "content": "I like tropical things."},
                            {"role": "assistant", "content": "Noted!"},
                            {"role": "user", "content": "   "}],
    "system_messages": [{"role": "system", "content": "Answer in English, briefly."}],
}


def test_run_with_history(llm_server: Any) -> None:
    llm_server.script(reply(1, 1, 1, 1), "The score is 2 because all three fruits are listed.")
    scorer = create_prompt_alignment_scorer_llm(
        judge(llm_server), scale=2, options={"includeConversationHistory": {"maxMessages": 2}})
    result = scorer.run_sync(input=AGENT_INPUT, output="- mango\n- papaya\n- pineapple")
    assert result.score == 2
    assert (scorer.id, scorer.name) == ("prompt-alignment-scorer", "Prompt Alignment (LLM)")
    prompt = result.analyze_prompt or ""
    assert "Earlier conversation:\nassistant: Noted!" in prompt  # last 2, blank ones dropped
    assert "I like tropical things." not in prompt
    assert "User prompt:\nList three fruits" in prompt
    assert "System instructions:\nAnswer in English" in prompt
    assert_recorded(result, ["analyze", "generate_reason"])


def test_user_mode_leaves_out_the_system_prompt(llm_server: Any) -> None:
    llm_server.script(reply(1, 1, 0, 0), "r")
    result = create_prompt_alignment_scorer_llm(judge(llm_server), evaluation_mode="user") \
        .run_sync(input=AGENT_INPUT, output="- mango")
    assert result.score == 0.7
    assert "System instructions" not in (result.analyze_prompt or "")
    assert "Earlier conversation" not in (result.analyze_prompt or "")


@pytest.mark.parametrize(("mode", "run", "message"), [
    ("user", {"input": {"system_messages": [{"role": "system", "content": "s"}],
                        "input_messages": []}, "output": "a"},
     "User prompt is required for user prompt alignment scoring"),
    ("system", {"input": "q", "output": "a"},
     "System prompt is required for system prompt alignment scoring"),
    ("both", {"input": {"input_messages": []}, "output": "a"},
     "A user or system prompt is required for combined alignment scoring"),
    ("both", {"input": "q", "output": ""},
     "Agent response is required for prompt alignment scoring"),
])
def test_run_errors(llm_server: Any, mode: str, run: dict[str, Any], message: str) -> None:
    scorer = create_prompt_alignment_scorer_llm(judge(llm_server), evaluation_mode=mode)  # type: ignore[arg-type]
    with pytest.raises(ScorerRunError, match=message) as info:
        scorer.run_sync(**run)
    assert info.value.failed_step == "analyze"
    assert llm_server.requests == []


def test_judge_failure_and_out_of_range_scores(llm_server: Any) -> None:
    llm_server.script(error(500))
    with pytest.raises(ScorerRunError) as info:
        create_prompt_alignment_scorer_llm(judge(llm_server)).run_sync(input="q", output="a")
    assert info.value.result is not None
    llm_server.script(reply(3, 1, 1, 1), reply(3, 1, 1, 1))  # score 3 breaks the schema twice
    with pytest.raises(ScorerRunError):
        create_prompt_alignment_scorer_llm(judge(llm_server)).run_sync(input="q", output="a")


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="evaluation_mode must be 'user', 'system' or 'both'"):
        create_prompt_alignment_scorer_llm("openai/x", evaluation_mode="all")  # type: ignore[arg-type]
