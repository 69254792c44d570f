"""Scoring one (trace span, scorer) pair and writing what came of it.

transform (from the trace's step tree, built in a worker thread) → ``Scorer.run`` (async; the
judge goes through litellm or the direct route; each judge execution is stored as it arrives,
see ``_spend``) → one store transaction with the ``scores`` row, the ``judge_executions`` rows
and the ``scoring_decisions`` row. A retried pair writes its judge executions and a
``retrying`` decision; its single ``scores`` row is written when it ends, with the judge totals
of every attempt (before a crash included). Rate limits and transient errors end the pair once
``transient_retry_deadline_seconds`` have passed since its first failed judge call.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ._judging import run_options
from ._outcome import Outcome, WorkItem, retry_outcome
from ._registry import RegisteredScorer
from ._review import hand_off
from ._rows import (
    SpendTotals,
    decision_row,
    error_info,
    score_row,
    short_error,
)
from ._sessions import is_session_key
from ._spend import SpendRecorder
from ._transform import build_run, trace_document_source, trace_project

if TYPE_CHECKING:
    from ._context import LiveContext

logger = logging.getLogger(__name__)

async def score_pair(live: LiveContext, item: WorkItem, reg: RegisteredScorer, *,
                     source: str) -> str | None:
    """Run one pair to its next decision (in a concurrency slot), then write it (after giving
    the slot back, so commits never hold up scoring); returns the decision written, or None
    when the scorer was paused meanwhile (the pair stays as it was) or, in a cluster, another
    node took the pair over (its lease ended: only this run's judge executions are kept)."""
    async with live.slot():
        if reg.id in live.paused:
            return None
        outcome = await _run_pair(live, item, reg, source=source)
    # Early writes still queued are replaced by this write, queued now (no await in between);
    # should it fail, they are written on their own so paid-for spend is not lost with it.
    early = (outcome.recorder.withdraw_queued(outcome.executions) if outcome.recorder
             else ([], []))
    executions = (outcome.recorder.unstored(outcome.executions) if outcome.recorder
                  else outcome.executions)
    try:
        kept = await live.complete(item, outcome.scores, executions, outcome.decisions)
    except Exception:
        if early[0]:
            await live.write([], *early)
        raise
    if not kept:
        logger.info("scorer %s on trace %s span %s: another node holds the pair now (this "
                    "node's lease ended); its result is dropped, its judge executions kept",
                    reg.id, item.key.trace_id, item.key.span_id)
        return None
    live.stats.decisions_total[(reg.id, outcome.decision)] += 1
    if outcome.status is not None:
        live.stats.scores_total[(reg.id, outcome.status)] += 1
    if outcome.result is not None and outcome.result.decided_by is not None:
        await hand_off(live, reg, item.key, outcome.result)  # a cascade's unsure item
    return outcome.decision


async def _run_pair(live: LiveContext, item: WorkItem, reg: RegisteredScorer, *,
                    source: str) -> Outcome:
    key = item.key
    assert reg.scorer is not None
    reason = live.budget.exceeded() if reg.uses_judge else None
    if reason is not None:
        return Outcome("over_budget", decisions=[decision_row(
            key, "over_budget", now=live.now(), attempts=item.attempts, last_error=reason,
            score_id=key.score_id, created_at=item.created_at)])
    document: Any = None
    try:
        if is_session_key(key):
            session = await live.load_session(key)
            run, project = session.scorer_run(reg.scorer.type), session.project
        else:
            trace = await live.trace(key.trace_id)
            # On the loop: the trace's step tree is built (by the expansion or ``live.trace``'s
            # load, in a worker thread), and the run built from it costs less (~0.1 ms for an
            # agent trace here) than the hop to a thread and back.
            run = build_run(trace, key.span_id, reg.scorer.type)
            project = trace_project(trace)
            document = trace_document_source(trace, key.span_id)
    except Exception as exc:  # noqa: BLE001 - an untransformable trace is this pair's end
        logger.warning("scorer %s: trace %s span %s cannot be transformed: %s",
                       reg.id, key.trace_id, key.span_id, short_error(exc))
        return Outcome("failed", decisions=[decision_row(
            key, "failed", now=live.now(), attempts=item.attempts + 1,
            last_error=f"could not build the scorer input: {short_error(exc)}",
            score_id=key.score_id, created_at=item.created_at)])

    from tracescore.scoring import judge_options, observe_judge_executions

    started = time.perf_counter()
    result = None
    failure: BaseException | None = None
    recorder = SpendRecorder(live, key, scorer_id=reg.id, attempts=item.attempts,
                             created_at=item.created_at)
    options = run_options(live, reg) if reg.uses_judge else {}
    try:
        with observe_judge_executions(recorder), judge_options(**options):
            result = await reg.scorer.run(
                run, run_id=key.score_id,
                request_context={**(run.request_context or {}), "trace_id": key.trace_id,
                                 "span_id": key.span_id, "scorer_id": reg.id,
                                 "scorer_version": reg.version, "source": source,
                                 **({"trace_document": document} if document is not None else {})})
    except Exception as exc:  # noqa: BLE001 - failures are data (classified below)
        failure = exc
    duration_ms = (time.perf_counter() - started) * 1000.0
    now = live.now()
    snapshot = result if failure is None else getattr(failure, "result", None)
    executions = recorder.rows(snapshot)
    spent = SpendTotals.of(executions)

    if failure is None:
        assert result is not None
        status = "not_scorable" if result.not_scorable is not None else "success"
        decision = "not_scorable" if status == "not_scorable" else "scored"
        attempts, last_error, error = item.attempts + 1, None, None
        if result.not_scorable is not None:
            last_error = f"not scorable at {result.not_scorable.step}: {result.not_scorable.reason}"
    else:
        from tracescore.scoring import classify_error, retry_after_s

        kind = classify_error(failure)
        since = live.control.streak_since(key) or now
        if kind in ("rate_limit", "transient") and live.control.streak_since(key) is None and (
                item.decision != "pending" or item.attempts or item.held_before):
            since = await live.first_failure(key, besides=[r["execution_id"] for r in executions],
                                             default=now)
        verdict = live.policy.decide(
            kind, attempts=item.attempts, transient_streak=live.control.streak(key),
            transient_elapsed_s=(now - since).total_seconds(),
            retry_after_s=retry_after_s(failure))
        if not verdict.final:
            outcome = retry_outcome(live, item, reg, failure, verdict, executions, now, since)
            outcome.recorder = recorder
            return outcome
        status, decision, attempts = "failed", "failed", verdict.attempts
        last_error, error = short_error(failure), error_info(failure, kind=kind)
        if kind in ("rate_limit", "transient"):
            last_error = (f"gave up after {(now - since).total_seconds():.0f} s of "
                          f"{kind.replace('_', ' ')} errors ([live] "
                          f"transient_retry_deadline_seconds = "
                          f"{live.settings.transient_retry_deadline_seconds:g}); last error: "
                          f"{last_error}")
        logger.warning("scorer %s failed on trace %s span %s after %d attempt(s): %s",
                       reg.id, key.trace_id, key.span_id, attempts, last_error)

    live.control.forget_streak(key)
    prior = (await live.prior_spend(key, besides=[row["execution_id"] for row in executions])
             if item.decision != "pending" or item.attempts or item.held_before else None)
    total = (prior or SpendTotals()) + spent
    score = score_row(
        key, project=project, scorer_name=reg.scorer.name, source=source,
        status=status, result=snapshot, run_input=run.input, run_output=run.output,
        error=error, spend=total, duration_ms=duration_ms, now=now,
        metadata={"attempts": attempts, "target": reg.target})
    row = decision_row(key, decision, now=now, attempts=attempts, last_error=last_error,
                       score_id=key.score_id, created_at=item.created_at)
    return Outcome(decision, [score], executions, [row], status, recorder, snapshot)


__all__ = ["WorkItem", "score_pair"]
