"""Code scorers scored where their traces are expanded: in one worker thread, in one transaction.

A pair of a code scorer (no judge, only plain-function steps: ``runs_inline``) costs a few
hundred microseconds of Python. Sent through the judge path (an asyncio task per pair, a thread
hop for its ``ScorerRun``, a ``pending`` row at expansion and the final row after the run) the
hand-offs cost more than the scoring and the event loop waits on threads most of the time. So
the tick's expansion, already in a worker thread with the tick's traces loaded, scores these
pairs on the spot: it builds each ``ScorerRun`` once per (trace, target span, scorer type) and
shares it between the scorers of that type, drives ``Scorer.run``'s coroutine to its end (with
no step that awaits, it never suspends; no event loop is needed) and builds the ``scores`` and
``scoring_decisions`` rows, still in that thread. The tick then records them with its other
decisions in one transaction, prepared off the event loop (``prepare_rows``: on one node the
Arrow tables of ``score_rows_writer``).

Exactly once: an inline pair never has a ``pending`` row. Its final decision and its score row
are committed together with the trace's other decisions; a crash before that commit leaves the
trace undecided for the scorer version, so the next scan finds it and it is expanded (and
scored) again, and after the commit it is decided. The tick waits for the commit before its
next scan.

Failures keep the meaning they have on the judge path. A scorer error classified
``permanent`` is recorded as that path records a first attempt (``retrying`` with one attempt
spent and the backoff, or ``failed`` at ``max_attempts = 1``); the pair's later attempts run
through ``score_pair``. A run that does suspend, or fails as rate limited, transient or an
authentication error (odd for code), is handed to that path as a ``pending`` decision, and
so is a pair whose rows do not fit the tables.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._outcome import WorkItem, retry_outcome
from ._registry import RegisteredScorer
from ._rows import (
    PairKey,
    SpendTotals,
    decision_row,
    error_info,
    plain,
    score_row,
    short_error,
)
from ._transform import build_runs, trace_project

if TYPE_CHECKING:
    from ._context import LiveContext
    from ._coordination import LiveCoordination, Prepared

logger = logging.getLogger(__name__)


def runs_inline(reg: RegisteredScorer) -> bool:
    """True for a scorer that calls no judge and whose steps and ``prepare_run`` are plain
    (not ``async``) functions: its runs finish without waiting on anything."""
    scorer = reg.scorer
    if scorer is None or reg.uses_judge or getattr(scorer, "judge", None) is not None:
        return False
    steps = getattr(scorer, "_steps", None)
    if not isinstance(steps, Mapping):
        return False
    for spec in steps.values():
        fn = getattr(spec, "fn", None)
        if getattr(spec, "kind", None) != "function" or fn is None or fn.is_async:
            return False
    prepare = getattr(scorer, "_prepare", None)
    return prepare is None or not prepare.is_async


class _Suspended(Exception):
    """A run that waited on something: it belongs on the event loop."""


def _drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that is expected not to suspend; its result, or ``_Suspended``."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise _Suspended


@dataclass(slots=True)
class InlinePair:
    """One inline pair's rows, and what they record (for the scheduler's counters)."""

    key: PairKey
    reg: RegisteredScorer
    decision: str
    scores: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None


def handed_over(key: PairKey, reg: RegisteredScorer, now: datetime) -> InlinePair:
    """The pair as a ``pending`` decision, for the judge path to run (``score_pair``)."""
    row = decision_row(key, "pending", now=now, score_id=key.score_id)
    return InlinePair(key, reg, "pending", decisions=[row])


def score_inline(
    live: LiveContext,
    pairs: list[tuple[PairKey, RegisteredScorer]],
    traces: Mapping[str, Any],
    *,
    source: str,
    now: datetime,
) -> list[InlinePair]:
    """Score inline pairs of loaded traces (worker thread); one ``InlinePair`` each."""
    kinds: dict[tuple[str, str], list[str | None]] = {}
    for key, reg in pairs:
        kinds.setdefault((key.trace_id, key.span_id), []).append(getattr(reg.scorer, "type", None))
    runs: dict[tuple[str, str], dict[str | None, Any]] = {}
    dumped: dict[int, Any] = {}  # by id() of values the runs above keep alive

    def dump(value: Any) -> Any:
        found = dumped.get(id(value))
        if found is None and value is not None:
            found = dumped[id(value)] = plain(value)
        return found

    out = []
    for key, reg in pairs:
        assert reg.scorer is not None
        trace = traces[key.trace_id]
        target = (key.trace_id, key.span_id)
        try:
            if target not in runs:
                runs[target] = build_runs(trace, key.span_id, kinds[target])
            run = runs[target][reg.scorer.type]
        except Exception as exc:  # noqa: BLE001 - an untransformable trace is this pair's end
            logger.warning("scorer %s: trace %s span %s cannot be transformed: %s",
                           reg.id, key.trace_id, key.span_id, short_error(exc))
            out.append(InlinePair(key, reg, "failed", decisions=[decision_row(
                key, "failed", now=now, attempts=1,
                last_error=f"could not build the scorer input: {short_error(exc)}")]))
            continue
        out.append(_score(live, key, reg, run, trace_project(trace), source=source, now=now,
                          dump=dump))
    return out


def _score(live: LiveContext, key: PairKey, reg: RegisteredScorer, run: Any,
           project: str | None, *, source: str, now: datetime,
           dump: Callable[[Any], Any] = plain) -> InlinePair:
    assert reg.scorer is not None
    started = time.perf_counter()
    begun = now
    result = failure = None
    try:
        result = _drive(reg.scorer.run(
            run, run_id=key.score_id,
            request_context={**(run.request_context or {}), "trace_id": key.trace_id,
                             "span_id": key.span_id, "scorer_id": reg.id,
                             "scorer_version": reg.version, "source": source}))
    except _Suspended:
        return handed_over(key, reg, begun)
    except Exception as exc:  # noqa: BLE001 - failures are data (classified below)
        failure = exc
    duration_ms = (time.perf_counter() - started) * 1000.0
    now = live.now()  # when the run ended, as on the queued path
    error = last_error = None
    if failure is None:
        assert result is not None
        status = "not_scorable" if result.not_scorable is not None else "success"
        decision = "not_scorable" if status == "not_scorable" else "scored"
        if result.not_scorable is not None:
            last_error = f"not scorable at {result.not_scorable.step}: {result.not_scorable.reason}"
    else:
        from tracescore.scoring import classify_error

        kind = classify_error(failure)
        if kind != "permanent":
            return handed_over(key, reg, begun)
        verdict = live.policy.decide(kind, attempts=0)
        if not verdict.final:
            outcome = retry_outcome(live, WorkItem(key), reg, failure, verdict, [], now, now)
            return InlinePair(key, reg, "retrying", decisions=outcome.decisions)
        status = decision = "failed"
        last_error, error = short_error(failure), error_info(failure, kind=kind)
        logger.warning("scorer %s failed on trace %s span %s after %d attempt(s): %s",
                       reg.id, key.trace_id, key.span_id, verdict.attempts, last_error)
        result = getattr(failure, "result", None)
    score = score_row(
        key, project=project, scorer_name=reg.scorer.name, source=source, status=status,
        result=result, run_input=run.input, run_output=run.output, error=error,
        spend=SpendTotals(), duration_ms=duration_ms, now=now,
        metadata={"attempts": 1, "target": reg.target}, dump=dump)
    row = decision_row(key, decision, now=now, attempts=1, last_error=last_error,
                       score_id=key.score_id)
    return InlinePair(key, reg, decision, [score], [row], status)


def prepare_rows(coordination: LiveCoordination, decisions: list[dict[str, Any]],
                 pairs: list[InlinePair], now: datetime) -> tuple[Prepared, list[InlinePair]]:
    """A tick's new decisions and inline pairs' rows prepared to record (in the worker thread;
    ``LiveCoordination.prepare``), and the pairs as prepared: a pair whose rows do not fit the
    tables is handed over as pending."""

    def prepare(items: list[InlinePair]) -> Prepared:
        return coordination.prepare(decisions + [r for p in items for r in p.decisions],
                                    [r for p in items for r in p.scores])

    try:
        return prepare(pairs), pairs
    except Exception:  # noqa: BLE001 - find the pair at fault below
        kept = []
        for pair in pairs:
            try:
                coordination.prepare(pair.decisions, pair.scores)
            except Exception as exc:  # noqa: BLE001
                logger.warning("scorer %s on trace %s span %s: rows refused (%s); it runs "
                               "again as a pending pair", pair.reg.id, pair.key.trace_id,
                               pair.key.span_id, short_error(exc))
                pair = handed_over(pair.key, pair.reg, now)
            kept.append(pair)
        return prepare(kept), kept
