"""Running one data item: call the target (once, or turn by turn on one thread), then its gates
and scorers; every failure is caught and recorded on the item unless ``fail_fast`` is set."""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.model import AgentInput, Message, ScorerRunResult, Trajectory, to_agent_input

from ._models import AgentResponse
from ._plan import Assertion, ItemPlan, Plan, TurnPlan
from ._results import ErrorPhase, ItemResult, ItemTurnResult
from ._targets import AgentTarget, WorkflowTarget
from ._trajectory import (
    concat_trajectories,
    trajectory_from_messages,
    trajectory_from_trace,
    trajectory_from_workflow,
)


@dataclass(slots=True)
class ScorerOutcome:
    """One scorer run on one item (or one turn, or one workflow step)."""

    assertion: Assertion
    item_index: int
    turn_index: int | None
    step_id: str | None
    result: ScorerRunResult | None
    """The run's result; on failure the partial result the scorer kept, if any."""
    error: BaseException | None
    duration_ms: float
    input: Any
    output: Any
    trace_id: str | None = None
    span_id: str | None = None

    @property
    def score(self) -> float | None:
        """The number this run produced, or None (failed or not scorable)."""
        if self.error is not None or self.result is None or self.result.score is None:
            return None
        return float(self.result.score)

    @property
    def not_scorable(self) -> bool:
        """True when the run ended without a score and without an error."""
        return self.error is None and (self.result is None or self.result.score is None)


@dataclass(slots=True)
class ItemOutcome:
    """Everything one item produced."""

    plan: ItemPlan
    result: ItemResult
    runs: list[ScorerOutcome] = field(default_factory=list)
    target_result: Any = None


class _Lazy:
    """A trajectory computed on first use and kept."""

    def __init__(self, compute: Callable[[], Awaitable[Trajectory]]) -> None:
        self._compute = compute
        self._value: Trajectory | None = None

    async def get(self) -> Trajectory:
        if self._value is None:
            self._value = await self._compute()
        return self._value


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _put(results: dict[str, Any], assertion: Assertion, value: Any) -> None:
    node = results
    for key in assertion.group:
        node = node.setdefault(key, {})
    node[assertion.id] = value


class ItemRunner:
    """Runs items of one plan against one target."""

    def __init__(
        self,
        plan: Plan,
        target: AgentTarget | WorkflowTarget,
        *,
        target_options: Mapping[str, Any],
        trace_store: Any,
        fail_fast: bool,
    ) -> None:
        self._plan = plan
        self._target = target
        self._options = target_options
        self._trace_store = trace_store
        self._fail_fast = fail_fast

    async def run(self, item_plan: ItemPlan) -> ItemOutcome:
        """Run one item; raises only when ``fail_fast`` is set and something failed."""
        item = item_plan.item
        if item_plan.mode == "single":
            shown_input: Any = item.input
        elif item_plan.mode == "inputs":
            shown_input = list(item.inputs or [])
        else:
            shown_input = [t.input for t in item_plan.turns]
        outcome = ItemOutcome(item_plan, ItemResult(index=item_plan.index, input=shown_input))
        try:
            if isinstance(self._target, WorkflowTarget):
                await self._run_workflow(outcome, self._target)
            else:
                await self._run_agent(outcome, self._target)
        except Exception as exc:
            if self._fail_fast:
                raise
            # Anything not caught where it happened still stays on this item.
            phase: ErrorPhase = "target" if outcome.target_result is None else "scoring"
            self._record(outcome, exc, phase, f"run_evals failed: {_describe(exc)}")
        return outcome

    # -- failures -----------------------------------------------------------------------------

    def _record(self, outcome: ItemOutcome, exc: BaseException, phase: ErrorPhase,
                message: str) -> None:
        result = outcome.result
        result.error = message if result.error is None else f"{result.error}; {message}"
        if result.error_phase is None:
            result.error_phase = phase
        if self._fail_fast:
            exc.add_note(f"run_evals: data item {outcome.plan.index} failed ({message})")
            raise exc

    # -- targets ------------------------------------------------------------------------------

    async def _run_workflow(self, outcome: ItemOutcome, target: WorkflowTarget) -> None:
        item = outcome.plan.item
        options = {**self._options, **(item.start_options or {})}
        if item.request_context is not None:
            options["request_context"] = item.request_context
        try:
            run = await target.run(item.input, options=options)
        except Exception as exc:
            self._record(outcome, exc, "target", f"target failed: {_describe(exc)}")
            return
        outcome.target_result = run
        output = run.result if run.status == "success" else None
        outcome.result.output = output
        outcome.result.trace_id = run.trace_id

        async def compute() -> Trajectory:
            if self._trace_store is not None and run.trace_id:
                traced = await trajectory_from_trace(self._trace_store, run.trace_id)
                if traced is not None:
                    return traced
            return trajectory_from_workflow(run)

        scope = _Scope(item.input, output, item.ground_truth, None, _Lazy(compute),
                       run.trace_id, run.span_id)
        await self._assert_all(outcome, self._plan.gates, scope, outcome.result.gate_results)
        plain = [a for a in self._plan.scorers if a.group[:1] != ("steps",)]
        await self._assert_all(outcome, plain, scope, outcome.result.scorer_results)
        for assertion in self._plan.scorers:
            if assertion.group[:1] != ("steps",):
                continue
            step_id = assertion.group[1]
            step = run.step_results.get(step_id)
            if _get(step, "status") != "success" or _get(step, "output") is None:
                continue
            payload = _get(step, "payload")
            step_scope = _Scope(item.input if payload is None else payload, _get(step, "output"),
                                item.ground_truth, None, scope.trajectory, run.trace_id, None)
            await self._assert_all(outcome, [assertion], step_scope,
                                   outcome.result.scorer_results, step_id=step_id)

    async def _run_agent(self, outcome: ItemOutcome, target: AgentTarget) -> None:
        plan, item = outcome.plan, outcome.plan.item
        options = self._options
        thread_id = options.get("thread_id")
        resource_id = options.get("resource_id")
        request_context = (
            item.request_context if item.request_context is not None
            else options.get("request_context")
        )
        turns = plan.turns if plan.mode != "single" else (TurnPlan(item.input, (), (), None),)
        if plan.mode != "single":
            thread_id = thread_id or str(uuid.uuid4())
            resource_id = resource_id or thread_id
        responses: list[AgentResponse] = []
        history: list[Message] = []
        if plan.mode == "turns":
            outcome.result.turn_results = []
        for index, turn in enumerate(turns):
            try:
                response = await target.generate(
                    turn.input, thread_id=thread_id, resource_id=resource_id,
                    request_context=request_context, options=options,
                )
            except Exception as exc:
                where = f" on turn {index}" if plan.mode != "single" else ""
                self._record(outcome, exc, "target", f"target failed{where}: {_describe(exc)}")
                break
            responses.append(response)
            turn_input = _agent_input(turn.input)
            if plan.mode == "turns":
                await self._run_turn(outcome, index, turn, turn_input, history, response)
            history.extend(turn_input.input_messages)
            history.extend(response.messages)
        if len(responses) < len(turns):
            outcome.target_result = _combined(responses) if responses else None
            outcome.result.output = [m for r in responses for m in r.messages] or None
            return
        combined = _combined(responses)
        outcome.target_result = combined if plan.mode != "single" else responses[0]
        outcome.result.output = list(combined.messages)
        outcome.result.trace_id = combined.trace_id
        scope = _Scope(_agent_input(turns[0].input), list(combined.messages), item.ground_truth,
                       None, _Lazy(lambda: self._agent_trajectory(responses)),
                       combined.trace_id, combined.span_id)
        await self._assert_all(outcome, self._plan.gates, scope, outcome.result.gate_results)
        await self._assert_all(outcome, self._plan.scorers, scope, outcome.result.scorer_results)

    async def _run_turn(self, outcome: ItemOutcome, index: int, turn: TurnPlan,
                        turn_input: AgentInput, history: list[Message],
                        response: AgentResponse) -> None:
        shown = ItemTurnResult(index=index, input=turn.input, output=list(response.messages))
        assert outcome.result.turn_results is not None
        outcome.result.turn_results.append(shown)
        if not (turn.gates or turn.scorers):
            return
        scope_input = turn_input.model_copy(update={"remembered_messages": list(history)})
        scope = _Scope(scope_input, list(response.messages), turn.ground_truth, index,
                       _Lazy(lambda: self._agent_trajectory([response])),
                       response.trace_id, response.span_id)
        await self._assert_all(outcome, turn.gates, scope, shown.gate_results)
        await self._assert_all(outcome, turn.scorers, scope, shown.scorer_results)

    async def _agent_trajectory(self, responses: list[AgentResponse]) -> Trajectory:
        parts = []
        for response in responses:
            traced = None
            if self._trace_store is not None and response.trace_id:
                traced = await trajectory_from_trace(self._trace_store, response.trace_id)
            parts.append(traced if traced is not None
                         else trajectory_from_messages(list(response.messages)))
        return concat_trajectories(parts)

    # -- scorers ------------------------------------------------------------------------------

    async def _assert_all(self, outcome: ItemOutcome, assertions: Any, scope: _Scope,
                          into: dict[str, Any], *, step_id: str | None = None) -> None:
        item = outcome.plan.item
        for assertion in assertions:
            output = scope.output
            started = time.perf_counter()
            result: ScorerRunResult | None = None
            error: BaseException | None = None
            try:
                if assertion.wants_trajectory:
                    output = await scope.trajectory.get()
                value = assertion.scorer.run(
                    input=scope.input, output=output, ground_truth=scope.ground_truth,
                    expected_trajectory=item.expected_trajectory,
                    request_context=item.request_context,
                )
                result = await value if inspect.isawaitable(value) else value
            except Exception as exc:
                error = exc
                partial = getattr(exc, "result", None)
                result = partial if isinstance(partial, ScorerRunResult) else None
            run = ScorerOutcome(
                assertion, outcome.plan.index, scope.turn_index, step_id, result, error,
                (time.perf_counter() - started) * 1000.0, scope.input, output,
                scope.trace_id, scope.span_id,
            )
            outcome.runs.append(run)
            if result is not None and error is None:
                _put(into, assertion, result)
            if error is not None:
                self._record(outcome, error, "scoring", _scorer_failure(assertion, run, error))


@dataclass(slots=True)
class _Scope:
    """What a group of assertions sees."""

    input: Any
    output: Any
    ground_truth: Any
    turn_index: int | None
    trajectory: _Lazy
    trace_id: str | None
    span_id: str | None


def _get(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _agent_input(value: Any) -> AgentInput:
    """The scorer input of an agent turn; an input no message can be made of becomes its text."""
    try:
        return to_agent_input(value)
    except Exception:
        return AgentInput(input_messages=[Message(role="user", content=str(value))])


def _combined(responses: list[AgentResponse]) -> AgentResponse:
    if len(responses) == 1:
        return responses[0]
    return AgentResponse(
        messages=[m for r in responses for m in r.messages],
        trace_id=responses[-1].trace_id,
        span_id=responses[-1].span_id,
    )


def _scorer_failure(assertion: Assertion, run: ScorerOutcome, error: BaseException) -> str:
    kind = "gate" if assertion.is_gate else "scorer"
    where = []
    if run.turn_index is not None:
        where.append(f"turn {run.turn_index}")
    if run.step_id is not None:
        where.append(f"step {run.step_id!r}")
    step = getattr(error, "failed_step", None)
    if step:
        where.append(f"step {step}")
    cause = getattr(error, "cause", None) or error.__cause__ or error
    suffix = f" ({', '.join(where)})" if where else ""
    return f"{kind} {assertion.id!r} failed{suffix}: {_describe(cause)}"
