"""The pipeline with function steps: building, running, not_scorable, errors, run_sync."""

from __future__ import annotations

import asyncio
import functools
import pickle

import pytest

import tracescore
from tracescore.model import ScorerRun, ScorerRunResult, TracescoreError
from tracescore.scoring import (
    Judge,
    PromptStep,
    Scorer,
    ScorerDefinitionError,
    ScorerRunError,
    StepResults,
    create_scorer,
    not_scorable,
)


def _four_step(sync: bool = True) -> Scorer[str, str]:
    if sync:
        return (
            create_scorer("length", "answer length vs question length")
            .preprocess(lambda run, results: {"q": len(run.input), "a": len(run.output)})
            .analyze(lambda run, results: results.preprocess_step_result["a"]
                     / results.preprocess_step_result["q"])
            .generate_score(lambda run, results: min(1.0, results.analyze_step_result))
            .generate_reason(lambda run, results, score: f"ratio {results.analyze_step_result:.2f}"
                             f" gives {score}")
        )

    async def pre(run: ScorerRun, results: StepResults) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"q": len(run.input), "a": len(run.output)}

    async def ana(run: ScorerRun, results: StepResults) -> float:
        return results.preprocess_step_result["a"] / results.preprocess_step_result["q"]

    async def score(run: ScorerRun, results: StepResults) -> float:
        return min(1.0, results.analyze_step_result)

    async def reason(run: ScorerRun, results: StepResults, score: float) -> str:
        return f"ratio {results.analyze_step_result:.2f} gives {score}"

    return (create_scorer("length", "d").preprocess(pre).analyze(ana).generate_score(score)
            .generate_reason(reason))


@pytest.mark.parametrize("sync", [True, False])
async def test_function_pipeline_sync_and_async(sync: bool) -> None:
    scorer = _four_step(sync)
    result = await scorer.run(input="four", output="ab", run_id="r1", ground_truth="gt",
                              request_context={"user": "u"})
    assert isinstance(result, ScorerRunResult)
    assert result.run_id == "r1"
    assert result.scorer_id == "length"
    assert result.preprocess_step_result == {"q": 4, "a": 2}
    assert result.analyze_step_result == 0.5
    assert result.score == 0.5
    assert result.reason == "ratio 0.50 gives 0.5"
    assert (result.input, result.output, result.ground_truth) == ("four", "ab", "gt")
    assert result.request_context == {"user": "u"}
    assert result.judge == {} and result.not_scorable is None
    assert result.generate_score_prompt is None


async def test_mixed_sync_async_partial_and_callable_objects() -> None:
    class Scale:
        async def __call__(self, run: ScorerRun, results: StepResults) -> float:
            return results.analyze_step_result * 2

    async def add(n: int, run: ScorerRun, results: StepResults) -> int:
        return n + len(run.output)

    scorer = (create_scorer("mixed").analyze(functools.partial(add, 1)).generate_score(Scale()))
    result = await scorer.run(input="x", output="abc")
    assert result.analyze_step_result == 4
    assert result.score == 8.0


async def test_steps_may_take_fewer_parameters() -> None:
    scorer = (create_scorer("short")
              .preprocess(lambda: "nothing")
              .analyze(lambda run: run.output.upper())
              .generate_score(lambda run, results: 1 if results.analyze_step_result == "OK" else 0)
              .generate_reason(lambda run, results: "no score parameter"))
    result = await scorer.run(input="q", output="ok")
    assert result.preprocess_step_result == "nothing"
    assert result.score == 1.0 and result.reason == "no score parameter"


async def test_results_mapping_access_and_score_for_reason() -> None:
    seen = {}

    def reason(run: ScorerRun, results: StepResults, score: float) -> str:
        seen["camel"] = results["analyzeStepResult"]
        seen["score_attr"] = results.score
        seen["score"] = score
        return "ok"

    scorer = create_scorer("m").analyze(lambda run: 7).generate_score(lambda r, res: 0.25)
    await scorer.generate_reason(reason).run(input="a", output="b")
    assert seen == {"camel": 7, "score_attr": 0.25, "score": 0.25}


async def test_scorer_is_immutable_and_builders_return_new_scorers() -> None:
    base = create_scorer("imm", "desc", name="Immutable")
    with_score = base.generate_score(lambda run: 1)
    assert base is not with_score
    assert base.steps == [] and with_score.steps == ["generate_score"]
    assert (with_score.id, with_score.name, with_score.description) == ("imm", "Immutable", "desc")
    assert create_scorer("x").name == "x"
    with pytest.raises(AttributeError):
        with_score.id = "other"  # type: ignore[misc]
    # Replacing a step keeps the rest.
    v2 = with_score.analyze(lambda run: 2).generate_score(lambda run, r: r.analyze_step_result)
    assert (await v2.run(input=1, output=2)).score == 2.0
    assert (await with_score.run(input=1, output=2)).score == 1.0


def test_missing_id_and_bad_type_are_clear() -> None:
    with pytest.raises(ScorerDefinitionError, match="needs an id"):
        create_scorer(description="no id")
    with pytest.raises(ScorerDefinitionError, match="needs an id"):
        create_scorer("  ")
    with pytest.raises(ScorerDefinitionError, match="type must be"):
        create_scorer("t", type="span")  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match="must be a function"):
        create_scorer("t").analyze(42)  # type: ignore[arg-type]


async def test_missing_generate_score_is_a_clear_error() -> None:
    scorer = create_scorer("noscore").analyze(lambda run: 1)
    with pytest.raises(ScorerDefinitionError, match="no generate_score step") as info:
        await scorer.run(input="a", output="b")
    assert isinstance(info.value, ScorerRunError)
    assert info.value.failed_step == "generate_score" and info.value.result is None


async def test_prompt_step_without_model_or_instructions_names_the_step() -> None:
    step = PromptStep("judge it", lambda run, results: "prompt")
    no_judge = create_scorer("nj").analyze(lambda run: 1).generate_score(step)
    with pytest.raises(TracescoreError, match=r"'generate_score'.*model and instructions"):
        await no_judge.run(input="a", output="b")
    no_instructions = create_scorer("ni", judge=Judge(model="openai/x")).generate_score(step)
    with pytest.raises(ScorerRunError, match=r"step 'generate_score'.*instructions"):
        await no_instructions.run(input="a", output="b")
    analyze = PromptStep("a", lambda run, results: "p", output_schema={"type": "object"},
                         judge=Judge(instructions="be fair"))
    no_model = (create_scorer("nm").analyze(analyze).generate_score(lambda run: 1))
    with pytest.raises(ScorerRunError, match=r"step 'analyze'.*judge model"):
        await no_model.run(input="a", output="b")


def test_prompt_analyze_needs_a_schema() -> None:
    with pytest.raises(ScorerDefinitionError, match="'preprocess'.*output_schema"):
        create_scorer("s").preprocess(PromptStep("p", lambda run, results: "x"))
    with pytest.raises(ScorerDefinitionError, match="create_prompt"):
        create_scorer("s").analyze({"description": "no prompt", "output_schema": {}})


@pytest.mark.parametrize("where", ["preprocess", "analyze", "generate_score", "generate_reason"])
async def test_not_scorable_stops_the_run(where: str) -> None:
    calls: list[str] = []

    def step(name: str, value: object):  # type: ignore[no-untyped-def]
        def fn(run: ScorerRun, results: StepResults, *rest: object) -> object:
            calls.append(name)
            if name == where:
                return not_scorable(f"nothing to score at {name}")
            return value
        return fn

    scorer = (create_scorer("ns").preprocess(step("preprocess", "p")).analyze(step("analyze", "a"))
              .generate_score(step("generate_score", 0.7))
              .generate_reason(step("generate_reason", "why")))
    result = await scorer.run(input="in", output="out")
    assert result.score is None and result.reason is None
    assert result.not_scorable is not None
    assert result.not_scorable.step == where
    assert result.not_scorable.reason == f"nothing to score at {where}"
    order = ["preprocess", "analyze", "generate_score", "generate_reason"]
    assert calls == order[: order.index(where) + 1]


async def test_not_scorable_can_be_raised_and_has_optional_reason() -> None:
    def pre(run: ScorerRun) -> None:
        raise not_scorable()

    result = await create_scorer("r").preprocess(pre).generate_score(lambda run: 1).run(
        input="a", output="b")
    assert result.not_scorable is not None and result.not_scorable.reason is None
    assert result.score is None


async def test_step_failure_raises_scorer_run_error_with_snapshot() -> None:
    def analyze(run: ScorerRun, results: StepResults) -> float:
        raise ValueError("analysis exploded")

    scorer = create_scorer("boom").preprocess(lambda run: {"n": 1}).analyze(analyze).generate_score(
        lambda run: 1)
    with pytest.raises(ScorerRunError) as info:
        await scorer.run(input="a", output="b", run_id="rid")
    err = info.value
    assert err.failed_step == "analyze"
    assert err.completed_steps == ["preprocess"]
    assert isinstance(err.cause, ValueError) and err.__cause__ is err.cause
    assert err.result is not None
    assert err.result.preprocess_step_result == {"n": 1}
    assert err.result.run_id == "rid" and err.result.score is None
    text = str(err)
    assert "boom" in text and "analyze" in text and "analysis exploded" in text
    data = err.to_dict()
    assert "result" not in data and "{'n': 1}" not in text
    assert data["failed_step"] == "analyze" and data["completed_steps"] == ["preprocess"]
    assert data["cause"] == {"name": "ValueError", "message": "analysis exploded", "code": None}
    again = pickle.loads(pickle.dumps(err))
    assert again.failed_step == "analyze" and str(again) == text


async def test_first_step_failure_has_no_snapshot() -> None:
    scorer = create_scorer("first").generate_score(lambda run: 1 / 0)
    with pytest.raises(ScorerRunError) as info:
        await scorer.run(input="a", output="b")
    assert info.value.result is None and info.value.completed_steps == []
    assert isinstance(info.value.cause, ZeroDivisionError)


async def test_generate_score_must_return_a_number() -> None:
    scorer = create_scorer("nan").generate_score(lambda run: "high")
    with pytest.raises(ScorerRunError, match="must produce a number"):
        await scorer.run(input="a", output="b")


async def test_prepare_run_sync_and_async_transform_the_run() -> None:
    def upper(run: ScorerRun) -> ScorerRun:
        return run.model_copy(update={"output": run.output.upper()})

    async def add_context(run: ScorerRun) -> dict[str, object]:
        return {"request_context": {"tenant": "t1"}}

    seen = []
    for prepare in (upper, add_context):
        scorer = create_scorer("prep", prepare_run=prepare).generate_score(
            lambda run: seen.append((run.output, run.request_context)) or 1)
        result = await scorer.run(input="q", output="answer")
        assert result.score == 1.0
    assert seen == [("ANSWER", None), ("answer", {"tenant": "t1"})]

    def broken(run: ScorerRun) -> ScorerRun:
        raise RuntimeError("cannot prepare")

    with pytest.raises(ScorerRunError) as info:
        await create_scorer("p2", prepare_run=broken).generate_score(lambda r: 1).run(input=1)
    assert info.value.failed_step == "prepare_run" and info.value.result is None


async def test_run_accepts_a_scorer_run_or_dict_and_new_run_ids() -> None:
    scorer = create_scorer("ids").generate_score(lambda run: len(run.input))
    a = await scorer.run(input="abc", output="")
    b = await scorer.run(input="abc", output="")
    assert a.run_id != b.run_id and len(a.run_id) == 36
    c = await scorer.run(ScorerRun(input="abcd", trace_id="t" * 32, run_id="given"))
    assert (c.score, c.run_id) == (4.0, "given")
    d = await scorer.run({"input": "ab", "groundTruth": "g"})
    assert d.score == 2.0 and d.ground_truth == "g"


def test_run_sync_outside_and_inside_a_loop() -> None:
    scorer = _four_step()
    assert scorer.run_sync(input="four", output="four").score == 1.0

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="running event loop"):
            scorer.run_sync(input="a", output="b")

    asyncio.run(inside())


def test_public_names_import_from_tracescore() -> None:
    for name in ("create_scorer", "Scorer", "PromptStep", "Judge", "RetryProcessor",
                 "not_scorable", "ScorerRunError", "ScorerDefinitionError", "filter_run"):
        assert getattr(tracescore, name) is getattr(tracescore.scoring, name)


def test_importing_scoring_does_not_load_litellm() -> None:
    import subprocess
    import sys

    code = ("import sys, tracescore.scoring as s; s.create_scorer('x').generate_score(lambda r: 1)"
            ".run_sync(input=1); print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_results_are_ordinary_pydantic_models() -> None:
    # The pipeline builds results without re-validating; they must behave like validated ones.
    result = await _four_step().run(input="four", output="ab", run_id="r",
                                    request_context={"k": 1})
    again = ScorerRunResult.model_validate(result.model_dump())
    assert again == result
    assert ScorerRunResult.model_validate_json(result.model_dump_json()) == result
    assert result.model_copy(update={"score": 0.1}).score == 0.1
    assert result.model_dump(exclude_none=True)["request_context"] == {"k": 1}


async def test_positional_input_is_refused_clearly() -> None:
    scorer = create_scorer("pos").generate_score(lambda run: 1)
    with pytest.raises(TypeError, match="as keywords"):
        await scorer.run("question")  # type: ignore[arg-type]


async def test_prepare_run_returning_a_partial_dict_keeps_typed_fields() -> None:
    from tracescore.model import AgentInput, Message

    agent_input = AgentInput(input_messages=[Message(role="user", content="hi")])
    scorer = create_scorer("pd", prepare_run=lambda run: {"groundTruth": "gt"}).generate_score(
        lambda run: 1)
    result = await scorer.run(input=agent_input, output="o")
    assert result.input is agent_input and result.ground_truth == "gt"


def test_a_prompt_step_whose_prompt_is_none_asks_no_judge() -> None:
    # The judge points at a closed port: any call would fail the run.
    judge = Judge("openai/never-called", "unused", api_base="http://127.0.0.1:9/v1")
    scorer = (
        create_scorer("skip", "d", judge=judge)
        .analyze(PromptStep("maybe", lambda run, results: None, output_schema={"type": "object"}))
        .generate_score(lambda run, results: 1.0 if results.analyze_step_result is None else 0.0)
        .generate_reason(PromptStep("why", lambda run, results, score: None))
    )
    result = scorer.run_sync(input="q", output="a")
    assert (result.score, result.reason, result.analyze_prompt) == (1.0, None, None)
    assert result.judge == {}


def test_run_ids_are_version_4_uuids_and_a_forked_child_draws_its_own() -> None:
    import multiprocessing
    import uuid

    from tracescore.model import new_run_id

    ids = [new_run_id() for _ in range(600)]  # past one 4 KB read of random bytes
    assert len(set(ids)) == len(ids)
    assert {(uuid.UUID(i).version, uuid.UUID(i).variant) for i in ids} == {(4, uuid.RFC_4122)}
    context = multiprocessing.get_context("fork")
    child_ids = context.SimpleQueue()
    child = context.Process(target=lambda: child_ids.put([new_run_id() for _ in range(3)]))
    child.start()
    child.join(30)
    drawn = child_ids.get()
    mine = [new_run_id() for _ in range(3)]
    assert not set(drawn) & set(mine), "the child repeated the parent's random bytes"
