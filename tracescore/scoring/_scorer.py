"""``create_scorer`` and ``Scorer``: an immutable four-step pipeline and its ``run``.

preprocess → analyze → generate_score → generate_reason; each step is a function (sync or
async) or a prompt step answered by the judge. Everything about a step (sync or async, how many
arguments it takes, its schema, its effective judge) is worked out when it is added, so a run
only calls functions: sync steps run inline, without a thread or an extra task.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Literal, TypeVar

from tracescore.model import JudgeExecution, NotScorable, ScorerRun, ScorerRunResult, StepJudge

from ._context import measure_prompt
from ._errors import (
    PipelineIncompleteError,
    ScoreOutOfRange,
    ScorerDefinitionError,
    ScorerRunError,
)
from ._judge import Judge, as_judge
from ._judge_call import JudgeCallFailed, call_judge_logprobs
from ._navigate import Navigation, navigate_judge, opening
from ._observe import notify_execution
from ._runs import coerce_prepared, construct, make_run
from ._steps import (
    STEP_ORDER,
    NotScorableSignal,
    PromptStep,
    StepCallable,
    StepName,
    StepResults,
    StepSpec,
    build_step,
)

InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")
ScorerType = Literal["agent", "trajectory"]

StepFunction = Callable[..., Any]
Step = StepFunction | PromptStep | Mapping[str, Any]
PrepareRun = Callable[[ScorerRun], "ScorerRun | Mapping[str, Any] | None | Awaitable[Any]"]

class _RunState:
    """What a run has produced so far (turned into the result, or the error's snapshot)."""

    __slots__ = ("preprocess", "analyze", "score", "reason", "prompts", "judge", "completed",
                 "judge_called")

    def __init__(self) -> None:
        self.preprocess: Any = None
        self.analyze: Any = None
        self.score: float | None = None
        self.reason: str | None = None
        self.prompts: dict[str, str] | None = None
        self.judge: dict[str, StepJudge] | None = None
        self.completed: list[str] = []
        self.judge_called = False


class Scorer(Generic[InputT, OutputT]):
    """An immutable scorer; ``.preprocess()``/``.analyze()``/... return new scorers.

    Build one with ``create_scorer``; score with ``await scorer.run(input=..., output=...)``.
    """

    __slots__ = ("id", "name", "description", "type", "judge", "prepare_run", "_steps",
                 "_plan", "_prepare", "_problem")

    id: str
    name: str
    description: str
    type: ScorerType | None
    judge: Judge | None
    prepare_run: PrepareRun | None
    _steps: dict[StepName, StepSpec]
    _plan: tuple[tuple[StepSpec, Judge | None], ...]
    _prepare: StepCallable | None
    _problem: tuple[str, str] | None

    def __init__(
        self,
        *,
        id: str,  # noqa: A002 - the public name
        name: str | None = None,
        description: str = "",
        type: ScorerType | None = None,  # noqa: A002 - the public name
        judge: Judge | None = None,
        prepare_run: PrepareRun | None = None,
        _steps: Mapping[StepName, StepSpec] | None = None,
    ) -> None:
        if not isinstance(id, str) or not id.strip():
            raise ScorerDefinitionError(
                "a scorer needs an id: create_scorer(id='my-scorer', description='...')"
            )
        if type not in (None, "agent", "trajectory"):
            raise ScorerDefinitionError(
                f"scorer {id!r}: type must be 'agent', 'trajectory' or None, got {type!r}"
            )
        steps = dict(_steps or {})
        sets = object.__setattr__
        sets(self, "id", id)
        sets(self, "name", name or id)
        sets(self, "description", description or "")
        sets(self, "type", type)
        sets(self, "judge", judge)
        sets(self, "prepare_run", prepare_run)
        sets(self, "_steps", steps)
        sets(self, "_prepare", StepCallable.of(prepare_run, what=f"scorer {id!r}: prepare_run")
             if prepare_run is not None else None)
        plan = []
        problem: tuple[str, str] | None = None
        for step_name in STEP_ORDER:
            spec = steps.get(step_name)
            if spec is None:
                continue
            effective = None
            if spec.kind == "prompt":
                effective = (judge or Judge()).merged(spec.judge)
                missing = [f for f in ("model", "instructions") if not getattr(effective, f)]
                if missing and problem is None:
                    problem = (step_name, (
                        f"scorer {id!r}, step {step_name!r}: a prompt step needs a judge "
                        f"{' and '.join(missing)}; pass judge=Judge(model=..., instructions=...) "
                        "to create_scorer or to the step"))
            plan.append((spec, effective))
        if "generate_score" not in steps and problem is None:
            problem = ("generate_score", (
                f"scorer {id!r} has no generate_score step; add one with "
                ".generate_score(fn) or .generate_score(PromptStep(...))"))
        sets(self, "_plan", tuple(plan))
        sets(self, "_problem", problem)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Scorer is immutable; .preprocess()/.analyze()/... return new scorers")

    def __repr__(self) -> str:
        return f"Scorer(id={self.id!r}, steps={list(self._steps)})"

    @property
    def judges(self) -> tuple[Judge, ...]:
        """The effective judge of each prompt step, in step order (empty for a code scorer);
        what start-up checks and ``tracescore check`` look at."""
        return tuple(judge for _, judge in self._plan if judge is not None)

    @property
    def code_objects(self) -> tuple[Any, ...]:
        """The functions this scorer runs (steps, prompt builders, ``prepare_run``, judge
        processors): what a hash of its source is taken over (the live registry's version)."""
        found: list[Any] = [] if self._prepare is None else [self._prepare.fn]
        for spec, judge in self._plan:
            for part in (spec.fn, spec.create_prompt, spec.calculate_score, spec.parse_output):
                if part is not None:
                    found.append(part.fn)
            if judge is not None:
                found += [*judge.input_processors, *judge.output_processors,
                          *judge.error_processors]
        return tuple(found)

    # builders -----------------------------------------------------------------------------

    def _with_step(self, name: StepName, step: Step) -> Scorer[InputT, OutputT]:
        steps = dict(self._steps)
        steps[name] = build_step(step, name, self.id)
        return Scorer(id=self.id, name=self.name, description=self.description, type=self.type,
                      judge=self.judge, prepare_run=self.prepare_run, _steps=steps)

    def preprocess(self, step: Step) -> Scorer[InputT, OutputT]:
        """A new scorer with this preprocess step: ``fn(run, results)`` or a prompt step."""
        return self._with_step("preprocess", step)

    def analyze(self, step: Step) -> Scorer[InputT, OutputT]:
        """A new scorer with this analyze step: ``fn(run, results)`` or a prompt step."""
        return self._with_step("analyze", step)

    def generate_score(self, step: Step) -> Scorer[InputT, OutputT]:
        """A new scorer with this generate_score step; it must produce a number."""
        return self._with_step("generate_score", step)

    def generate_reason(self, step: Step) -> Scorer[InputT, OutputT]:
        """A new scorer with this generate_reason step: ``fn(run, results, score)`` or a prompt."""
        return self._with_step("generate_reason", step)

    def with_judges(self, change: Callable[[str, Judge], Judge]) -> Scorer[InputT, OutputT]:
        """A new scorer whose prompt steps use ``change(step_name, judge)`` instead of the
        judge each would use (what an aligned judge version is built with)."""
        import dataclasses

        steps = dict(self._steps)
        for spec, effective in self._plan:
            if effective is not None:
                steps[spec.name] = dataclasses.replace(spec, judge=change(spec.name, effective))
        return Scorer(id=self.id, name=self.name, description=self.description, type=self.type,
                      judge=self.judge, prepare_run=self.prepare_run, _steps=steps)

    @property
    def steps(self) -> list[str]:
        """The names of the steps this scorer has, in run order."""
        return [spec.name for spec, _ in self._plan]

    def step_description(self, name: str) -> str:
        """The description of a prompt step ("" for function steps or a missing step)."""
        spec = self._steps.get(name)  # type: ignore[call-overload]
        return spec.description if spec is not None else ""

    # running ------------------------------------------------------------------------------

    def run_sync(
        self,
        run: ScorerRun | Mapping[str, Any] | None = None,
        /,
        *,
        input: InputT | None = None,  # noqa: A002 - the public name
        output: OutputT | None = None,
        run_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
        ground_truth: Any = None,
        expected_trajectory: Any = None,
    ) -> ScorerRunResult:
        """``run`` for scripts: runs its own event loop (not usable inside a running loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(
                run, input=input, output=output, run_id=run_id, request_context=request_context,
                ground_truth=ground_truth, expected_trajectory=expected_trajectory))
        raise RuntimeError(
            f"scorer {self.id!r}: run_sync() cannot be used inside a running event loop; "
            "use `await scorer.run(...)` instead"
        )

    async def run(
        self,
        run: ScorerRun | Mapping[str, Any] | None = None,
        /,
        *,
        input: InputT | None = None,  # noqa: A002 - the public name
        output: OutputT | None = None,
        run_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
        ground_truth: Any = None,
        expected_trajectory: Any = None,
    ) -> ScorerRunResult:
        """Score one run: prepare_run, then each step in order; returns a ``ScorerRunResult``.

        Pass the run's fields as keywords, or a ``ScorerRun`` (or its dict) positionally.
        Raises ``ScorerRunError`` when a step fails (its ``result`` holds what was done).
        """
        if self._problem is not None:
            step, message = self._problem
            raise PipelineIncompleteError(message, scorer_id=self.id, step=step)
        scorer_run = make_run(run, input, output, run_id, request_context, ground_truth,
                               expected_trajectory)
        if self._prepare is not None:
            try:
                prepared = await self._prepare.call(scorer_run)
            except Exception as exc:
                raise ScorerRunError("prepare_run", (), None, exc, scorer_id=self.id) from exc
            scorer_run = coerce_prepared(prepared, scorer_run)
        state = _RunState()
        for spec, judge in self._plan:
            name = spec.name
            try:
                fn = spec.fn
                if fn is not None:
                    if name == "generate_reason":
                        value = fn.invoke((scorer_run, StepResults(
                            state.preprocess, state.analyze, state.score), state.score))
                    else:
                        value = fn.invoke((scorer_run, StepResults(state.preprocess,
                                                                   state.analyze)))
                    if fn.is_async or hasattr(value, "__await__"):
                        value = await value
                else:
                    value = await self._prompt_step(spec, judge, scorer_run, state)
                if isinstance(value, NotScorableSignal):
                    return self._result(scorer_run, state, NotScorable(step=name,
                                                                       reason=value.reason))
                _store(state, name, value)
            except NotScorableSignal as signal:
                return self._result(scorer_run, state, NotScorable(step=name, reason=signal.reason))
            except Exception as exc:
                cause = exc.cause if isinstance(exc, JudgeCallFailed) else exc
                snapshot = None
                if state.completed or state.judge_called:
                    snapshot = self._result(scorer_run, state, None)
                raise ScorerRunError(name, state.completed, snapshot, cause,
                                     scorer_id=self.id) from cause
            state.completed.append(name)
        return self._result(scorer_run, state, None)

    async def _prompt_step(
        self, spec: StepSpec, judge: Judge | None, run: ScorerRun, state: _RunState
    ) -> Any:
        name = spec.name
        assert spec.create_prompt is not None and judge is not None
        if name == "generate_reason":
            results = StepResults(state.preprocess, state.analyze, state.score)
            prompt = await spec.create_prompt.call(run, results, state.score)
        else:
            results = StepResults(state.preprocess, state.analyze)
            prompt = await spec.create_prompt.call(run, results)
        if isinstance(prompt, NotScorableSignal):
            return prompt
        if prompt is None and name != "generate_score":
            return None  # nothing to ask: the step's result is None, no judge call
        if not isinstance(prompt, str):
            raise TypeError(f"create_prompt must return a string, got {type(prompt).__name__}")
        if state.prompts is None:
            state.prompts = {}
        state.prompts[name] = prompt
        if spec.navigation is not None and spec.navigate == "always":
            return await self._navigated(spec, judge, run, results, state)
        size = await measure_prompt(judge, prompt, spec.schema)
        if not size.fits:
            too_long = size.reason(f"the {name} prompt", judge.model)
            if spec.navigation is not None:
                return await self._navigated(spec, judge, run, results, state, too_long)
            return NotScorableSignal(too_long)
        if state.judge is None:
            state.judge = {}
        record = state.judge.setdefault(name, StepJudge())
        state.judge_called = True
        try:
            output, execution, logprobs = await call_judge_logprobs(
                judge, prompt=prompt, schema=spec.schema, step=name,
                top_logprobs=spec.top_logprobs)
        except JudgeCallFailed as failed:
            record.executions.append(failed.execution)
            notify_execution(name, failed.execution)
            raise
        record.executions.append(execution)
        notify_execution(name, execution)
        if spec.parse_output is not None:
            output = await spec.parse_output.call(output, logprobs)
        if name == "generate_score":
            if spec.calculate_score is not None:
                score = await spec.calculate_score.call(run, results, output, logprobs)
                return _within(score, spec.score_range, execution.raw_output)
            if isinstance(output, dict) and "score" in output:
                return _within(output["score"], spec.score_range, execution.raw_output)
            raise TypeError(
                "the judge's generate_score output has no 'score'; give the step a "
                "calculate_score(run, results, output) that turns the output into a number"
            )
        if name == "generate_reason" and isinstance(output, dict) and "reason" in output:
            return output["reason"]
        return output

    async def _navigated(self, spec: StepSpec, judge: Judge, run: ScorerRun,
                         results: StepResults, state: _RunState, too_long: str | None = None
                         ) -> Any:
        """The step answered by the navigating judge (``PromptStep(navigation=...)``); a
        navigation of None ends the run not scorable (``too_long`` says why, when given)."""
        name = spec.name
        assert spec.navigation is not None
        plan = await spec.navigation.call(run, results)
        if plan is None:
            return NotScorableSignal(too_long or f"the {name} step has nothing to navigate")
        if isinstance(plan, NotScorableSignal):
            return plan
        if not isinstance(plan, Navigation):
            raise TypeError(f"navigation must return a Navigation, got {type(plan).__name__}")
        assert state.prompts is not None
        state.prompts[name] = opening(plan.prompt, spec.schema, plan.caps)
        if state.judge is None:
            state.judge = {}
        record = state.judge.setdefault(name, StepJudge())
        state.judge_called = True

        def recorded(execution: JudgeExecution) -> None:
            record.executions.append(execution)
            notify_execution(name, execution)

        try:
            return await navigate_judge(judge, plan, schema=spec.schema, record=recorded)
        except JudgeCallFailed as failed:
            recorded(failed.execution)
            raise

    def _result(
        self, run: ScorerRun, state: _RunState, not_scorable: NotScorable | None
    ) -> ScorerRunResult:
        prompts = state.prompts or _NO_PROMPTS
        return construct(ScorerRunResult, {
            "run_id": run.run_id,
            "scorer_id": self.id,
            "score": state.score if not_scorable is None else None,
            "reason": state.reason,
            "preprocess_step_result": state.preprocess,
            "analyze_step_result": state.analyze,
            "preprocess_prompt": prompts.get("preprocess"),
            "analyze_prompt": prompts.get("analyze"),
            "generate_score_prompt": prompts.get("generate_score"),
            "generate_reason_prompt": prompts.get("generate_reason"),
            "judge": dict(state.judge) if state.judge else {},
            "not_scorable": not_scorable,
            "input": run.input,
            "output": run.output,
            "ground_truth": run.ground_truth,
            "expected_trajectory": run.expected_trajectory,
            "request_context": run.request_context,
            "decided_by": None,
        })


_NO_PROMPTS: dict[str, str] = {}
def _store(state: _RunState, name: str, value: Any) -> None:
    if name == "preprocess":
        state.preprocess = value
    elif name == "analyze":
        state.analyze = value
    elif name == "generate_score":
        state.score = _as_score(value)
    else:
        state.reason = _as_reason(value)


def _within(value: Any, score_range: tuple[float, float], raw_output: str | None) -> Any:
    """``value`` when it is not a number (``_as_score`` says so) or lies in ``score_range``;
    ``ScoreOutOfRange`` otherwise (a prompt step's declared scale, issue 27)."""
    if isinstance(value, NotScorableSignal) or isinstance(value, bool):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    low, high = score_range
    if not (math.isfinite(number) and low <= number <= high):
        raise ScoreOutOfRange(number, score_range, raw_output=raw_output)
    return value


def _as_score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            import numbers

            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                return float(value)
        except TypeError:  # pragma: no cover
            pass
        raise TypeError(
            f"generate_score must produce a number, got {type(value).__name__}: {value!r:.80}"
        )
    return float(value)


def _as_reason(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # pragma: no cover
        return str(value)


def create_scorer(
    id: str | None = None,  # noqa: A002 - the public name
    description: str = "",
    *,
    name: str | None = None,
    judge: Judge | Mapping[str, Any] | None = None,
    type: ScorerType | None = None,  # noqa: A002 - the public name
    prepare_run: PrepareRun | None = None,
) -> Scorer[Any, Any]:
    """Start a scorer; add steps with ``.preprocess``, ``.analyze``, ``.generate_score``,
    ``.generate_reason``.

    Args:
        id: a stable identifier (scores are stored under it).
        description: what the scorer measures.
        name: a display name (defaults to ``id``).
        judge: the default ``Judge`` for prompt steps.
        type: ``"agent"`` (input ``AgentInput``, output ``list[Message]``), ``"trajectory"``
            (output ``Trajectory``) or None (any shapes).
        prepare_run: ``fn(run) -> run`` (sync or async) applied before any step, e.g.
            ``filter_run(...)``.
    """
    return Scorer(
        id=id,  # type: ignore[arg-type] # None is refused with a clear error
        name=name,
        description=description,
        type=type,
        judge=as_judge(judge),
        prepare_run=prepare_run,
    )
