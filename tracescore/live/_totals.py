"""The totals maintainer: fills ``model_calls`` and the ``traces`` totals as traces become ready.

Every ``interval_s`` it asks the store for stale traces that are ready (the live scheduler's
rule: root seen and no span for ``settle_s``, or ``max_wait_s`` after the first span), at most
``batch_size`` of them, newest first (new traffic never waits behind a backfill); loads their
spans in one read; builds each trace's step tree and its model calls
(``tracescore.traces.trace_spend``); prices them (``Pricing``); and writes calls and totals in
one writer transaction. A full batch is followed at once by the next, so a backlog (the
backfill after an upgrade: the migration leaves every old trace stale) drains in batches, with
progress logged, while the server serves.

Ingest comes first. Computing a trace's totals costs about twice what storing its spans did (the
step tree is built in Python, and shares the interpreter with the HTTP handlers), so a
maintainer that drained a backlog flat out under a flood of spans halved sustained ingest.
After a full batch during which more spans arrived than the batch computed (ingest outpaces
the maintainer: it could not catch up while that lasts anyway), it pauses so that its batches
take at most ``busy_share`` of the wall time (``yield_pause``). Otherwise (a backfill on a quiet
server, or a backlog under traffic it can outpace) it goes on at once. Under a flood the totals
fall behind (``tracescore_agent_traces_pending`` on ``/metrics``) and catch up once it ends;
spans are not refused on their account.

A span that arrives after its trace was computed makes it stale again; it is recomputed once it
settles, its calls replaced.

Only a pass that has not yet caught up reads the whole ``traces`` table. Once one pass found
every ready trace (fewer than ``batch_size``, all written), each later query is bounded to
traces whose last span arrived after that pass began, less ``max_wait_s`` (or ``settle_s``)
and ``CATCH_UP_MARGIN``: a trace not ready then can only become ready within that window, and
a trace made stale since got a new span, so a newer ``last_received_at``. The cost of a tick
then follows recent traffic, not the size of the table.

The counters in ``AgentSpendStats`` (``/metrics``) count the calls of traces first received
after the maintainer started (not the backfill), and a recompute counts only what changed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._pricing import Pricing
from ._repeated import RepeatedFailure
from ._rows import utc_now

if TYPE_CHECKING:
    from tracescore.store import StoreLike

log = logging.getLogger(__name__)

BUSY_SHARE = 0.25
"""The default largest share of wall time the maintainer's batches take while spans arrive
faster than it computes them (``[live] totals_busy_share``)."""

CATCH_UP_MARGIN = timedelta(seconds=60)
"""Extra look-back of the bounded ready query, beyond ``max(settle_s, max_wait_s)``."""

DURATION_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Upper bounds of ``tracescore_model_call_duration_seconds`` (seconds; +Inf implied)."""

AGENT_TOKEN_KINDS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cached", "cached_input_tokens"),
    ("reasoning", "reasoning_tokens"),
)
"""``kind`` label of ``tracescore_agent_tokens_total`` → ``model_calls`` column."""


@dataclass(slots=True)
class AgentSpendStats:
    """Counters of the agent's own spend since the process started (read by ``/metrics``)."""

    tokens_total: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """(project, model, kind) → tokens."""
    cost_usd_total: dict[tuple[str, str], float] = field(default_factory=dict)
    """(project, model) → USD."""
    unpriced_calls_total: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(project, model) → model calls with no known price."""
    duration_buckets: dict[str, list[int]] = field(default_factory=dict)
    """model → cumulative counts per ``DURATION_BUCKETS_S`` bound, +Inf last."""
    duration_sum_s: dict[str, float] = field(default_factory=dict)
    traces_computed: int = 0
    traces_pending: int = 0
    """Traces whose totals wait, counted at most every 10 s while a backlog lasts (a full batch
    after a full batch: a backfill, or a flood the maintainer yields to); 0 once a pass
    found every ready trace."""

    def add_call(self, call: dict[str, Any], sign: int = 1) -> None:
        """Count one ``model_calls`` row (``sign=-1`` takes back a replaced one)."""
        project = str(call.get("project") or "default")
        model = str(call.get("model") or "unknown")
        for kind, column in AGENT_TOKEN_KINDS:
            value = call.get(column)
            if value:
                self.tokens_total[(project, model, kind)] += sign * int(value)
        cost = call.get("cost_usd")
        if cost is not None:
            key = (project, model)
            self.cost_usd_total[key] = self.cost_usd_total.get(key, 0.0) + sign * float(cost)
        elif call.get("input_tokens") is not None or call.get("output_tokens") is not None:
            self.unpriced_calls_total[(project, model)] += sign
        if sign > 0 and call.get("duration_ms") is not None:
            seconds = float(call["duration_ms"]) / 1000.0
            buckets = self.duration_buckets.setdefault(model, [0] * (len(DURATION_BUCKETS_S) + 1))
            for index, bound in enumerate(DURATION_BUCKETS_S):
                if seconds <= bound:
                    buckets[index] += 1
            buckets[-1] += 1
            self.duration_sum_s[model] = self.duration_sum_s.get(model, 0.0) + seconds


def price_calls(spend: Any, pricing: Pricing) -> list[dict[str, Any]]:
    """``model_calls`` rows of a ``TraceSpend``: a reported cost wins, else the price × tokens,
    else NULL (unknown model, or no token counts)."""
    rows: list[dict[str, Any]] = []
    for call in spend.calls:
        cost: float | None = call.reported_cost_usd
        source: str | None = "reported" if cost is not None else None
        if cost is None and (call.input_tokens is not None or call.output_tokens is not None):
            found = pricing.price(call.model, call.provider)
            if found is not None:
                price, source = found
                cost = price.cost(
                    input_tokens=call.input_tokens,
                    output_tokens=call.output_tokens,
                    cached_input_tokens=call.cached_input_tokens,
                    cache_creation_input_tokens=call.cache_creation_input_tokens,
                    reasoning_tokens=call.reasoning_tokens,
                )
        rows.append({
            "trace_id": call.trace_id,
            "span_id": call.span_id,
            "project": call.project,
            "service_name": call.service_name,
            "agent_name": call.agent_name,
            "model": call.model,
            "provider": call.provider,
            "started_at": call.started_at_ns or None,
            "duration_ms": call.duration_ms,
            "time_to_first_token_ms": call.time_to_first_token_ms,
            "input_tokens": call.input_tokens,
            "output_tokens": call.output_tokens,
            "total_tokens": call.total_tokens,
            "cached_input_tokens": call.cached_input_tokens,
            "cache_creation_input_tokens": call.cache_creation_input_tokens,
            "reasoning_tokens": call.reasoning_tokens,
            "cost_usd": cost,
            "cost_source": source,
            "finish_reason": call.finish_reason,
            "status": call.status,
            "error": call.error,
        })
    return rows


def trace_totals(spend: Any, calls: Sequence[dict[str, Any]], chosen_at: datetime) -> dict[
    str, Any
]:
    """The ``traces`` totals of one trace from its priced calls."""

    def total(column: str) -> int | None:
        values = [c[column] for c in calls if c.get(column) is not None]
        return sum(values) if values else None

    costs = [c["cost_usd"] for c in calls if c.get("cost_usd") is not None]
    models = list(dict.fromkeys(str(c["model"]) for c in calls if c.get("model")))
    return {
        "trace_id": spend.trace_id,
        "model_call_count": len(calls),
        "tool_call_count": spend.tool_call_count,
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "total_tokens": total("total_tokens"),
        "cost_usd": sum(costs) if costs else None,
        "unpriced_call_count": sum(1 for c in calls if c.get("cost_usd") is None),
        "models": models,
        "agent_name": spend.agent_name,
        "session_id": spend.session_id,
        "user_id": spend.user_id,
        "totals_received_at": chosen_at,
    }


def session_turn_row(trace: Any, session_id: str, now: datetime) -> dict[str, Any]:
    """The ``session_turns`` row of a session's trace: the turn's input messages and the
    agent's answer as an agent scorer sees them (``trace_to_agent_run``; the step tree the
    totals were computed from is reused), or an error text in ``output``."""
    from tracescore.traces import trace_to_agent_run

    try:
        run = trace_to_agent_run(trace)
        messages = getattr(run.input, "input_messages", None) or []
        turn_in: Any = [m.model_dump(mode="json") for m in messages]
        turn_out: Any = [m.model_dump(mode="json") for m in run.output or []]
    except Exception as exc:  # noqa: BLE001 - shown on the page instead of the turn
        turn_in, turn_out = None, {"error": f"{type(exc).__name__}: {exc}"}
    return {"trace_id": trace.trace_id, "session_id": session_id, "input": turn_in,
            "output": turn_out, "computed_at": now}


def yield_pause(busy_s: float, share: float) -> float:
    """Seconds to pause after a batch that took ``busy_s`` so batches take ``share`` of the
    wall time (``share`` 1: no pause)."""
    if share >= 1.0 or busy_s <= 0.0:
        return 0.0
    return busy_s * (1.0 - share) / share


class TotalsMaintainer:
    """Keeps ``model_calls`` and the ``traces`` totals; ``await start()`` / ``await stop()``.

    ``run_once()`` does one batch (tests and the CLI call it directly) and returns how many
    traces it computed.
    """

    def __init__(
        self,
        store: StoreLike,
        *,
        pricing: Pricing | None = None,
        interval_s: float = 2.0,
        settle_s: float = 10.0,
        max_wait_s: float = 300.0,
        batch_size: int = 200,
        busy_share: float = BUSY_SHARE,
        _clock: Callable[[], datetime] | None = None,
        _sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if not 0.0 < busy_share <= 1.0:
            raise ValueError(f"busy_share must be in (0, 1], got {busy_share!r}")
        self.store = store
        self.pricing = pricing or Pricing()
        self.interval_s = interval_s
        self.settle = timedelta(seconds=settle_s)
        self.max_wait = timedelta(seconds=max_wait_s)
        self.batch_size = batch_size
        self.busy_share = busy_share
        self.stats = AgentSpendStats()
        self._clock = _clock or utc_now
        self._sleep = _sleep or asyncio.sleep
        self._started_at = self._clock()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._backlog_logged = 0.0
        self._caught_up_at: datetime | None = None
        """When the last pass began that found every ready trace (None: none yet)."""
        self._batch_spans = 0
        """Spans of the traces the last pass computed."""
        self._failures = RepeatedFailure(log, "computing trace totals")
        """The same error every 2 s (a damaged block) is logged once, retried less often."""

    async def start(self) -> None:
        """Start the background loop."""
        self._started_at = self._clock()
        self._stopping = False
        self._task = asyncio.create_task(self._loop(), name="tracescore-totals")

    async def stop(self) -> None:
        """Stop after the batch in hand."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _loop(self) -> None:
        while not self._stopping:
            received = self._spans_received()
            began = time.monotonic()
            try:
                done = await self.run_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bad batch must not stop the loop
                self._failures.failed(exc, retry_in_s=self._failures.backoff_s(
                    self.interval_s))
                await self._sleep(self._failures.backoff_s(self.interval_s))
                continue
            self._failures.succeeded()
            if done < self.batch_size:
                await self._sleep(self.interval_s)
            else:
                pause = self.pause_after(time.monotonic() - began, received, self._batch_spans)
                if pause:
                    await self._sleep(pause)

    def pause_after(self, busy_s: float, received_before: int, computed_spans: int) -> float:
        """Seconds to wait after a full batch that took ``busy_s`` and computed the traces of
        ``computed_spans`` spans: ``yield_pause`` if more spans arrived meanwhile (since the
        writer had received ``received_before``), else none."""
        if self._spans_received() - received_before <= computed_spans:
            return 0.0
        return yield_pause(busy_s, self.busy_share)

    def _spans_received(self) -> int:
        return self.store.stats().spans_received

    async def run_once(self) -> int:
        """Compute one batch of ready, stale traces; return how many were written."""
        from tracescore.store import ready_query

        now = self._clock()
        began = min(now, utc_now())  # the writer stamps arrivals with the real clock
        horizon = max(self.settle, self.max_wait) + CATCH_UP_MARGIN
        sql, params = ready_query(
            settled_before=now - self.settle, waited_before=now - self.max_wait,
            limit=self.batch_size,
            received_since=None if self._caught_up_at is None else self._caught_up_at - horizon,
        )
        self._batch_spans = 0
        chosen = await asyncio.to_thread(self.store.read, sql, params)
        written = await self._compute(chosen) if chosen else 0
        if len(chosen) < self.batch_size:
            self._caught_up_at = began
            self.stats.traces_pending = 0
        else:
            await self._log_progress()
        return written

    async def _compute(self, chosen: list[dict[str, Any]]) -> int:
        from tracescore.store import write_recompute

        since = min(row["first_received_at"] for row in chosen)
        ids = [row["trace_id"] for row in chosen]
        spans = await asyncio.to_thread(self.store.fetch_recent_spans, ids, since=since)
        self._batch_spans = sum(len(rows) for rows in spans.values())
        replace = [row["trace_id"] for row in chosen if row["seen"]]
        old_calls = await self._old_calls(replace)
        traces, calls, turns = await asyncio.to_thread(self._build, chosen, spans)
        written: int = await self.store.write(
            write_recompute(traces, calls, replace=replace, since=since, turns=turns)
        )
        self._count(chosen, calls, old_calls)
        self.stats.traces_computed += written
        return written

    def _build(self, chosen: list[dict[str, Any]], spans: dict[str, list[dict[str, Any]]]) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]
    ]:
        from tracescore.traces import Trace, trace_spend

        traces: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        turns: list[dict[str, Any]] = []
        now = utc_now()
        for row in chosen:
            trace_id = row["trace_id"]
            try:
                trace = Trace.from_rows(spans.get(trace_id, ()), trace_id=trace_id)
                spend = trace_spend(trace)
                rows = price_calls(spend, self.pricing)
            except Exception as exc:  # one unreadable trace must not block the others
                log.warning("trace %s: model calls not computed: %s", trace_id, exc)
                traces.append({"trace_id": trace_id, "totals_received_at": row["last_received_at"]})
                continue
            calls.extend(rows)
            traces.append(trace_totals(spend, rows, row["last_received_at"]))
            if spend.session_id is not None:  # the session page reads its turns from here
                turns.append(session_turn_row(trace, spend.session_id, now))
        return traces, calls, turns

    async def _old_calls(self, trace_ids: list[str]) -> list[dict[str, Any]]:
        if not trace_ids:
            return []
        return await asyncio.to_thread(
            self.store.read,
            "SELECT project, model, input_tokens, output_tokens, cached_input_tokens, "
            "reasoning_tokens, cost_usd, cost_source, trace_id FROM model_calls "
            "WHERE list_contains(?::VARCHAR[], trace_id)",
            [trace_ids],
        )

    def _count(self, chosen: list[dict[str, Any]], calls: list[dict[str, Any]],
               old_calls: list[dict[str, Any]]) -> None:
        fresh = {row["trace_id"] for row in chosen if row["first_received_at"] >= self._started_at}
        for call in old_calls:
            if call["trace_id"] in fresh:
                self.stats.add_call(call, sign=-1)
        for call in calls:
            if call["trace_id"] in fresh:
                self.stats.add_call(call)

    async def _log_progress(self) -> None:
        now = time.monotonic()
        if now - self._backlog_logged < 10.0:
            return
        self._backlog_logged = now
        from tracescore.store import stale_count_sql

        rows = await asyncio.to_thread(self.store.read, stale_count_sql())
        pending = int(rows[0]["n"]) if rows else 0
        self.stats.traces_pending = pending
        log.info("trace totals: %d traces computed so far, %d still to compute (a backlog: "
                 "after an upgrade, or spans arriving faster than they are computed)",
                 self.stats.traces_computed, pending)


__all__ = [
    "BUSY_SHARE",
    "CATCH_UP_MARGIN",
    "DURATION_BUCKETS_S",
    "AGENT_TOKEN_KINDS",
    "AgentSpendStats",
    "TotalsMaintainer",
    "price_calls",
    "trace_totals",
    "yield_pause",
]
