"""create_faithfulness_scorer against the scripted judge server."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message, tool_invocation

from tracescore.scorers import create_faithfulness_scorer
from tracescore.scoring import Judge, ScorerRunError
from tracescore.testing import Reply, error

CONTEXT = [
    "The company was founded in 1995 by John Smith.",
    "It has 500 employees and is headquartered in London.",
    "The company specializes in software development.",
]
ANSWER = ("The company was founded in 1995 by John Smith but has 1000 employees. Their "
          "headquarters is in Paris, and they focus on software development.")
CLAIMS = ["The company was founded in 1995 by John Smith.", "The company has 1000 employees.",
          "The headquarters is in Paris.", "The company focuses on software development."]


def judge(server: Any) -> Judge:
    return Judge(model="openai/scripted-judge", api_base=server.url)


def verdicts(*words: str) -> dict[str, Any]:
    return {"verdicts": [{"verdict": w, "reason": f"because {i}"} for i, w in enumerate(words)]}


def user_text(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def test_mixed_answer_scores_supported_share(llm_server: Any) -> None:
    llm_server.script(
        Reply(content={"claims": CLAIMS}, prompt_tokens=120, completion_tokens=40),
        Reply(content=verdicts("yes", "no", "no", "yes"), prompt_tokens=200, completion_tokens=80),
        Reply(content="The score is 0.5 because the employee count and the headquarters "
                      "contradict the context.", prompt_tokens=90, completion_tokens=30),
    )
    scorer = create_faithfulness_scorer(judge(llm_server), context=CONTEXT)
    result = scorer.run_sync(input=[{"role": "user", "content": "Tell me about the company"}],
                             output={"text": ANSWER})
    assert result.score == 0.5
    assert result.preprocess_step_result == {"claims": CLAIMS}
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["yes", "no", "no",
                                                                             "yes"]
    assert result.reason is not None and result.reason.startswith("The score is 0.5")
    assert ANSWER in (result.preprocess_prompt or "")
    analyze_prompt = result.analyze_prompt or ""
    assert CONTEXT[1] in analyze_prompt and CLAIMS[2] in analyze_prompt
    assert "0.5" in (result.generate_reason_prompt or "")
    assert set(result.judge) == {"preprocess", "analyze", "generate_reason"}
    assert result.judge_usage().input_tokens == 410
    assert result.judge["analyze"].executions[0].status == "success"
    assert result.scorer_id == "faithfulness-scorer"
    assert len(llm_server.requests) == 3
    system = llm_server.requests[0]["messages"][0]
    assert system["role"] == "system" and "fact checker" in system["content"]


@pytest.mark.parametrize(("words", "expected"), [
    (["Yes", " yes ", "YES.", "no"], 0.75),
    (["yes", "maybe", "supported", "unsure"], 0.25),
    (["no", "no", "unsure"], 0.0),
    (["yes", "yes", "yes"], 1.0),
    (["yes", "no", "no"], 0.33),
])
def test_verdict_words(llm_server: Any, words: list[str], expected: float) -> None:
    llm_server.script({"claims": [f"claim {i}" for i in range(len(words))]}, verdicts(*words),
                      "The score is explained.")
    scorer = create_faithfulness_scorer(judge(llm_server), context=CONTEXT)
    assert scorer.run_sync(input="q", output="a").score == expected


def test_zero_claims_score_zero(llm_server: Any) -> None:
    llm_server.script({"claims": []}, {"verdicts": []}, "The score is 0: there are no claims.")
    scorer = create_faithfulness_scorer(judge(llm_server), context=CONTEXT)
    result = scorer.run_sync(input="q", output={"text": ""})
    assert result.score == 0
    assert result.preprocess_step_result == {"claims": []}
    assert "(no claims)" in (result.analyze_prompt or "")


def test_scale(llm_server: Any) -> None:
    llm_server.script({"claims": ["a", "b", "c"]}, verdicts("yes", "yes", "no"), "reason")
    scorer = create_faithfulness_scorer(judge(llm_server), scale=10, context=CONTEXT)
    result = scorer.run_sync(input="q", output="a")
    assert result.score == 6.67
    assert "from 0 to 10" in (result.generate_reason_prompt or "")


def test_default_context_is_the_tool_results(llm_server: Any) -> None:
    llm_server.script({"claims": ["It is sunny in London."]}, verdicts("yes"), "reason")
    output = [
        message("Let me check.", tool_invocations=[tool_invocation(
            "weatherTool", args={"location": "London"},
            result={"temperature": 20, "condition": "sunny"})]),
        message("It is sunny in London."),
    ]
    scorer = create_faithfulness_scorer(judge(llm_server))
    result = scorer.run_sync({"input": agent_input("Weather in London?"), "output": output})
    assert result.score == 1
    assert '"condition": "sunny"' in (result.analyze_prompt or "")
    assert "weatherTool" in (result.analyze_prompt or "")
    assert '"condition": "sunny"' in (result.generate_reason_prompt or "")
    assert "It is sunny in London." in (result.preprocess_prompt or "")


def test_static_context_replaces_tool_results(llm_server: Any) -> None:
    llm_server.script({"claims": ["x"]}, verdicts("no"), "reason")
    output = [message("x", tool_invocations=[tool_invocation("weatherTool", result="rainy")])]
    scorer = create_faithfulness_scorer(judge(llm_server), context=["It snows."])
    result = scorer.run_sync(input="q", output=output)
    assert "It snows." in (result.analyze_prompt or "")
    assert "rainy" not in (result.analyze_prompt or "")


def test_no_context_at_all(llm_server: Any) -> None:
    llm_server.script({"claims": ["The company was founded in 1995."]}, verdicts("unsure"), "r")
    result = create_faithfulness_scorer(judge(llm_server)).run_sync(input="q", output="a")
    assert result.score == 0
    assert "(no context)" in (result.analyze_prompt or "")


def test_reason_sent_as_json_is_unwrapped(llm_server: Any) -> None:
    llm_server.script({"claims": ["a"]}, verdicts("yes"), {"reason": "The score is 1 because."})
    result = create_faithfulness_scorer(judge(llm_server), context=["a"]).run_sync(
        input="q", output="a")
    assert result.reason == "The score is 1 because."


def test_judge_http_failure_surfaces_as_scorer_run_error(llm_server: Any) -> None:
    llm_server.script({"claims": ["a"]}, error(500, "judge down"))
    scorer = create_faithfulness_scorer(judge(llm_server), context=["a"])
    with pytest.raises(ScorerRunError) as info:
        scorer.run_sync(input="q", output="a")
    err = info.value
    assert err.failed_step == "analyze"
    assert err.completed_steps == ["preprocess"]
    assert err.result is not None
    assert err.result.preprocess_step_result == {"claims": ["a"]}
    assert err.result.judge["analyze"].executions[0].status == "failed"


def test_unusable_judge_output_surfaces_as_scorer_run_error(llm_server: Any) -> None:
    llm_server.script("not json at all", "still not json")
    scorer = create_faithfulness_scorer(judge(llm_server), context=["a"])
    with pytest.raises(ScorerRunError) as info:
        scorer.run_sync(input="q", output="a")
    assert info.value.failed_step == "preprocess"
    assert len(llm_server.requests) == 2  # one fallback request with the schema spelled out


def test_model_string_and_judge_settings(llm_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", llm_server.url)
    llm_server.script({"claims": ["a"]}, verdicts("yes"), "reason")
    scorer = create_faithfulness_scorer("openai/from-a-string", context=["a"])
    assert scorer.judge is not None and scorer.judge.model == "openai/from-a-string"
    assert scorer.run_sync(input="q", output="a").score == 1
    assert llm_server.requests[0]["model"] == "from-a-string"


def test_own_instructions_win(llm_server: Any) -> None:
    llm_server.script({"claims": []}, {"verdicts": []}, "reason")
    custom = Judge(model="openai/x", api_base=llm_server.url, instructions="Be terse.",
                   model_settings={"temperature": 0})
    create_faithfulness_scorer(custom, context=["a"]).run_sync(input="q", output="a")
    assert llm_server.requests[0]["messages"][0]["content"] == "Be terse."
    assert llm_server.requests[0]["temperature"] == 0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        create_faithfulness_scorer("openai/x", scale=0)
    with pytest.raises(TypeError):
        create_faithfulness_scorer(42)  # type: ignore[arg-type]
