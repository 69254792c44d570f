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
import functools
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._budget import BudgetGuard
from ._config import LiveSettings
from ._control import RunControl
from ._coordination import LiveCoordination, LocalCoordination, Prepared, pair_id
from ._errors import ConfigError
from ._expand import Expansion, classify, expand
from ._inline import prepare_rows, runs_inline, score_inline
from ._judging import JudgeCalls, check_judge_prices, judge_price
from ._loading import TraceLoader
from ._monitors import Monitors
from ._outcome import WorkItem
from ._placement import Placement, Placer
from ._pricing import Pricing
from ._registry import RegisteredScorer, Registry
from ._repeated import RepeatedFailure
from ._retry import RetryPolicy
from ._rows import PairKey, SpendTotals, utc_now
from ._segments import SpendPacer, count_offered, refresh_pacing, sample_rates
from ._selection import (
    DecidedHere,
    OpenTrace,
    OpenTraces,
    VersionWindow,
    filter_check_query,
    filter_query,
    internal_query,
    scan_query,
    shared_filter_query,
)
from ._sessions import SessionSelector, is_session_scorer, load_scored_session
from ._stats import LiveStats
from ._transform import TraceCache
from ._trust import JudgeTrust
from ._worker import score_pair

if TYPE_CHECKING:
    from tracescore.store import StoreLike

logger = logging.getLogger(__name__)

TRACE_CACHE_SIZE = 128
DECIDED_CHUNK = 5000
"""Trace ids per question to a shared queue about what is decided."""
SCAN_MARGIN = timedelta(seconds=10)
"""Each scan re-reads this much before the previous one, for spans committed late."""
EXPAND_CHUNK = (64, 256)
"""Traces expanded and scored per worker-thread call, at least and at most; each chunk's rows
are one transaction. A tick's traces go in two chunks within these bounds: the first chunk's
insert overlaps the second's Python, and each insert's fixed cost (a few milliseconds: the
Arrow views, the statements, the commit) is shared by up to 256 traces' rows."""


class SharedView:
    """The scheduler as its monitors see it in a cluster: the same, but ``store.write`` writes
    the shared tables (their events go to PostgreSQL's ``monitor_events``)."""

    def __init__(self, live: LiveScheduler, store: Any) -> None:
        self._live = live
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._live, name)


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
        trust: JudgeTrust | None = None,
        coordination: LiveCoordination | None = None,
        reader: StoreLike | None = None,
        placement: Placement | None = None,
        judge_cache_factory: Callable[..., Any] | None = None,
        shared_writes: Any = None,
        _clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        """The node's own store: the spans it received (and, on one node, every table)."""
        self.reader: StoreLike = reader or store
        """What every node stored (a cluster's ``ClusterStore``: the lake ∪ this node's rows,
        PostgreSQL's tables); the same store on one node. ``read`` reads it."""
        self.coordination: LiveCoordination = coordination or LocalCoordination(store)
        """How pairs are taken and ended: this store alone, or a cluster's PostgreSQL."""
        self.loader = TraceLoader(store, self.reader)
        self._placer = Placer(placement) if placement is not None else None
        self._held: dict[PairKey, WorkItem] = {}
        """Pairs in flight held by a claim (a cluster's), renewed by ``_renew_leases``."""
        self._renewer: asyncio.Task[None] | None = None
        self.monitors = monitors if monitors is not None else Monitors()
        self.trust = trust
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
        self._decided_here = DecidedHere()
        """On a shared queue: the traces this node's expansions decided (a scan does not ask
        the queue about them, ``_undecided``)."""
        self._full_scan_at: datetime | None = None
        """When the last full rescan ran (it read the whole lookback window; ``_undecided``)."""
        self._sessions = SessionSelector()
        self._horizons: dict[tuple[str, str], datetime] = {}
        self._scan_mark: datetime | None = None
        self._kept_at = float("-inf")
        """When a tick last updated the gauges and ran the monitors and judge trust."""
        self._scanned: tuple[int | None, tuple[VersionWindow, ...]] | None = None
        """What the last scan saw: the spans committed before it began, and the versions."""
        self._inflight: set[PairKey] = set()
        # Pairs finished while a due-pairs read was under way: that read may still show them
        # open (it began before their commit), so they must not be dispatched from it again.
        self._finished_seq = 0
        self._finished: dict[PairKey, int] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._traces = TraceCache(max(TRACE_CACHE_SIZE, 2 * s.batch_size))
        self._writeback = getattr(self.coordination, "writeback", None)
        """The local coordination's write-back (group commit), None in a cluster."""
        self._inline: dict[tuple[str, str], bool] = {}
        self._sem: asyncio.Semaphore | None = None
        self._tick_lock: asyncio.Lock | None = None
        self._job_scheduler: Any = None
        self._prepared = False
        self._stopped = False
        self._tick_failures = RepeatedFailure(logger, "live scoring tick", traceback=True)
        self._tick_task: asyncio.Task[None] | None = None
        self._more = False
        self._judge_warmup: asyncio.Future[Any] | None = None
        self.pricing = pricing or Pricing()
        self.judge_price = judge_price(self.pricing) if self.pricing.overrides else None
        """``[pricing]`` for judges (None without overrides: litellm's map alone)."""
        self.judge_calls = JudgeCalls()
        self._judge_cache: Any = None
        self._judge_cache_factory = judge_cache_factory
        self._shared_writes = shared_writes
        """Store-style writes into the shared tables (a cluster's PostgreSQL), for monitors."""
        self.pacer = SpendPacer()
        self._judge_check: tuple[Callable[[], Mapping[str, str]] | None,
                                 Callable[[ConfigError], None] | None] = (None, None)
        self.judge_state = "none"
        """``none`` (no judge scorer), ``loading`` (litellm and the judge checks, in the
        background), ``ready``, or ``failed: <why>``."""

    # helpers the worker uses -----------------------------------------------------------------

    def now(self) -> datetime:
        """Now, naive UTC (the tables' time zone)."""
        return self._clock()

    async def read(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """A read of the scoring tables on a worker thread (every node's, in a cluster)."""
        return await asyncio.to_thread(self.reader.read, sql, list(params or []))

    async def read_local(self, sql: str, params: Sequence[Any] | None = None
                         ) -> list[dict[str, Any]]:
        """A read of this node's own rows (its spans) on a worker thread."""
        return await asyncio.to_thread(self.store.read, sql, list(params or []))

    async def load_session(self, key: PairKey) -> Any:
        """The conversation of a session decision as it was when decided (every node's
        traces of it, in a cluster)."""
        return await asyncio.to_thread(load_scored_session, self.reader, key)

    async def write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                    decisions: list[dict[str, Any]]) -> None:
        """Write rows that hold no claim in one transaction (on one node through the store's
        writer, shared with other pairs' rows written at the same time); returns after the
        commit."""
        await self.coordination.write(scores, executions, decisions)

    async def complete(self, item: WorkItem, scores: list[dict[str, Any]],
                       executions: list[dict[str, Any]], decisions: list[dict[str, Any]]
                       ) -> bool:
        """End a held pair with its rows (``LiveCoordination.complete``); False when another
        node took it over meanwhile (its executions are kept, nothing else)."""
        return await self.coordination.complete(item, scores=scores, executions=executions,
                                                decisions=decisions)

    def submit_write(self, scores: list[dict[str, Any]], executions: list[dict[str, Any]],
                     decisions: list[dict[str, Any]]) -> asyncio.Future[None]:
        """Record judge executions now (on one node queued on the write-back, in order with
        every later ``write``), without waiting; the future resolves after their commit."""
        return self.coordination.submit_executions(scores, executions, decisions)

    def withdraw_write(self, future: asyncio.Future[None]) -> bool:
        """Take back rows queued by ``submit_write`` that are not being written yet."""
        return self.coordination.withdraw(future)

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
        return await self.coordination.prior_spend(key, besides=besides)

    async def first_failure(self, key: PairKey, *, besides: Sequence[str] = (),
                            default: datetime) -> datetime:
        """When the pair's first failed judge call was stored (``default`` when none was): the
        start of its transient-retry window after a restart."""
        first = await self.coordination.first_failure(key, besides=besides)
        return first if first is not None and first < default else default

    @property
    def judge_cache(self) -> Any:
        """The judge-call cache in this store's ``judge_cache`` table (``StoreJudgeCache``), or
        None with ``[live] judge_cache_max_bytes = 0``."""
        if self._judge_cache is None and self.settings.judge_cache_max_bytes > 0:
            from tracescore.store import StoreJudgeCache

            options: dict[str, Any] = {"max_bytes": self.settings.judge_cache_max_bytes,
                       "max_age_s": self.settings.judge_cache_max_age_seconds}
            self._judge_cache = (self._judge_cache_factory(**options)
                                 if self._judge_cache_factory is not None
                                 else StoreJudgeCache(self.store, **options))
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

        starts = await self.coordination.version_starts()
        await asyncio.to_thread(self._prepare_sync, starts)

    def _prepare_sync(self, starts: dict[tuple[str, str], datetime]) -> None:
        for reg in self.registry.enabled():
            self._check_filter(reg)
        if self._judge_check[0] is None:  # else with the judge checks, once litellm loaded
            check_judge_prices(self.registry, self.settings, self.pricing)
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
        if self.coordination.shared:
            self._renewer = asyncio.get_running_loop().create_task(self._renew_leases())
        names = ", ".join(f"{r.id}@{r.version[:8]}" for r in self.registry.enabled()) or "none"
        logger.info("live scoring started (every %ss; scorers: %s)",
                    self.settings.interval_seconds, names)

    async def stop(self, *, timeout_s: float = 10.0) -> None:
        """Stop the job and let runs in flight finish (cancelled after ``timeout_s``; a cancelled
        pair stays pending and is scored after the next start)."""
        self._stopped = True
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
            self._renewer = None
        if self._job_scheduler is not None:
            self._job_scheduler.shutdown(wait=False)
            self._job_scheduler = None
        if self._tick_task is not None:
            await asyncio.gather(self._tick_task, return_exceptions=True)  # let its reads end
        await self.drain(timeout_s=timeout_s)
        if self.trust is not None:
            await self.trust.drain()
        if self._held:  # runs cancelled in flight: others may take their pairs now
            await self.coordination.release(list(self._held.values()))
            self._held.clear()
        await self.monitors.drain()
        if self._judge_cache is not None:
            await self._judge_cache.flush()
        await self.coordination.close()
        for part in (self._judge_cache, self._shared_writes):  # a cluster's connections
            close = getattr(part, "close", None)
            if close is not None:
                await asyncio.to_thread(close)

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
        """Import litellm (≈3.5 s, far more on a loaded machine) in a worker thread, then run
        the judge checks given to ``check_judges_later``; judge runs wait for both, nothing
        else does (OTLP is acknowledged meanwhile)."""
        if self._judge_warmup is None:
            self.judge_state = "loading"
            self._judge_warmup = asyncio.ensure_future(self._judge_ready())

    async def _judge_ready(self) -> None:
        from tracescore.scoring import load_litellm

        began = time.monotonic()
        await asyncio.to_thread(load_litellm)
        check, on_error = self._judge_check
        paused: Mapping[str, str] = {}
        if check is not None:
            try:
                paused = await asyncio.to_thread(check)
            except ConfigError as exc:
                self.judge_state = f"failed: {exc}"
                paused = {reg.id: str(exc) for reg in self.registry.enabled() if reg.uses_judge}
                if on_error is not None:
                    on_error(exc)
        for scorer_id, reason in paused.items():
            self.control.paused.setdefault(scorer_id, reason)
        if self.judge_state == "loading":
            self.judge_state = "ready"
        logger.info("judge machinery ready in %.1f s (litellm loaded%s)",
                    time.monotonic() - began, ", judges checked" if check else "")

    def check_judges_later(self, check: Callable[[], Mapping[str, str]], *,
                           on_error: Callable[[ConfigError], None] | None = None) -> None:
        """Run ``check()`` (``check_judges``: scorer id → why it starts paused) once litellm has
        loaded in the background, instead of before the server starts: the scorers it names
        are paused, and a ``ConfigError`` pauses every judge scorer and goes to ``on_error``
        (``serve`` stops then). Call before ``start``."""
        self._judge_check = (check, on_error)

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

    def _kick(self, *, again: bool = False) -> None:
        if self._stopped or (self._tick_task is not None and not self._tick_task.done()):
            return
        self._more = False
        self._tick_task = asyncio.get_running_loop().create_task(self.tick(again=again))

    async def tick(self, *, again: bool = False) -> None:
        """One pass: budget, scan, dispatch due decisions, expand ready traces as far as there
        is room, dispatch again, then the gauges, monitors and judge trust. Never raises; waits
        for a tick already running to end first.

        ``again``: a tick run at once for a backlog, between interval ticks; it leaves the
        gauges, monitors and judge trust to the interval's ticks unless an interval has passed
        since they last ran (a backlog runs several ticks a second, and each read the open
        decisions' counts: 699 reads of PostgreSQL in a 20 s run of 3 busy nodes)."""
        self._ensure_loop_state()
        assert self._tick_lock is not None
        if self._stopped:
            return
        async with self._tick_lock:
            try:
                await self._tick(again)
                self.stats.last_tick_error = None
                self._tick_failures.succeeded()
            except Exception as exc:  # noqa: BLE001 - the loop must go on
                self.stats.tick_errors += 1
                self.stats.last_tick_error = f"{type(exc).__name__}: {exc}"
                self._tick_failures.failed(exc)  # the same error each tick: logged once
            finally:
                self.stats.ticks += 1
                self.stats.last_tick_at = self.now()
        if self._more and len(self._inflight) <= self._hold_limit() // 2:
            # A backlog the tick's own (inline) scoring left: tick again now, not at the next
            # interval (once this tick's task has ended).
            asyncio.get_running_loop().call_soon(functools.partial(self._kick, again=True))

    async def _tick(self, again: bool = False) -> None:
        if not self._prepared:
            await self.prepare()
        enabled = self.registry.enabled()
        if not enabled:
            return
        now = self.now()
        if self.budget.active:
            self.budget.begin_snapshot()
            self.budget.set_snapshot(await self.coordination.spend(now))
        await refresh_pacing(self, enabled, now)
        per_trace = [r for r in enabled if not is_session_scorer(r)]
        per_session = [r for r in enabled if is_session_scorer(r)]
        if per_trace:
            windows = [VersionWindow(r.id, r.version, self._horizon(r, now)) for r in per_trace]
            await self._scan(windows, now)
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
        decided = self.stats.decisions_total.total()
        if room > 0 and per_trace:
            left = await self._expand_ready(per_trace, now, limit=room)
        if room > 0 and per_session:
            left = await self._sessions.decide(self, per_session, now=now, limit=room) or left
        if room > 0 and self.stats.decisions_total.total() != decided:
            due_full = await self._dispatch(enabled, now)  # the pairs just decided
        self._more = due_full or left
        if again and time.monotonic() - self._kept_at < self.settings.interval_seconds:
            return
        self._kept_at = time.monotonic()
        await self._update_gauges(enabled, now)
        if self.monitors and await self.coordination.leads("monitors"):
            view = self if self._shared_writes is None else SharedView(self, self._shared_writes)
            await self.monitors.evaluate(view, now)
        if self.trust is not None:
            self.trust.tick(self, now)

    async def _scan(self, windows: list[VersionWindow], now: datetime) -> None:
        """Merge the traces that spans received since the last scan (less ``SCAN_MARGIN``)
        left undecided into the open set. Skipped when no span was committed since the last
        scan began and the versions are the same: it would find nothing new (an idle server's
        tick then reads no spans)."""
        spans = self._spans_committed()
        seen = (spans, tuple(windows))
        if spans is not None and self._scan_mark is not None and seen == self._scanned:
            return
        since = (self._scan_mark - SCAN_MARGIN if self._scan_mark is not None
                 else min(w.horizon for w in windows))
        # Decisions of the traces seen now were written after their first span arrived:
        # at most max_wait_seconds (+ margin) before these spans, unless a late span came.
        decided_since = since - self._open.max_wait - SCAN_MARGIN
        rows = await self.read_local(*scan_query(since, windows,
                                                 decided_since=decided_since))
        if self.coordination.shared:  # the node's file holds no decisions: ask the queue
            rows = await self._undecided(rows, windows, now)
        if self._scan_mark is None:
            self._open.clear()
        self._open.merge(rows)
        self._scan_mark = now
        self._scanned = seen
        self.stats.scans += 1

    def _spans_committed(self) -> int | None:
        """Spans the store's writer has committed so far (counted after each commit), None
        when the store does not say."""
        stats = getattr(self.store, "stats", None)
        return None if stats is None else int(stats().spans_received)

    async def _undecided(self, rows: list[dict[str, Any]], windows: list[VersionWindow],
                         now: datetime) -> list[dict[str, Any]]:
        """The scan rows some version in ``windows`` has not decided (``scan_query``'s test,
        made against a shared queue). Outside a full rescan the queue is asked only about
        traces this node cannot place itself: not those open here (merged again as they are),
        not those its own expansions decided (left out), not those first seen since the last
        full rescan (new here: merged; ``classify`` asks the queue before deciding any trace,
        so one another node decided meanwhile is left alone then)."""
        versions = frozenset((w.scorer_id, w.scorer_version) for w in windows)
        full = self._scan_mark is None
        if full:
            self._full_scan_at = now
        keep: list[dict[str, Any]] = []
        ask: list[dict[str, Any]] = []
        for row in rows:
            trace_id = row["trace_id"]
            if self._decided_here.holds(trace_id, versions):
                continue
            if not full and (self._open.get(trace_id) is not None
                             or row["first_received"] >= self._full_scan_at):
                keep.append(row)
            else:
                ask.append(row)
        decided: set[tuple[str, str, str]] = set()
        ids = [r["trace_id"] for r in ask]
        for start in range(0, len(ids), DECIDED_CHUNK):
            decided |= await self.coordination.decided(ids[start:start + DECIDED_CHUNK])
        return keep + [r for r in ask if any(
            r["first_received"] >= w.horizon
            and (r["trace_id"], w.scorer_id, w.scorer_version) not in decided for w in windows)]

    async def _renew_leases(self) -> None:
        """A cluster's lease keeper: every quarter lease, renew the pairs in flight that are
        past a quarter of theirs (its own task: a long tick never makes a lease run out)."""
        lease_s = float(getattr(self.coordination, "lease_s", 30.0))
        while not self._stopped:
            await asyncio.sleep(lease_s / 4)
            try:
                await self._renew(self.now(), lease_s)
            except Exception as exc:  # noqa: BLE001 - PostgreSQL away: try again shortly
                logger.warning("could not renew the leases of %d pairs in flight: %s",
                               len(self._held), exc)

    async def _renew(self, now: datetime, lease_s: float) -> None:
        """Renew the leases of pairs in flight that have less than 3/4 of a lease left."""
        due = [item for item in self._held.values()
               if item.claim is not None and (item.claim.lease_until - now).total_seconds()
               < lease_s * 3 / 4]
        if not due:
            return
        renewed = {item.key: item for item in await self.coordination.renew(due, now=now)}
        for item in due:
            if item.key in self._held:
                if item.key in renewed:
                    self._held[item.key] = renewed[item.key]
                else:
                    del self._held[item.key]  # lost: its run's end is fenced out

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
        """Expand up to ``limit`` ready traces; True when more are ready. In a cluster the
        placement says which may go now, and which from the lake (``_placement``)."""
        ready = self._open.ready(now)
        if ready and self._placer is not None:
            chosen, lake = await self._placer.split(ready, now, settle=self._open.settle,
                                                    max_wait=self._open.max_wait, limit=limit)
            if chosen:
                await self.expand(chosen, enabled, now=now, lake=lake)
                self._open.drop(t.trace_id for t in chosen)
                self._decided_here.note((t.trace_id for t in chosen),
                                        frozenset((r.id, r.version) for r in enabled))
            return len(chosen) >= limit
        if ready:
            await self.expand(ready[:limit], enabled, now=now)
            self._open.drop(t.trace_id for t in ready[:limit])
        return len(ready) > limit

    async def classify(self, traces: list[OpenTrace], scorers: list[RegisteredScorer], *,
                       now: datetime,
                       horizons: dict[tuple[str, str], datetime] | None = None) -> Expansion:
        """What can be decided about traces × scorers without loading them (reads only)."""
        ids = [t.trace_id for t in traces]
        decided = await self.coordination.decided(ids)
        unchecked = [t for t in traces if t.internal is None]
        if unchecked:
            since = min(t.first_received for t in unchecked) - SCAN_MARGIN  # as ``expand`` loads
            marked = {r["trace_id"] for r in await self.read_local(
                *internal_query([t.trace_id for t in unchecked], since))}
            for trace in unchecked:
                trace.internal = trace.trace_id in marked
        matches: dict[str, set[str]] = {}
        for reg in scorers:
            if reg.filter is not None:
                found = await (self.read(*shared_filter_query(reg.filter, ids))
                               if self.coordination.shared
                               else self.read_local(*filter_query(reg.filter, ids)))
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
                     source: str = "live", lake: Collection[str] = ()) -> Expansion:
        """Decide ready traces × scorers: write trace-level decisions and pending pairs, and
        score the pairs of inline scorers on the spot (``_inline``); every row has been
        committed when this returns.

        The traces are loaded in one read, then expanded and scored in chunks (``EXPAND_CHUNK``)
        in a worker thread, each chunk's rows written in one transaction while the next chunk
        is scored (the writer's insert overlaps the Python). The ids in ``lake`` are read from
        the lake (a cluster's traces that several nodes received)."""
        out = await self.classify(traces, scorers, now=now, horizons=horizons)
        if self.coordination.shared and source != "live":
            lake = set(out.to_load)  # a backfill's traces: any node's, read from the lake
        writes: list[asyncio.Future[Any]] = []
        if out.to_load:
            first = {t.trace_id: t.first_received for t in traces}
            since = min(first[trace_id] for trace_id in out.to_load) - SCAN_MARGIN
            ids = list(out.to_load)
            load = await asyncio.to_thread(
                functools.partial(self.loader.load_many_or_fail, lake=lake), ids, since)
            decisions, out.decisions = out.decisions, []
            least, most = EXPAND_CHUNK
            size = min(most, max(least, -(-len(ids) // 2)))
            for start in range(0, len(ids), size):
                chunk = ids[start:start + size]
                part = Expansion(decisions=decisions if start == 0 else [],
                                 to_load={t: out.to_load[t] for t in chunk})
                loaded, prepared = await asyncio.to_thread(self._expand_part, part, load, now,
                                                           source)
                writes.append(asyncio.ensure_future(
                    self.coordination.record_decisions(prepared)))
                for trace_id, trace in loaded.items():
                    # Kept for the workers' runs (the traces only scored inline are released;
                    # a worker loads a trace it does not find here).
                    self._traces.put(trace_id, trace)
                out.decisions += part.decisions
                out.pending += part.pending
                out.finished += part.finished
        elif out.decisions:
            prepared = await asyncio.to_thread(self.coordination.prepare, out.decisions, [])
            writes.append(asyncio.ensure_future(self.coordination.record_decisions(prepared)))
        results = await asyncio.gather(*writes, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        inserted = [r for r in results if isinstance(r, Collection)]
        if inserted:  # a shared queue: keep (and count) what this node decided first
            mine: set[Any] = set().union(*inserted)
            out.decisions = [r for r in out.decisions if pair_id(r) in mine]
            out.pending = [(k, r) for k, r in out.pending if k.pair in mine]
            out.finished = [p for p in out.finished if p.key.pair in mine]
        for row in out.decisions:
            self.stats.decisions_total[(row["scorer_id"], row["decision"])] += 1
        for pair in out.finished:
            self.stats.decisions_total[(pair.reg.id, pair.decision)] += 1
            if pair.status is not None:
                self.stats.scores_total[(pair.reg.id, pair.status)] += 1
        return out

    def _runs_inline(self, reg: RegisteredScorer) -> bool:
        key = (reg.id, reg.version)
        known = self._inline.get(key)
        if known is None:
            known = self._inline[key] = runs_inline(reg)
        return known

    def _load(self, trace_id: str) -> Any:
        """Worker thread: load a trace and build its step tree (``TraceLoader.load``)."""
        return self.loader.load(trace_id)

    def _expand_part(self, out: Expansion, load: Callable[[str], Any], now: datetime,
                     source: str) -> tuple[dict[str, Any], Prepared]:
        """Worker thread: expand the traces ``out`` waits on, score the inline pairs; returns
        the loaded traces and every row of ``out`` prepared to record (``prepare_rows``)."""
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
        prepared, out.finished = prepare_rows(self.coordination, out.decisions, pairs, now)
        out.pending += [(p.key, p.reg) for p in out.finished if p.decision == "pending"]
        return traces, prepared

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

    def _hold_limit(self) -> int:
        """How many pairs this node holds in flight at most: the batch, or on a shared queue
        no more than it runs soon (others may take the rest). A backlog ticks again at once
        only once half of it is free: measured against the batch, a cluster node (16 held of
        a 256 batch) ticked again the moment each tick ended, ~950 empty ticks a second."""
        if self.coordination.shared:
            return min(self.settings.batch_size, 2 * self.settings.concurrency)
        return self.settings.batch_size

    async def _dispatch(self, enabled: list[RegisteredScorer], now: datetime) -> bool:
        """Hand due pairs to workers; True when the batch was full (more may be due)."""
        over = self.budget.exceeded()
        if over is not None:
            await self.coordination.mark_over_budget(
                [(r.id, r.version) for r in enabled if r.uses_judge], reason=over, now=now)
        runnable = self._runnable(enabled, now)
        capacity = self._hold_limit() - len(self._inflight)
        if not runnable or capacity <= 0:
            return capacity <= 0
        by_version = {(r.id, r.version): r for r in runnable}
        # One node's due read shows its pairs in flight too (skipped below); a shared queue's
        # claim never returns a pair held by a lease.
        limit = capacity if self.coordination.shared else capacity + len(self._inflight)
        read_from = self._finished_seq
        items = await self.coordination.claim(list(by_version), now=now, limit=limit)
        stale = {k for k, seq in self._finished.items() if seq > read_from}
        self._finished = {k: seq for k, seq in self._finished.items() if seq > read_from}
        skipped = []
        for item in items:
            key = item.key
            if key in self._inflight or key in stale or capacity <= 0:
                skipped.append(item)
                continue
            self.submit(item, by_version[(key.scorer_id, key.scorer_version)], source="live")
            capacity -= 1
        if skipped and self.coordination.shared:
            await self.coordination.release(skipped)  # held for nothing: others may take them
        return len(items) >= limit

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
        shared = self.coordination.shared
        decision: str | None = None
        try:
            if shared:
                if item.claim is None:  # handed here directly (a backfill): hold it first
                    held = await self.coordination.claim_pairs([item], now=self.now())
                    if not held:
                        return None  # another node holds or decided it
                    item = held[0]
                self._held[item.key] = item
            if reg.uses_judge:
                self._warm_judge()
                assert self._judge_warmup is not None
                await asyncio.shield(self._judge_warmup)
            decision = await score_pair(self, item, reg, source=source)
            return decision
        except asyncio.CancelledError:
            raise  # (a held pair stays in ``_held``: ``stop`` releases it)
        except Exception:  # noqa: BLE001 - e.g. the store refused a write: retried next tick
            logger.exception("scoring trace %s span %s with %s failed; it stays open",
                             item.key.trace_id, item.key.span_id, reg.id)
            return None
        finally:
            task = asyncio.current_task()
            if shared and (task is None or not task.cancelling()):
                held_item = self._held.pop(item.key, None)
                if held_item is not None and decision is None:
                    # Paused, failed or taken over: give the claim back (a no-op when lost).
                    await self.coordination.release([held_item])
            self._inflight.discard(item.key)
            self._finished_seq += 1
            self._finished[item.key] = self._finished_seq
            if self._more and len(self._inflight) <= self._hold_limit() // 2:
                self._kick(again=True)  # a backlog: tick again now, not at the next interval

    async def _update_gauges(self, enabled: list[RegisteredScorer], now: datetime) -> None:
        traces, first = await self.coordination.open_stats([(r.id, r.version) for r in enabled])
        waiting = self._open.ready(now)
        oldest = [t.ready_at(settle=self._open.settle, max_wait=self._open.max_wait)
                  for t in waiting[:1]]
        if first is not None:
            oldest.append(first)
        self.stats.traces_waiting = len(waiting) + traces
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
            elif reg.uses_judge and self.judge_state == "loading":
                state, note = "starting", "waiting for litellm to load and the judge checks"
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

