"""The declarative LLM-scorer builder: options, context, scale and rounding, steps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from judged import assert_recorded, judge
from mastra_shapes import message, tool_invocation

from tracescore.scorers._builder import (
    Ask,
    Compute,
    ContextRule,
    Judged,
    LLMScorerSpec,
    Loose,
    Unscaled,
    build_llm_scorer,
    merge_numbers,
    merge_options,
    share,
    snake,
)
from tracescore.scoring import ScorerRunError


class Words(Loose):
    words: list[str]


def _spec(**changes: Any) -> LLMScorerSpec:
    values: dict[str, Any] = {
        "id": "words-scorer", "name": "Words", "description": "test spec",
        "instructions": "Answer in JSON.",
        "analyze": Ask("list words", lambda j: f"context={j.context} out={j.output_text}", Words,
                       uses_context=True),
        "score": lambda j: share([{"w": w} for w in j.analyze.words], "w"),
        "context": ContextRule(),
    }
    values.update(changes)
    return LLMScorerSpec(**values)


def test_snake_and_merge_options() -> None:
    assert snake("contextExtractor") == "context_extractor"
    assert snake("scale") == "scale"
    spec = _spec(option_names=("max_questions",))
    opts = merge_options(spec, {"scale": 1, "max_questions": 10},
                         {"maxQuestions": 3, "scale": 2})
    assert opts == {"scale": 2, "max_questions": 3}
    with pytest.raises(TypeError, match="unknown option.*maxQuestion; use max_questions, scale"):
        merge_options(spec, {}, {"maxQuestion": 3})


def test_merge_numbers() -> None:
    assert merge_numbers("p", {"a_b": 0.1}, {"aB": 2}) == {"a_b": 2.0}
    with pytest.raises(TypeError, match="p: unknown key 'c'"):
        merge_numbers("p", {"a_b": 0.1}, {"c": 1})
    with pytest.raises(ValueError, match="p.aB must be a number of at least 0"):
        merge_numbers("p", {"a_b": 0.1}, {"aB": -1})


def test_share_trims_and_lowercases_and_counts_unknown_words() -> None:
    items = [{"v": " Yes "}, {"v": "YES."}, {"v": "perhaps"}, {"v": "no"}]
    assert share(items, "v") == 0.5
    assert share([], "v") == 0.0
    assert share(items, "v", {"yes": 1.0, "perhaps": 0.5}) == 0.625


def test_scale_and_half_up_rounding(llm_server: Any) -> None:
    # 1/8 yes = 0.125 → 0.13 (half up, not banker's 0.12); × 3 = 0.375 → 0.38
    llm_server.script({"words": ["yes"] + ["no"] * 7}, {"words": ["yes"] + ["no"] * 7})
    spec = _spec()
    assert build_llm_scorer(spec, judge(llm_server), {}).run_sync(input="q", output="a").score \
        == 0.13
    assert build_llm_scorer(spec, judge(llm_server), {"scale": 3}).run_sync(
        input="q", output="a").score == 0.38


def test_unscaled_and_unscaled_specs(llm_server: Any) -> None:
    llm_server.script({"words": []}, {"words": []})
    fixed = _spec(score=lambda j: Unscaled(1.0))
    assert build_llm_scorer(fixed, judge(llm_server), {"scale": 5}).run_sync(
        input="q", output="a").score == 1.0
    plain = _spec(score=lambda j: 0.5, scaled=False)
    assert build_llm_scorer(plain, judge(llm_server), {}).run_sync(
        input="q", output="a").score == 0.5
    with pytest.raises(TypeError, match="unknown option"):
        merge_options(plain, {}, {"scale": 2})


def test_bad_scale_is_refused() -> None:
    with pytest.raises(ValueError, match="scale must be a positive number"):
        build_llm_scorer(_spec(), "openai/x", {"scale": 0})


def test_default_context_is_the_tool_results(llm_server: Any) -> None:
    llm_server.script({"words": ["yes"]})
    output = [message("Sunny.", tool_invocations=[tool_invocation("weather", result="sunny")])]
    result = build_llm_scorer(_spec(), judge(llm_server), {}).run_sync(input="q", output=output)
    assert "weather: sunny" in (result.analyze_prompt or "")


def test_default_context_can_be_the_input_or_none(llm_server: Any) -> None:
    llm_server.script({"words": []}, {"words": []})
    from_input = _spec(context=ContextRule(default="input"))
    result = build_llm_scorer(from_input, judge(llm_server), {}).run_sync(
        input="the source text", output="a")
    assert "['the source text']" in (result.analyze_prompt or "")
    nothing = _spec(context=ContextRule(default="none"))
    result = build_llm_scorer(nothing, judge(llm_server), {}).run_sync(input="q", output="a")
    assert "context=[]" in (result.analyze_prompt or "")


def test_static_context_and_extractor(llm_server: Any) -> None:
    seen: list[tuple[Any, Any]] = []

    async def extractor(input: Any, output: Any) -> list[str]:
        seen.append((input, output))
        await asyncio.sleep(0)
        return ["from the extractor"]

    llm_server.script({"words": []}, {"words": []})
    static = build_llm_scorer(_spec(), judge(llm_server), {"context": "one piece"})
    assert "['one piece']" in (static.run_sync(input="q", output="a").analyze_prompt or "")
    dynamic = build_llm_scorer(_spec(), judge(llm_server),
                               {"context": ["static"], "context_extractor": extractor})
    result = dynamic.run_sync(input="q", output="a")
    assert "from the extractor" in (result.analyze_prompt or "")
    assert seen == [("q", "a")]


def test_required_context_errors_are_sentences() -> None:
    spec = _spec(context=ContextRule(required="Words"))
    with pytest.raises(ValueError, match="^Either context or contextExtractor is required for "
                                         "Words scoring$"):
        build_llm_scorer(spec, "openai/x", {})
    with pytest.raises(ValueError, match="^Context array cannot be empty if provided$"):
        build_llm_scorer(spec, "openai/x", {"context": []})
    with pytest.raises(TypeError, match="context_extractor must be a function"):
        build_llm_scorer(spec, "openai/x", {"context_extractor": "nope"})
    source = _spec(context=ContextRule(key="source", required="Words"))
    with pytest.raises(ValueError, match="Either source or sourceExtractor"):
        build_llm_scorer(source, "openai/x", {})


def test_step_outputs_reach_functions_as_schema_instances(llm_server: Any) -> None:
    seen: list[Any] = []

    def compute(j: Judged) -> dict[str, Any]:
        return {"n": len(j.output_text)}

    def prompt(j: Judged) -> str:
        seen.append((j.preprocess, type(j.analyze)))
        return f"n={j.preprocess['n']}"

    def score(j: Judged) -> float:
        seen.append(type(j.analyze))
        return 1.0 if j.analyze.words == ["a"] else 0.0

    spec = _spec(preprocess=Compute(compute), analyze=Ask("a", prompt, Words), score=score,
                 reason=Ask("why", lambda j: f"score {j.score} of {j.scale}"))
    llm_server.script({"words": ["a"], "extra": 1}, {"reason": "Because."})
    result = build_llm_scorer(spec, judge(llm_server), {"scale": 2}).run_sync(
        input="q", output="four")
    assert result.score == 2
    assert result.preprocess_step_result == {"n": 4}
    assert result.analyze_step_result == {"words": ["a"], "extra": 1}  # extra keys are kept
    assert seen == [({"n": 4}, type(None)), Words]
    assert result.generate_reason_prompt == "score 2.0 of 2"
    assert result.reason == "Because."
    assert_recorded(result, ["analyze", "generate_reason"])


def test_a_failing_prompt_function_is_a_run_error(llm_server: Any) -> None:
    def prompt(j: Judged) -> str:
        raise ValueError("the run lacks what this scorer needs")

    spec = _spec(analyze=Ask("a", prompt, Words))
    with pytest.raises(ScorerRunError, match="lacks what this scorer needs") as info:
        build_llm_scorer(spec, judge(llm_server), {}).run_sync(input="q", output="a")
    assert info.value.failed_step == "analyze"
    assert llm_server.requests == []
