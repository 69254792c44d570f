"""Prompt steps against the scripted OpenAI-compatible server: real HTTP through litellm."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from tracescore.model import JudgeExecution, ScorerRun
from tracescore.scoring import (
    Judge,
    JudgeOutputError,
    PromptStep,
    ScoreOutOfRange,
    ScorerDefinitionError,
    ScorerRunError,
    StepResults,
    create_scorer,
)
from tracescore.testing import Reply, ScriptedLLMServer

MODEL = "openai/scripted-judge"


def _judge(server: ScriptedLLMServer, **kw: Any) -> Judge:
    kw.setdefault("instructions", "You are a strict grader.")
    return Judge(MODEL, api_base=server.url, **kw)


def _score_step(**kw: Any) -> PromptStep:
    return PromptStep("Grade the answer",
                      lambda run, results: f"Question: {run.input}\nAnswer: {run.output}", **kw)


def _only(result_judge: Any, step: str) -> JudgeExecution:
    executions = result_judge[step].executions
    assert len(executions) == 1
    return executions[0]


class Claims(BaseModel):
    claims: list[str]


async def test_prompt_generate_score_records_a_full_execution(llm_server: ScriptedLLMServer
                                                              ) -> None:
    llm_server.script(Reply(content={"score": 0.8}, prompt_tokens=120, completion_tokens=9,
                            reasoning_tokens=4, cached_tokens=20))
    scorer = create_scorer("quality", judge=_judge(llm_server)).generate_score(_score_step())
    result = await scorer.run(input="2+2?", output="4")
    assert result.score == 0.8
    assert result.generate_score_prompt == "Question: 2+2?\nAnswer: 4"
    ex = _only(result.judge, "generate_score")
    assert ex.status == "success"
    assert ex.prompt == result.generate_score_prompt
    assert (ex.judge_model_id, ex.judge_provider) == ("scripted-judge", "openai")
    assert (ex.attempt_count, ex.model_call_count) == (1, 1)
    assert ex.output == {"score": 0.8}
    assert ex.finish_reason == "stop" and ex.error is None
    assert ex.duration_ms > 0
    assert ex.usage is not None
    assert ex.usage.model_dump() == {
        "input_tokens": 120, "output_tokens": 9, "total_tokens": 129, "reasoning_tokens": 4,
        "cached_input_tokens": 20, "cache_creation_input_tokens": 0}
    assert ex.cost is None  # litellm has no price for an unknown model: absent, not an error
    assert result.judge_usage().input_tokens == 120
    # The request: instructions as system message, schema injected (model unknown to litellm).
    (request,) = llm_server.requests
    assert request["model"] == "scripted-judge"
    assert request["messages"][0] == {"role": "system", "content": "You are a strict grader."}
    assert request["messages"][1]["content"].startswith("Question: 2+2?\nAnswer: 4")
    assert '"score"' in request["messages"][1]["content"]
    assert "response_format" not in request


async def test_known_model_gets_a_litellm_cost_and_native_output(llm_server: ScriptedLLMServer
                                                                 ) -> None:
    from tracescore.scoring import load_litellm

    litellm = load_litellm()
    llm_server.script(Reply(content={"score": 1}, prompt_tokens=1000, completion_tokens=100))
    judge = Judge("openai/gpt-4o-mini", "Grade.", api_base=llm_server.url)
    result = await create_scorer("c", judge=judge).generate_score(_score_step()).run(
        input="q", output="a")
    ex = _only(result.judge, "generate_score")
    prices = litellm.model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 100 * prices["output_cost_per_token"]
    assert ex.cost is not None
    assert ex.cost.amount == pytest.approx(expected)
    assert (ex.cost.unit, ex.cost.source) == ("USD", "litellm")
    assert result.judge_cost() == pytest.approx(expected)
    # "auto" + a model litellm knows supports JSON schema: native response_format, no injection.
    (request,) = llm_server.requests
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["score"]
    assert "JSON Schema" not in request["messages"][-1]["content"]


async def test_every_prompt_step_kind(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(
        Reply(content={"claims": ["sky is blue", "grass is red"]}),
        Reply(content=[{"claim": "sky is blue", "ok": True},
                       {"claim": "grass is red", "ok": False}]),
        Reply(content={"supported": 1, "total": 2}),
        Reply(content="  One of two claims holds.  "),
    )
    verdicts = {"type": "array", "items": {"type": "object", "required": ["claim", "ok"],
                                           "properties": {"claim": {"type": "string"},
                                                          "ok": {"type": "boolean"}}}}
    counts = {"type": "object", "required": ["supported", "total"],
              "properties": {"supported": {"type": "integer"}, "total": {"type": "integer"}}}
    scorer = (
        create_scorer("faith", judge=_judge(llm_server))
        .preprocess(PromptStep("extract claims", lambda run, r: f"Claims in: {run.output}",
                               output_schema=Claims))
        .analyze(PromptStep("verify", lambda run, r: f"Verify {r.preprocess_step_result['claims']}",
                            output_schema=verdicts))
        .generate_score(PromptStep(
            "count", lambda run, r: f"Count {len(r.analyze_step_result)}", output_schema=counts,
            calculate_score=lambda run, r, out: out["supported"] / out["total"]))
        .generate_reason(PromptStep("explain",
                                    lambda run, r, score: f"Explain score {score}"))
    )
    result = await scorer.run(input="q", output="The sky is blue. Grass is red.")
    assert result.preprocess_step_result == {"claims": ["sky is blue", "grass is red"]}
    assert result.analyze_step_result[1] == {"claim": "grass is red", "ok": False}
    assert result.score == 0.5
    assert result.reason == "One of two claims holds."
    assert result.preprocess_prompt == "Claims in: The sky is blue. Grass is red."
    assert result.analyze_prompt == "Verify ['sky is blue', 'grass is red']"
    assert result.generate_score_prompt == "Count 2"
    assert result.generate_reason_prompt == "Explain score 0.5"
    assert list(result.judge) == ["preprocess", "analyze", "generate_score", "generate_reason"]
    assert _only(result.judge, "generate_reason").output == "One of two claims holds."
    assert result.judge_usage().input_tokens == 40
    # The text step asks for no schema.
    assert "JSON Schema" not in llm_server.requests[3]["messages"][-1]["content"]


async def test_dict_prompt_steps_with_camel_case_keys(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"verdict": "yes"}), Reply(content={"score": 3}))
    scorer = (
        create_scorer("dicts", judge={"model": MODEL, "instructions": "Judge.",
                                      "apiBase": llm_server.url})
        .analyze({"description": "verdict", "createPrompt": lambda run, r: "verdict?",
                  "outputSchema": {"type": "object", "required": ["verdict"]}})
        .generate_score({"description": "s", "create_prompt": lambda run, r: "score?",
                         "calculateScore": lambda run, r, out: out["score"] / 10})
    )
    result = await scorer.run(input="a", output="b")
    assert result.analyze_step_result == {"verdict": "yes"} and result.score == 0.3


async def test_step_judge_overrides_field_by_field(llm_server: ScriptedLLMServer) -> None:
    llm_server.set_default(lambda request: {"score": 1})
    base = _judge(llm_server, model_settings={"temperature": 0.7})
    scorer = (
        create_scorer("ovr", judge=base)
        .analyze(PromptStep("a", lambda run, r: "analyze", output_schema={"type": "object"},
                            judge=Judge(model="openai/other-judge")))
        .generate_score(_score_step(judge=Judge(model_settings={"temperature": 0.0},
                                                instructions="Score only.")))
    )
    await scorer.run(input="a", output="b")
    analyze_req, score_req = llm_server.requests
    assert analyze_req["model"] == "other-judge"
    assert analyze_req["messages"][0]["content"] == "You are a strict grader."
    assert analyze_req["temperature"] == 0.7
    assert score_req["model"] == "scripted-judge"
    assert score_req["messages"][0]["content"] == "Score only."
    assert score_req["temperature"] == 0.0


@pytest.mark.parametrize(
    ("mode", "native", "where"),
    [("inline", False, "user"), (True, False, "user"), ("system", False, "system"),
     (False, True, None), ("auto", False, "user")],
)
async def test_injection_modes(llm_server: ScriptedLLMServer, mode: Any, native: bool,
                               where: str | None) -> None:
    llm_server.script(Reply(content={"score": 0.5}))
    judge = _judge(llm_server, json_prompt_injection=mode)
    result = await create_scorer("inj", judge=judge).generate_score(_score_step()).run(
        input="q", output="a")
    assert result.score == 0.5
    (request,) = llm_server.requests
    system, user = request["messages"]
    assert ("response_format" in request) is native
    if native:
        assert request["response_format"]["json_schema"]["schema"]["properties"] == {
            "score": {"type": "number"}}
    assert ("JSON Schema" in system["content"]) is (where == "system")
    assert ("JSON Schema" in user["content"]) is (where == "user")


async def test_invalid_first_reply_gets_one_injected_fallback(llm_server: ScriptedLLMServer
                                                              ) -> None:
    llm_server.script(Reply(content="I think it is quite good", prompt_tokens=30,
                            completion_tokens=6),
                      Reply(content="```json\n{\"score\": 0.9}\n```", prompt_tokens=70,
                            completion_tokens=8))
    judge = _judge(llm_server, json_prompt_injection=False)
    result = await create_scorer("fb", judge=judge).generate_score(_score_step()).run(
        input="q", output="a")
    assert result.score == 0.9
    ex = _only(result.judge, "generate_score")
    assert (ex.attempt_count, ex.model_call_count) == (2, 2)
    assert ex.usage is not None
    assert (ex.usage.input_tokens, ex.usage.output_tokens, ex.usage.total_tokens) == (100, 14, 114)
    first, second = llm_server.requests
    assert "response_format" in first and "response_format" not in second
    assert "JSON Schema" in second["messages"][1]["content"]
    assert second["messages"][2] == {"role": "assistant", "content": "I think it is quite good"}
    assert "could not be used" in second["messages"][3]["content"]


async def test_fallback_also_invalid_fails_with_raw_output(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"score": "high"}), Reply(content={"grade": 1},
                                                             finish_reason="length"))
    scorer = create_scorer("bad", judge=_judge(llm_server)).generate_score(_score_step())
    with pytest.raises(ScorerRunError) as info:
        await scorer.run(input="q", output="a")
    err = info.value
    assert isinstance(err.cause, JudgeOutputError)
    assert err.failed_step == "generate_score" and err.completed_steps == []
    assert err.result is not None  # a judge call was made
    ex = _only(err.result.judge, "generate_score")
    assert ex.status == "failed"
    assert (ex.attempt_count, ex.model_call_count) == (2, 2)
    assert ex.raw_output == json.dumps({"grade": 1})
    assert ex.finish_reason == "length"
    assert ex.error is not None and ex.error.name == "JudgeOutputError"
    assert "score" in ex.error.message
    assert ex.usage is not None and ex.usage.input_tokens == 20
    assert err.result.generate_score_prompt == "Question: q\nAnswer: a"


async def test_native_output_refused_falls_back_to_injection(llm_server: ScriptedLLMServer
                                                             ) -> None:
    from tracescore.testing import error

    llm_server.script(error(400, "response_format json_schema is not supported"),
                      Reply(content={"score": 0.25}))
    judge = _judge(llm_server, json_prompt_injection=False)
    result = await create_scorer("ref", judge=judge).generate_score(_score_step()).run(
        input="q", output="a")
    assert result.score == 0.25
    ex = _only(result.judge, "generate_score")
    assert (ex.attempt_count, ex.model_call_count) == (2, 1)
    assert "response_format" not in llm_server.requests[1]


async def test_calculate_score_and_create_prompt_may_be_async(llm_server: ScriptedLLMServer
                                                              ) -> None:
    llm_server.script(Reply(content={"score": 4}))

    async def prompt(run: ScorerRun, results: StepResults) -> str:
        return f"rate {results.analyze_step_result}"

    async def calc(run: ScorerRun, results: StepResults, output: dict[str, int]) -> float:
        return output["score"] / 5

    scorer = (create_scorer("async", judge=_judge(llm_server)).analyze(lambda run: "x")
              .generate_score(PromptStep("s", prompt, calculate_score=calc)))
    result = await scorer.run(input="q", output="a")
    assert result.score == 0.8 and result.generate_score_prompt == "rate x"


async def test_input_and_output_processors(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content='Verdict >>> {"score": 0.6}'))

    def add_note(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*messages, {"role": "user", "content": "Be brief."}]

    async def strip_thinking(text: str) -> str:
        return text.split(">>>")[-1]

    judge = _judge(llm_server, input_processors=[add_note], output_processors=[strip_thinking])
    result = await create_scorer("proc", judge=judge).generate_score(_score_step()).run(
        input="q", output="a")
    assert result.score == 0.6
    assert llm_server.requests[0]["messages"][-1] == {"role": "user", "content": "Be brief."}
    ex = _only(result.judge, "generate_score")
    assert ex.raw_output == 'Verdict >>> {"score": 0.6}'


async def test_custom_score_schema_without_calculate_score_fails_clearly(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.script(Reply(content={"rating": 4}))
    step = _score_step(output_schema={"type": "object", "required": ["rating"]})
    with pytest.raises(ScorerRunError, match="calculate_score") as info:
        await create_scorer("cs", judge=_judge(llm_server)).generate_score(step).run(
            input="q", output="a")
    # The judge call itself succeeded and is kept in the snapshot.
    assert info.value.result is not None
    assert info.value.result.judge["generate_score"].executions[0].status == "success"


async def test_failed_execution_of_a_known_model_keeps_usage_and_cost(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.script(Reply(content="no json here", prompt_tokens=500, completion_tokens=50),
                      Reply(content="still none", prompt_tokens=600, completion_tokens=60))
    judge = Judge("openai/gpt-4o-mini", "Grade.", api_base=llm_server.url,
                  json_prompt_injection="inline")
    with pytest.raises(ScorerRunError) as info:
        await create_scorer("k", judge=judge).generate_score(_score_step()).run(
            input="q", output="a")
    assert info.value.result is not None
    ex = info.value.result.judge["generate_score"].executions[0]
    assert ex.status == "failed" and ex.error is not None
    assert ex.error.code == "invalid_output"
    assert ex.usage is not None and (ex.usage.input_tokens, ex.usage.output_tokens) == (1100, 110)
    assert ex.cost is not None and ex.cost.amount > 0
    assert info.value.result.judge_cost() == ex.cost.amount


@pytest.mark.parametrize(("reply", "step_kw", "shown"), [
    ({"score": 1e308}, {}, "1e+308 is outside the step's score_range [0, 1]"),
    ({"score": -0.5}, {}, "-0.5 is outside"),
    ({"score": 11}, {"score_range": (1, 10)}, "11.0 is outside the step's score_range [1, 10]"),
    ({"score": 1}, {"calculate_score": lambda run, r, out: float("nan")}, "nan is outside"),
])
async def test_a_score_outside_the_declared_range_fails_the_step(
        llm_server: ScriptedLLMServer, reply: dict[str, Any], step_kw: dict[str, Any],
        shown: str) -> None:
    llm_server.script(Reply(content=reply))
    scorer = create_scorer("ranged", judge=_judge(llm_server)).generate_score(
        PromptStep("s", lambda run, r: "score?", **step_kw))
    with pytest.raises(ScorerRunError) as info:
        await scorer.run(input="q", output="a")
    assert isinstance(info.value.cause, ScoreOutOfRange)
    assert shown in str(info.value)
    [execution] = info.value.result.judge["generate_score"].executions
    assert execution.status == "success"  # the judge answered; the step refused the value


async def test_a_declared_range_admits_its_scale(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"score": 7}), Reply(content={"score": 3}))
    ten = create_scorer("ten", judge=_judge(llm_server)).generate_score(
        PromptStep("s", lambda run, r: "1-10?", score_range=(1, 10)))
    assert (await ten.run(input="q", output="a")).score == 7
    scaled = create_scorer("scaled", judge=_judge(llm_server)).generate_score(
        {"create_prompt": lambda run, r: "x", "calculateScore": lambda run, r, out: out["score"],
         "scoreRange": [0, 5]})
    assert (await scaled.run(input="q", output="a")).score == 3


@pytest.mark.parametrize(("step", "message"), [
    ("analyze", "score_range only applies to generate_score"),
    ("generate_score", "score_range needs lowest <= highest"),
])
def test_score_range_is_checked_when_the_step_is_added(step: str, message: str) -> None:
    prompt = PromptStep("s", lambda run, r: "x", output_schema={"type": "object"},
                        score_range=(2, 1) if step == "generate_score" else (0, 1))
    with pytest.raises(ScorerDefinitionError, match=message):
        getattr(create_scorer("bad", judge=Judge(model=MODEL)), step)(prompt)
