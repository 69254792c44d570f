"""``LiveScheduler``: the APScheduler interval job that finds ready traces and scores them.

Each tick (default every 2 s): refresh the budget from ``judge_executions``; read the spans that
arrived since the last tick into the set of open traces; hand due decisions (pending, retrying,
over budget) to workers; turn as many ready traces as there is room for into decisions
(filtered out, sampled out, or pending per target span), then as many quiet sessions for the
``target = "session"`` scorers (``_sessions.py``), and hand those out too; last, evaluate the
monitors when ``evaluate_every`` has passed (``_monitors.py``). Code scorers' pairs are scored
in the expansion itself, in a worker thread, chunk by chunk, each chunk's rows in one
transaction (``_inline.py``); the other pairs are queued. Workers run at most ``concurrency``
queued pairs at once and group-commit their rows. Under a backlog a finishing run, or the end
of a tick that left ready traces, starts the next tick at once. Reads run on store cursors in
worker threads and writes go through the store's writer, so the event loop never waits on
DuckDB; judge calls are async.

Exactly once: every (trace, target span, scorer id, version) has one ``scoring_decisions`` row;
pending rows are the durable queue, so a restart resumes them, and a pair in flight in this
process is never handed out twice. A code scorer's pair has no pending row: its final row
commits with the trace's other decisions, before the tick scans again (see ``_inline.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._budget import BudgetGuard, BudgetUsage, over_budget_update, usage_query
from ._config import LiveSettings
from ._control import RunControl
from ._errors import ConfigError
from ._expand import Expansion, classify, expand
from ._inline import inline_writer, runs_inline, score_inline
from ._judging import JudgeCalls, check_judge_prices, judge_price
from ._monitors import Monitors
from ._outcome import WorkItem
from ._pricing import Pricing
from ._registry import RegisteredScorer, Registry
from ._retry import RetryPolicy
from ._rows import PairKey, SpendTotals, utc_now
from ._segments import SpendPacer, count_offered, refresh_pacing, sample_rates
from ._selection import (
    VERSION_STARTS_SQL,
    OpenTrace,
    OpenTraces,
    VersionWindow,
    decided_query,
    due_query,
    filter_check_query,
    filter_query,
    internal_query,
    open_stats_query,
    scan_query,
)
from ._sessions import SessionSelector, is_session_scorer
from ._stats import LiveStats
from ._transform import TraceCache
from ._worker import first_failure_query, prior_spend_query, score_pair
from ._writeback import WriteBack

if TYPE_CHECKING:
    from tracescore.store import StoreLike

logger = logging.getLogger(__name__)

TRACE_CACHE_SIZE = 128
SCAN_MARGIN = timedelta(seconds=10)
"""Each scan re-reads this much before the previous one, for spans committed late."""
EXPAND_CHUNK = (64, 256)
"""Traces expanded and scored per worker-thread call, at least and at most; each chunk's rows
are one transaction. A tick's traces go in two chunks within these bounds: the first chunk's
insert overlaps the second's Python, and each insert's fixed cost (a few milliseconds: the
Arrow views, the statements, the commit) is shared by up to 256 traces' rows."""
LOG_LEAD = timedelta(minutes=10)
"""How long before a trace's first span its log records may have arrived and still be loaded
with the tick's traces (log exporters often flush before span exporters)."""


class LiveScheduler:
    """Scores new traces with the registered scorers; ``await start()`` / ``await stop()``."""

    def __init__(
        self,
        store: StoreLike,
        registry: Registry,
        settings: LiveSettings | None = None,
        *,
        monitors: Monitors | None = None,
        pricing: Pricing | None = None,
        _clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        self.monitors = monitors or Monitors()
        self.registry = registry
        self.settings = settings or LiveSettings()
        s = self.settings
        self.policy = RetryPolicy(max_attempts=s.max_attempts, retry_base_s=s.retry_base_seconds,
                                  transient_max_s=s.transient_retry_max_seconds,
                                  transient_deadline_s=s.transient_retry_deadline_seconds)
        self.budget = BudgetGuard(s.budget)
        self.stats = LiveStats()
        self.control = RunControl()
        self._clock = _clock or utc_now
        self._open = OpenTraces(settle_s=s.settle_seconds, max_wait_s=s.max_wait_seconds)
        self._sessions = SessionSelector()
        self._horizons: dict[tuple[str, str], datetime] = {}
        self._scan_mark: datetime | None = None
        self._inflight: set[PairKey] = set()
        # Pairs finished while a due-pairs read was under way: that read may still show them
        # open (it began before their commit), so they must not be dispatched from it again.
        self._finished_seq = 0
        self._finished: dict[PairKey, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._traces = TraceCache(max(TRACE_CACHE_SIZE, 2 * s.batch_size))
        self._writeback = WriteBack(store)
        self._inline: dict[tuple[str, str], bool] = {}
        self._sem: asyncio.Semaphore | None = None
        self._tick_lock: asyncio.Lock | None = None
        self._job_scheduler: Any = None
        self._prepared = False
        self._stopped = False
        self._tick_task: asyncio.Task[None] | None = None
        self._more = False
        self._judge_warmup: asyncio.Future[Any] | None = None
        self.pricing = pricing or Pricing()
        self.judge_price = judge_price(self.pricing) if self.pricing.overrides else None
        """``[pricing]`` for judges (None without overrides: litellm's map alone)."""
        self.judge_calls = JudgeCalls()
        self._judge_cache: Any = None
        self.pacer = SpendPacer()

    # helpers the worker uses -----------------------------------------------------------------

    def now(self) -> datetime:
        """Now, naive UTC (the tables' time zone)."""
        return self._clock()

    async def read(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """A store read on a worker thread."""
        return await asyncio.to_thread(self.store.read, sql, list(params or []))

    async def write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                    decisions: list[dict[str, Any]]) -> None:
        """Write rows in one transaction through the store's writer (shared with other pairs'
        rows written at the same time); returns after the commit."""
        await self._writeback.write(scores, executions, decisions)

    def submit_write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                     decisions: list[dict[str, Any]]) -> asyncio.Future[None]:
        """Queue rows on the write-back now, in order with every later ``write``, without
        waiting; the future resolves after their commit."""
        return self._writeback.submit(scores, executions, decisions)

    def withdraw_write(self, future: asyncio.Future[None]) -> bool:
        """Take back rows queued by ``submit_write`` that are not being written yet."""
        return self._writeback.withdraw(future)

    async def trace(self, trace_id: str) -> Any:
        """A loaded trace (cached: ready traces do not change)."""
        cached = self._traces.get(trace_id)
        if cached is None:
            cached = await asyncio.to_thread(self._load, trace_id)
            self._traces.put(trace_id, cached)
        return cached

    async def prior_spend(self, key: PairKey, *, besides: Sequence[str] = ()) -> SpendTotals:
        """Judge totals of earlier attempts of a pair (not counting the executions ``besides``,
        this run's own rows that may already be stored)."""
        return SpendTotals.of(await self.read(*prior_spend_query(key, besides=besides)))

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = (),
                            default: datetime) -> datetime:
        """When the pair's first failed judge call was stored (``default`` when none was): the
        start of its transient-retry window after a restart."""
        [row] = await self.read(*first_failure_query(key, besides=besides))
        first = row["first"]
        return first if isinstance(first, datetime) and first < default else default

    @property
    def judge_cache(self) -> Any:
        """The judge-call cache in this store's ``judge_cache`` table (``StoreJudgeCache``), or
        None with ``[live] judge_cache_max_bytes = 0``."""
        if self._judge_cache is None and self.settings.judge_cache_max_bytes > 0:
            from tracescore.store import StoreJudgeCache

            self._judge_cache = StoreJudgeCache(
                self.store, max_bytes=self.settings.judge_cache_max_bytes,
                max_age_s=self.settings.judge_cache_max_age_seconds)
        return self._judge_cache

    @property
    def paused(self) -> dict[str, str]:
        """Scorers paused by an authentication error, with the reason."""
        return self.control.paused

    def resume(self, scorer_id: str) -> bool:
        """Run a paused scorer again; False when it was not paused."""
        return self.control.resume(scorer_id)

    # life cycle ------------------------------------------------------------------------------

    def register(self, scorer: Any, **options: Any) -> RegisteredScorer:
        """Add a scorer from Python (``Registry.register`` options); it starts with the next
        tick."""
        item = self.registry.register(scorer, **options)
        if self._prepared:
            self._check_filter(item)
        self._horizons[(item.id, item.version)] = self.now() - timedelta(
            seconds=self.settings.lookback_seconds)
        self._scan_mark = None
        return item

    async def prepare(self) -> None:
        """Check filters against the ``traces`` view and work out each version's horizon."""
        await asyncio.to_thread(self._prepare_sync)

    def _prepare_sync(self) -> None:
        for reg in self.registry.enabled():
            self._check_filter(reg)
        check_judge_prices(self.registry, self.settings, self.pricing)
        starts = {(r["scorer_id"], r["scorer_version"]): r["first_decided"]
                  for r in self.store.read(VERSION_STARTS_SQL)}
        lookback = timedelta(seconds=self.settings.lookback_seconds)
        now = self.now()
        for reg in self.registry.enabled():
            first = starts.get((reg.id, reg.version))
            self._horizons[(reg.id, reg.version)] = (first or now) - lookback
        self._prepared = True

    def _check_filter(self, reg: RegisteredScorer) -> None:
        checks = [("filter", reg.filter)] if reg.filter is not None else []
        checks += [(f"sample #{n}.where", where) for n, (where, _) in enumerate(reg.sample, 1)]
        for key, predicate in checks:
            try:
                self.store.read(filter_check_query(predicate))
            except Exception as exc:
                raise ConfigError(
                    f"scorer {reg.id!r}: key {key!r}: {predicate!r} is not a valid SQL "
                    f"predicate over the traces table: {str(exc).splitlines()[0]}") from None

    async def start(self) -> None:
        """Prepare, then run ``tick`` every ``interval_seconds`` (first tick at once)."""
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        await self.prepare()
        self._ensure_loop_state()
        self._stopped = False
        for name in ("apscheduler.executors.default", "apscheduler.scheduler"):
            quiet = logging.getLogger(name)  # one INFO line per run, every few seconds
            if quiet.level == logging.NOTSET:
                quiet.setLevel(logging.WARNING)
        if any(reg.uses_judge for reg in self.registry.enabled()):
            self._warm_judge()
        scheduler = AsyncIOScheduler(timezone=UTC)
        scheduler.add_job(self._spawn_tick, "interval", seconds=self.settings.interval_seconds,
                          id="tracescore-live", max_instances=1, coalesce=True,
                          next_run_time=datetime.now(UTC), misfire_grace_time=None)
        scheduler.start()
        self._job_scheduler = scheduler
        names = ", ".join(f"{r.id}@{r.version[:8]}" for r in self.registry.enabled()) or "none"
        logger.info("live scoring started (every %ss; scorers: %s)",
                    self.settings.interval_seconds, names)

    async def stop(self, *, timeout_s: float = 10.0) -> None:
        """Stop the job and let runs in flight finish (cancelled after ``timeout_s``; a cancelled
        pair stays pending and is scored after the next start)."""
        self._stopped = True
        if self._job_scheduler is not None:
            self._job_scheduler.shutdown(wait=False)
            self._job_scheduler = None
        if self._tick_task is not None:
            await asyncio.gather(self._tick_task, return_exceptions=True)  # let its reads end
        await self.drain(timeout_s=timeout_s)
        await self.monitors.drain()
        if self._judge_cache is not None:
            await self._judge_cache.flush()

    async def drain(self, *, timeout_s: float | None = None) -> None:
        """Wait for the runs in flight and for ticks they started (cancel the runs still going
        after ``timeout_s``; a cancelled pair stays open)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while True:
            waiting: list[asyncio.Future[Any]] = list(self._tasks)
            if self._tick_task is not None and not self._tick_task.done():
                waiting.append(self._tick_task)
            if not waiting:
                return
            left = None if deadline is None else max(0.0, deadline - loop.time())
            _, pending = await asyncio.wait(waiting, timeout=left)
            if pending and deadline is not None and loop.time() >= deadline:
                runs = [task for task in pending if task is not self._tick_task]
                for task in runs:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                return

    def _warm_judge(self) -> None:
        """Import litellm (≈3.5 s) in a worker thread, so no judge call imports it on the
        event loop; judge runs wait for it."""
        if self._judge_warmup is None:
            from tracescore.scoring import load_litellm

            self._judge_warmup = asyncio.ensure_future(asyncio.to_thread(load_litellm))

    def slot(self) -> asyncio.Semaphore:
        """One of ``concurrency`` scorer-run slots (``async with live.slot(): ...``)."""
        self._ensure_loop_state()
        assert self._sem is not None
        return self._sem

    def _ensure_loop_state(self) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.settings.concurrency)
            self._tick_lock = asyncio.Lock()

    # the tick --------------------------------------------------------------------------------

    async def _spawn_tick(self) -> None:
        """The APScheduler job: start a tick as this scheduler's own task (so stopping the job
        scheduler never cancels a tick halfway through a database read)."""
        self._kick()

    def _kick(self) -> None:
        if self._stopped or (self._tick_task is not None and not self._tick_task.done()):
            return
        self._more = False
        self._tick_task = asyncio.get_running_loop().create_task(self.tick())

    async def tick(self) -> None:
        """One pass: budget, scan, dispatch due decisions, expand ready traces as far as there
        is room, dispatch again. Never raises; waits for a tick already running to end first."""
        self._ensure_loop_state()
        assert self._tick_lock is not None
        if self._stopped:
            return
        async with self._tick_lock:
            try:
                await self._tick()
                self.stats.last_tick_error = None
            except Exception as exc:  # noqa: BLE001 - the loop must go on
                self.stats.tick_errors += 1
                self.stats.last_tick_error = f"{type(exc).__name__}: {exc}"
                logger.exception("live scoring tick failed; trying again at the next tick")
            finally:
                self.stats.ticks += 1
                self.stats.last_tick_at = self.now()
        if self._more and len(self._inflight) <= self.settings.batch_size // 2:
            # A backlog the tick's own (inline) scoring left: tick again now, not at the next
            # interval (once this tick's task has ended).
            asyncio.get_running_loop().call_soon(self._kick)

    async def _tick(self) -> None:
        if not self._prepared:
            await self.prepare()
        enabled = self.registry.enabled()
        if not enabled:
            return
        now = self.now()
        if self.budget.active:
            self.budget.begin_snapshot()
            await self._writeback.flush()  # spend counted so far is in judge_executions
            [row] = await self.read(*usage_query(now))
            self.budget.set_snapshot(BudgetUsage(float(row["cost_hour"]), float(row["cost_day"]),
                                                 int(row["tokens_hour"])))
        await refresh_pacing(self, enabled, now)
        per_trace = [r for r in enabled if not is_session_scorer(r)]
        per_session = [r for r in enabled if is_session_scorer(r)]
        if per_trace:
            windows = [VersionWindow(r.id, r.version, self._horizon(r, now)) for r in per_trace]
            since = (self._scan_mark - SCAN_MARGIN if self._scan_mark is not None
                     else min(w.horizon for w in windows))
            # Decisions of the traces seen now were written after their first span arrived:
            # at most max_wait_seconds (+ margin) before these spans, unless a late span came.
            decided_since = since - self._open.max_wait - SCAN_MARGIN
            rows = await self.read(*scan_query(since, windows, decided_since=decided_since))
            if self._scan_mark is None:
                self._open.clear()
            self._open.merge(rows)
            self._scan_mark = now
        due_full = await self._dispatch(enabled, now)
        # Expand only what can run now, so loaded traces are still cached when their pairs run.
        free = self.settings.batch_size - len(self._inflight)
        # Traces to expand: each holds a slot per queued pair; inline pairs hold none (they are
        # done when the expansion is), so with inline scorers only, a tick takes ``free`` traces.
        queued = [r for r in enabled if is_session_scorer(r) or not self._runs_inline(r)]
        room = 0 if free <= 0 else max(1, free // len(queued)) if queued else free
        if queued and not self._inflight:
            # Nothing in flight: expand two rounds of slots and start them, rather than make the
            # first judge call wait for a whole batch's expansion; the tick this one kicks (half
            # the batch is free) expands the rest while those calls are out.
            room = min(room, 2 * self.settings.concurrency)
        left = room <= 0
        if room > 0 and per_trace:
            left = await self._expand_ready(per_trace, now, limit=room)
        if room > 0 and per_session:
            left = await self._sessions.decide(self, per_session, now=now, limit=room) or left
        if room > 0:
            due_full = await self._dispatch(enabled, now)
        self._more = due_full or left
        await self._update_gauges(enabled, now)
        if self.monitors:
            await self.monitors.evaluate(self, now)

    def horizon(self, reg: RegisteredScorer, now: datetime) -> datetime:
        """The earliest arrival a scorer version scores (its first decision less
        ``lookback_seconds``)."""
        return self._horizon(reg, now)

    def _horizon(self, reg: RegisteredScorer, now: datetime) -> datetime:
        key = (reg.id, reg.version)
        if key not in self._horizons:
            self._horizons[key] = now - timedelta(seconds=self.settings.lookback_seconds)
        return self._horizons[key]

    async def _expand_ready(self, enabled: list[RegisteredScorer], now: datetime, *,
                            limit: int) -> bool:
        """Expand up to ``limit`` ready traces; True when more are ready."""
        ready = self._open.ready(now)
        if ready:
            await self.expand(ready[:limit], enabled, now=now)
            self._open.drop(t.trace_id for t in ready[:limit])
        return len(ready) > limit

    async def classify(self, traces: list[OpenTrace], scorers: list[RegisteredScorer], *,
                       now: datetime,
                       horizons: dict[tuple[str, str], datetime] | None = None) -> Expansion:
        """What can be decided about traces × scorers without loading them (reads only)."""
        ids = [t.trace_id for t in traces]
        decided = {(r["trace_id"], r["scorer_id"], r["scorer_version"])
                   for r in await self.read(*decided_query(ids))}
        unchecked = [t for t in traces if t.internal is None]
        if unchecked:
            since = min(t.first_received for t in unchecked) - SCAN_MARGIN  # as ``expand`` loads
            marked = {r["trace_id"] for r in await self.read(
                *internal_query([t.trace_id for t in unchecked], since))}
            for trace in unchecked:
                trace.internal = trace.trace_id in marked
        matches: dict[str, set[str]] = {}
        for reg in scorers:
            if reg.filter is not None:
                found = await self.read(*filter_query(reg.filter, ids))
                matches[reg.id] = {r["trace_id"] for r in found}
        rates, bases = await sample_rates(self, ids, scorers, now)
        out = classify(traces, scorers, decided=decided, matches=matches,
                       horizons=self._horizons if horizons is None else horizons, now=now,
                       rates=rates)
        count_offered(self, out, bases, scorers, now)
        return out

    async def expand(self, traces: list[OpenTrace], scorers: list[RegisteredScorer], *,
                     now: datetime,
                     horizons: dict[tuple[str, str], datetime] | None = None,
                     source: str = "live") -> Expansion:
        """Decide ready traces × scorers: write trace-level decisions and pending pairs, and
        score the pairs of inline scorers on the spot (``_inline``); every row has been
        committed when this returns.

        The traces are loaded in one read, then expanded and scored in chunks (``EXPAND_CHUNK``)
        in a worker thread, each chunk's rows written in one transaction while the next chunk
        is scored (the writer's insert overlaps the Python)."""
        out = await self.classify(traces, scorers, now=now, horizons=horizons)
        writes: list[asyncio.Future[Any]] = []
        if out.to_load:
            first = {t.trace_id: t.first_received for t in traces}
            since = min(first[trace_id] for trace_id in out.to_load) - SCAN_MARGIN
            ids = list(out.to_load)
            load = await asyncio.to_thread(self._load_many_or_fail, ids, since)
            decisions, out.decisions = out.decisions, []
            least, most = EXPAND_CHUNK
            size = min(most, max(least, -(-len(ids) // 2)))
            for start in range(0, len(ids), size):
                chunk = ids[start:start + size]
                part = Expansion(decisions=decisions if start == 0 else [],
                                 to_load={t: out.to_load[t] for t in chunk})
                loaded, writer, build = await asyncio.to_thread(self._expand_part, part, load,
                                                                now, source)
                writes.append(asyncio.ensure_future(self._write_new(writer, build)))
                for trace_id, trace in loaded.items():
                    # Kept for the workers' runs (the traces only scored inline are released;
                    # a worker loads a trace it does not find here).
                    self._traces.put(trace_id, trace)
                out.decisions += part.decisions
                out.pending += part.pending
                out.finished += part.finished
        elif out.decisions:
            from tracescore.store import score_rows_writer

            def build(fresh: bool) -> Any:
                return score_rows_writer([], [], out.decisions, fresh=fresh)

            writer = await asyncio.to_thread(build, True)
            writes.append(asyncio.ensure_future(self._write_new(writer, build)))
        failures = [r for r in await asyncio.gather(*writes, return_exceptions=True)
                    if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        for row in out.decisions:
            self.stats.decisions_total[(row["scorer_id"], row["decision"])] += 1
        for pair in out.finished:
            self.stats.decisions_total[(pair.reg.id, pair.decision)] += 1
            if pair.status is not None:
                self.stats.scores_total[(pair.reg.id, pair.status)] += 1
        return out

    async def _write_new(self, writer: Any, build: Callable[[bool], Any]) -> None:
        """Write rows built as new (``fresh``); should one be stored already (a backfill that
        expanded the same trace meanwhile), write them again as replacements."""
        from tracescore.store import DuplicateRows

        try:
            await self.store.write(writer)
        except DuplicateRows:
            await self.store.write(await asyncio.to_thread(build, False))

    def _runs_inline(self, reg: RegisteredScorer) -> bool:
        key = (reg.id, reg.version)
        known = self._inline.get(key)
        if known is None:
            known = self._inline[key] = runs_inline(reg)
        return known

    def _load(self, trace_id: str) -> Any:
        """Worker thread: load a trace and build its step tree (the worker builds runs from it
        on the event loop)."""
        from tracescore.traces import load_trace

        trace = load_trace(self.store, trace_id)
        trace.steps  # noqa: B018 - built here, off the event loop
        return trace

    def _load_many(self, trace_ids: list[str], since: datetime) -> Callable[[str], Any]:
        """Load a tick's traces in one read of recent spans (and one of logs); returns a
        loader per trace id that raises like ``load_trace`` for a trace with no spans."""
        from tracescore.traces import Trace, TraceNotFound

        spans, logs = self.store.fetch_recent_traces(
            trace_ids, spans_since=since, logs_since=since - LOG_LEAD)

        def load(trace_id: str) -> Any:
            rows = spans.get(trace_id.lower())
            if not rows:
                raise TraceNotFound(f"no spans stored for trace {trace_id!r} since {since}")
            return Trace.from_rows(rows, logs=logs.get(trace_id.lower(), ()),
                                   trace_id=trace_id)

        return load

    def _load_many_or_fail(self, trace_ids: list[str], since: datetime) -> Callable[[str], Any]:
        """``_load_many``; when the read fails, a loader that raises its error for each trace
        (each then records the failure)."""
        try:
            return self._load_many(trace_ids, since)
        except Exception as exc:  # noqa: BLE001 - each trace then records the failure
            def load(trace_id: str, error: Exception = exc) -> Any:
                raise error
            return load

    def _expand_part(self, out: Expansion, load: Callable[[str], Any], now: datetime,
                     source: str) -> tuple[dict[str, Any], Any, Callable[[bool], Any]]:
        """Worker thread: expand the traces ``out`` waits on, score the inline pairs; returns
        the loaded traces, the store writer of every row of ``out`` and its builder
        (``inline_writer``)."""
        # Trace by trace, end to end: a trace's spans, steps and runs die (``release``) before
        # the next trace is loaded, so they never outlive a young garbage-collector generation;
        # only the rows wait for the chunk's transaction. Kept: traces with queued pairs.
        traces = {}
        pairs: list[Any] = []
        for trace_id in list(out.to_load):
            first_pending, first_inline = len(out.pending), len(out.inline)
            trace = expand(out, trace_id, load, now=now, inline=self._runs_inline)
            if trace is None:
                continue
            scored = score_inline(self, out.inline[first_inline:], {trace_id: trace},
                                  source=source, now=now)
            pairs += scored
            if len(out.pending) > first_pending or any(p.decision == "pending" for p in scored):
                traces[trace_id] = trace
            else:
                trace.release()  # done with: freed now, not by the cycle collector
        writer, build, out.finished = inline_writer(out.decisions, pairs, now)
        out.pending += [(p.key, p.reg) for p in out.finished if p.decision == "pending"]
        return traces, writer, build

    def _runnable(self, enabled: list[RegisteredScorer], now: datetime) -> list[RegisteredScorer]:
        over = self.budget.exceeded()
        out = []
        for reg in enabled:
            if self.control.held(reg.id, now):
                continue
            if over is not None and reg.uses_judge:
                continue
            out.append(reg)
        return out

    async def _dispatch(self, enabled: list[RegisteredScorer], now: datetime) -> bool:
        """Hand due pairs to workers; True when the batch was full (more may be due)."""
        over = self.budget.exceeded()
        if over is not None:
            await self._mark_over_budget([r for r in enabled if r.uses_judge], over, now)
        runnable = self._runnable(enabled, now)
        capacity = self.settings.batch_size - len(self._inflight)
        if not runnable or capacity <= 0:
            return capacity <= 0
        by_version = {(r.id, r.version): r for r in runnable}
        limit = capacity + len(self._inflight)
        read_from = self._finished_seq
        rows = await self.read(*due_query(list(by_version), now=now, limit=limit))
        stale = {k for k, seq in self._finished.items() if seq > read_from}
        self._finished = {k: seq for k, seq in self._finished.items() if seq > read_from}
        for row in rows:
            key = PairKey(row["trace_id"], row["span_id"], row["scorer_id"], row["scorer_version"],
                          session_id=row["session_id"])
            if row["score_id"] and row["score_id"] != key.score_id:
                key = dataclasses.replace(key, rescored_as=row["score_id"])
            if key in self._inflight or key in stale or capacity <= 0:
                continue
            item = WorkItem(key, row["decision"], int(row["attempts"] or 0), row["created_at"])
            self.submit(item, by_version[(key.scorer_id, key.scorer_version)], source="live")
            capacity -= 1
        return len(rows) >= limit

    async def _mark_over_budget(self, judged: list[RegisteredScorer], reason: str,
                                now: datetime) -> None:
        if judged:
            await self.store.write(over_budget_update([(r.id, r.version) for r in judged],
                                                      reason=reason, now=now))

    def submit(self, item: WorkItem, reg: RegisteredScorer, *, source: str) -> asyncio.Task[Any]:
        """Start scoring one pair (waits for a concurrency slot)."""
        self._ensure_loop_state()
        self._inflight.add(item.key)
        task = asyncio.get_running_loop().create_task(self._run(item, reg, source))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def is_inflight(self, key: PairKey) -> bool:
        """True while a pair is being scored in this process."""
        return key in self._inflight

    async def _run(self, item: WorkItem, reg: RegisteredScorer, source: str) -> str | None:
        assert self._sem is not None
        try:
            if reg.uses_judge:
                self._warm_judge()
                assert self._judge_warmup is not None
                await asyncio.shield(self._judge_warmup)
            return await score_pair(self, item, reg, source=source)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - e.g. the store refused a write: retried next tick
            logger.exception("scoring trace %s span %s with %s failed; it stays open",
                             item.key.trace_id, item.key.span_id, reg.id)
            return None
        finally:
            self._inflight.discard(item.key)
            self._finished_seq += 1
            self._finished[item.key] = self._finished_seq
            if self._more and len(self._inflight) <= self.settings.batch_size // 2:
                self._kick()  # a backlog: tick again now rather than at the next interval

    async def _update_gauges(self, enabled: list[RegisteredScorer], now: datetime) -> None:
        [row] = await self.read(*open_stats_query([(r.id, r.version) for r in enabled]))
        waiting = self._open.ready(now)
        oldest = [t.ready_at(settle=self._open.settle, max_wait=self._open.max_wait)
                  for t in waiting[:1]]
        if row["oldest"] is not None:
            oldest.append(row["oldest"])
        self.stats.traces_waiting = len(waiting) + int(row["traces"] or 0)
        self.stats.scoring_lag_seconds = (
            max(0.0, (now - min(oldest)).total_seconds()) if oldest else 0.0)

    # status ------------------------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """Each registered scorer with its version, state and why it does not run, if so."""
        now = self.now()
        out = []
        for reg in self.registry:
            state = "running"
            note = None
            if not reg.enabled:
                state, note = "disabled", reg.disabled_reason
            elif reg.id in self.paused:
                state, note = "paused", self.paused[reg.id]
            elif self.control.held(reg.id, now):
                state, note = "rate_limited", f"until {self.control.cooldown[reg.id]:%H:%M:%S}Z"
            elif reg.uses_judge and (reason := self.budget.exceeded()):
                state, note = "over_budget", reason
            calls, oldest = self.judge_calls.status(reg.id)
            out.append({"id": reg.id, "version": reg.version, "use": reg.use,
                        "target": reg.target, "sample_rate": reg.sample_rate,
                        "filter": reg.filter, "uses_judge": reg.uses_judge,
                        "state": state, "note": note, "judge_calls_in_flight": calls,
                        "oldest_judge_call_seconds": oldest,
                        "judge_timeout_seconds": (reg.judge_timeout_s
                                                  or self.settings.judge_timeout_seconds)
                        if reg.uses_judge else None})
        return out

