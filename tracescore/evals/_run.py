"""``run_evals``: run a target over a data set, score every item, and decide a verdict."""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Literal

from tracescore.scoring import judge_options

from ._aggregate import aggregate
from ._errors import EvalValidationError
from ._execute import ItemOutcome, ItemRunner
from ._experiments import ExperimentRecorder, resolve_data
from ._judge_cache import EvalJudgeCache
from ._plan import build_plan
from ._progress import Progress
from ._results import EvalResult
from ._store import ScoreSink, rows_for_item
from ._targets import AgentTarget, WorkflowTarget, classify_target, target_name

logger = logging.getLogger(__name__)


async def run_evals(
    target: Any,
    data: Any,
    scorers: Any = None,
    gates: Any = None,
    target_options: Mapping[str, Any] | None = None,
    concurrency: int = 1,
    on_item_complete: Callable[..., Any] | None = None,
    fail_fast: bool = False,
    store: Any = None,
    *,
    progress: bool | None = None,
    store_api_key: str | None = None,
    experiment: str | None = None,
    experiment_metadata: Mapping[str, Any] | None = None,
    judge_cache: Any = None,
    judge_cache_mode: Literal["auto", "on"] = "auto",
    agreement_floor: float | None = 0.6,
) -> EvalResult:
    """Run ``target`` on every item of ``data``, score it, and return averages and a verdict.

    Args:
        target: an agent (``generate(input, *, thread_id, resource_id, request_context,
            **options)``, sync or async), a plain function of the input, or a workflow
            (``run(input, **options)``).
        data: items (dicts or ``EvalItem``) with exactly one of ``input``, ``inputs`` or
            ``turns``, plus ``ground_truth``, ``expected_trajectory``, ``request_context`` and
            (workflows) ``start_options``; or a ``Dataset``, or ``"name"``/``"name@version"``
            of a dataset in ``store``.
        scorers: a list of scorers and ``{"scorer", "threshold"}`` entries, an
            ``AgentScorerConfig`` or a ``WorkflowScorerConfig``.
        gates: scorers that must average 1.0 across items; they run before the scorers.
        target_options: passed on every call (agents: ``generate`` keywords; workflows: ``run``
            keywords, each item's ``start_options`` merged on top).
        concurrency: how many items run at a time.
        on_item_complete: ``fn(item, target_result, scorer_results)``, sync or async, after
            each item.
        fail_fast: raise the first target or scorer error instead of recording it on the item.
        store: a database path or a running server's ``http(s)://`` URL (or an open ``Store``):
            every scorer run is written to ``scores`` with ``source = 'eval'``.
        progress: draw a progress bar on stderr (default: when stderr is a terminal).
        store_api_key: the server's API key, sent as ``Authorization: Bearer`` with
            ``store="http(s)://..."``.
        experiment: record the run as an experiment with this name (a label: each run gets a
            new ``experiment_id``) in ``experiments``/``experiment_results``; needs ``store``.
        experiment_metadata: a dict stored in ``experiments.metadata`` next to the git commit
            and model, saying what changed.
        judge_cache: the judge-call cache: None (with ``store=`` a database, the cache in it;
            else none), False (none), a database path (a cache of its own) or a
            ``tracescore.scoring.JudgeCache``. A cached answer costs nothing and is recorded as a
            judge execution with ``cached=True``.
        judge_cache_mode: ``"auto"`` caches judges with ``temperature = 0`` in their
            ``model_settings``; ``"on"`` every judge.
        agreement_floor: with ``store``, warn (a log line and ``result.agreement_warnings``)
            about each gating scorer whose κ with people's labels is below this or unknown;
            None turns the check off.

    Raises:
        EvalValidationError: the data, scorers, gates or thresholds cannot be run (nothing ran).
    """
    kind = classify_target(target)
    if experiment is not None and store is None:
        raise EvalValidationError(
            "experiment= records the run in a store; pass store= (a database path or a "
            "server URL) too"
        )
    source = await resolve_data(data, store, api_key=store_api_key)
    plan = build_plan(kind, source.items, scorers, gates)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise EvalValidationError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    if target_options is not None and not isinstance(target_options, Mapping):
        raise EvalValidationError(
            f"target_options must be a dict of keyword arguments, got "
            f"{type(target_options).__name__}"
        )
    if on_item_complete is not None and not callable(on_item_complete):
        raise EvalValidationError("on_item_complete must be a function (sync or async)")
    if judge_cache_mode not in ("auto", "on"):
        raise EvalValidationError(
            f"judge_cache_mode must be 'auto' or 'on', got {judge_cache_mode!r}")
    options = dict(target_options or {})
    threaded = concurrency > 1
    adapter = (AgentTarget(target, threaded=threaded) if kind == "agent"
               else WorkflowTarget(target, threaded=threaded))
    eval_run_id = str(uuid.uuid4())
    name = target_name(target)
    sink = ScoreSink(store, api_key=store_api_key) if store is not None else None
    recorder = None
    if sink is not None:
        await sink.open()
    try:
        cache = EvalJudgeCache.open(judge_cache, sink)
    except BaseException:
        if sink is not None:
            await sink.aclose()
        raise
    if sink is not None and experiment is not None:
        try:
            recorder = ExperimentRecorder.build(
                sink, experiment, plan, source, target_name=name, target=target,
                target_options=options, eval_run_id=eval_run_id,
                user_metadata=experiment_metadata)
            await recorder.begin()
        except BaseException:
            await cache.aclose()
            await sink.aclose()
            raise
    warnings: list[str] = []
    if sink is not None and agreement_floor is not None:
        warnings = await _agreement_warnings(sink, plan, agreement_floor)
    runner = ItemRunner(plan, adapter, target_options=options,
                        trace_store=sink.trace_store if sink is not None else None,
                        fail_fast=fail_fast)
    outcomes: list[ItemOutcome | None] = [None] * len(plan.items)
    store_errors: list[str] = []
    bar = Progress(len(plan.items), enabled=progress)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(plan.items)):
        queue.put_nowait(index)

    async def finish(outcome: ItemOutcome) -> None:
        if on_item_complete is not None:
            try:
                value = on_item_complete(outcome.plan.original, outcome.target_result,
                                         outcome.result.scorer_results)
                if inspect.isawaitable(value):
                    await value
            except Exception as exc:
                message = f"on_item_complete failed: {type(exc).__name__}: {exc}"
                result = outcome.result
                result.error = message if result.error is None else f"{result.error}; {message}"
                result.error_phase = result.error_phase or "completion"
                if fail_fast:
                    exc.add_note(f"run_evals: data item {outcome.plan.index} ({message})")
                    raise
        if sink is not None and outcome.runs:
            try:
                rows, executions = rows_for_item(
                    outcome, eval_run_id=eval_run_id, target=name,
                    experiment_id=recorder.experiment_id if recorder is not None else None)
                await sink.write(rows, executions)
            except Exception as exc:
                logger.warning("writing eval scores of item %d failed: %s", outcome.plan.index,
                               exc)
                store_errors.append(f"item {outcome.plan.index}: {type(exc).__name__}: {exc}")

    async def worker() -> None:
        while True:
            try:
                index = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            outcome = await runner.run(plan.items[index])
            outcomes[index] = outcome
            await finish(outcome)
            if recorder is not None:
                recorder.add(outcome)
            bar.advance(errored=outcome.result.error is not None)

    with judge_options(cache=cache.cache, cache_mode=judge_cache_mode):  # the workers' context
        workers = [asyncio.create_task(worker())
                   for _ in range(min(concurrency, len(plan.items)))]
    failed = True
    try:
        done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for task in workers:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        failed = False
    finally:
        for task in workers:
            task.cancel()
        bar.close()
        finished = [o for o in outcomes if o is not None]
        numbers = None if failed else aggregate(plan, finished)
        if recorder is not None:
            try:
                await recorder.finish(
                    status="failed" if numbers is None else "completed",
                    item_count=len(finished),
                    error_count=sum(1 for o in finished if o.result.error is not None),
                    verdict=numbers.verdict if numbers is not None else None)
            except Exception as exc:
                logger.warning("writing experiment %s failed: %s", experiment, exc)
                store_errors.append(f"experiment: {type(exc).__name__}: {exc}")
        try:
            await cache.aclose()
        finally:
            if sink is not None:
                await sink.aclose()

    assert numbers is not None
    return EvalResult(
        scores=numbers.scores,
        summary=numbers.summary,
        verdict=numbers.verdict,
        gate_results=numbers.gate_results,
        threshold_results=numbers.threshold_results,
        turn_results=numbers.turn_results,
        items=[o.result for o in finished],
        eval_run_id=eval_run_id,
        store_errors=store_errors,
        experiment_id=recorder.experiment_id if recorder is not None else None,
        agreement_warnings=warnings,
    )


async def _agreement_warnings(sink: ScoreSink, plan: Any, floor: float) -> list[str]:
    """Sentences about gating judge scorers (gates, and scorers with a threshold, that call a
    judge) whose agreement with people is unknown or below ``floor`` (logged as warnings); an
    unreadable store gives none."""
    from tracescore.labels import BEST_BY_SCORER_SQL, gating_warnings

    turns = [t for item in plan.items for t in item.turns]
    assertions = [*plan.gates, *plan.scorers, *(a for t in turns for a in (*t.gates, *t.scorers))]
    gating = sorted({a.id for a in assertions if (a.is_gate or a.threshold)
                     and getattr(a.scorer, "judges", ())})
    if not gating:
        return []
    try:
        rows = await sink.read(BEST_BY_SCORER_SQL, [gating])
    except Exception as exc:  # noqa: BLE001 - a store without the table: no check
        logger.info("could not read judge agreement: %s", exc)
        return []
    found = gating_warnings(rows, gating, floor)
    for line in found:
        logger.warning("%s", line)
    return found


def run_evals_sync(*args: Any, **kwargs: Any) -> EvalResult:
    """``run_evals`` for scripts: runs its own event loop (not usable inside a running loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        held: list[EvalResult] = []

        async def main() -> None:
            # The result goes back through ``held``, not as the coroutine's return value:
            # asyncio.run builds the repr of what its coroutine returns on the way out, which
            # for a large EvalResult cost as much as the whole run (issue 17, goal 5).
            held.append(await run_evals(*args, **kwargs))

        asyncio.run(main())
        return held[0]
    raise RuntimeError(
        "run_evals_sync() cannot run inside a running event loop; use `await run_evals(...)`"
    )
