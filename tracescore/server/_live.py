"""The live scorer inside ``tracescore serve``: config at ``create_app``, the scheduler in the
lifespan, and the ``/api/live`` routes.

``mount_live(app)`` (in ``DEFAULT_MOUNTS``) reads ``[live]``, ``[live.budget]`` and
``[[scorers]]`` from the settings' config file, builds every scorer and checks every filter, so
a bad entry stops ``create_app`` with one sentence (``ConfigError``), and adds the routes.
``live_lifespan(app)`` (in ``DEFAULT_HOOKS``) starts the ``LiveScheduler`` on ``app.state.store``
once the store is open and stops it (letting runs in flight finish) before the store closes.
The judge checks (``tracescore.live.check_judges``: a judge scorer without credentials starts
paused, a model string with no provider is a ``ConfigError``) need litellm, whose import takes
seconds (tens of seconds on a loaded machine); they run in the background once the server
serves (``LiveScheduler.check_judges_later``), so a restart acknowledges OTLP at once. A
``ConfigError`` found then stops ``serve`` with its sentence (``app.state.stop_serving``).
The running scheduler is ``app.state.live`` (None when ``[live] enabled = false`` or the hook is
left out). ``TRACESCORE_JUDGE_MODEL`` and ``TRACESCORE_JUDGE_API_BASE`` are read here, once.

Routes: ``GET /api/live/scorers`` (each scorer with its state and counts), ``GET
/api/live/monitors`` (each monitor's state, last value and last event), ``POST
/api/live/scorers/{id}/resume`` (after an authentication pause), ``POST /api/live/backfill``,
``POST /api/live/rescore``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from pydantic import BaseModel, Field

from ._errors import ConfigError

log = logging.getLogger(__name__)

router = APIRouter(tags=["live"])


def _load(settings: Any) -> tuple[Any, Any, dict[str, str], Any]:
    """Live settings, registry, the judge scorers that must start paused (and why), and the
    ``[[monitors]]`` entries."""
    from tracescore.live import ConfigError as LiveConfigError
    from tracescore.live import load_live_config, parse_monitor_entries

    path = getattr(settings, "config_path", None)
    source = path or "the built-in defaults"
    try:
        live_settings, registry = load_live_config(
            getattr(settings, "config", None) or {},
            source=source,
            base_dir=Path(path).resolve().parent if path else None,
            judge_model=os.environ.get("TRACESCORE_JUDGE_MODEL") or None,
            judge_api_base=os.environ.get("TRACESCORE_JUDGE_API_BASE") or None,
        )
        paused: dict[str, str] = {}  # the judge checks run in the background (live_lifespan)
        monitors = parse_monitor_entries(
            (getattr(settings, "config", None) or {}).get("monitors"), source=source,
            scorer_ids=[reg.id for reg in registry],
            allow_private_webhooks=live_settings.allow_private_webhooks)
    except LiveConfigError as exc:
        raise ConfigError(str(exc)) from None
    return live_settings, registry, paused, monitors


def _pricing_of(app: FastAPI) -> Any:
    """``[pricing]`` of the config (``app.state.pricing`` when the totals mount made it)."""
    pricing = getattr(app.state, "pricing", None)
    if pricing is None:
        from tracescore.live import Pricing, parse_pricing

        config = getattr(app.state.settings, "config", None) or {}
        source = getattr(app.state.settings, "config_path", None) or "the built-in defaults"
        pricing = Pricing(parse_pricing(config.get("pricing"), source=str(source)))
    return pricing


def _setup(app: FastAPI) -> tuple[Any, Any]:
    setup = getattr(app.state, "live_setup", None)
    if setup is None:
        live_settings, registry, paused, monitors = _load(app.state.settings)
        app.state.live_setup = setup = (live_settings, registry)
        app.state.live_paused = paused
        app.state.live_monitors = monitors
    return setup


def _new_scheduler(app: FastAPI) -> Any:
    """A scheduler over the app's store and registry, with the start-up pauses applied (in
    cluster mode: on the node's own store, reading every node's through the cluster's, with
    the queue shared through PostgreSQL; see ``cluster_parts``)."""
    from tracescore.live import JudgeTrust, LiveScheduler, Monitors, start_paused

    live_settings, registry = _setup(app)
    monitors = Monitors(getattr(app.state, "live_monitors", None) or (),
                        allow_private_webhooks=live_settings.allow_private_webhooks)
    trust = JudgeTrust(*(getattr(app.state, "labels_setup", None) or ()))
    parts = cluster_parts(app)
    store = parts.pop("store", app.state.store)
    scheduler = LiveScheduler(store, registry, live_settings, monitors=monitors,
                              pricing=_pricing_of(app), trust=trust, **parts)
    start_paused(scheduler, getattr(app.state, "live_paused", {}))
    return scheduler


def cluster_parts(app: FastAPI) -> dict[str, Any]:
    """The scheduler's cluster keywords once the node runs (none on one node): the node's own
    store, the cluster's reader, the shared coordination, the placement of ready traces and
    the shared judge-call cache."""
    node = getattr(app.state, "cluster", None)
    reader = app.state.store
    if node is None or not hasattr(reader, "local_store"):
        return {}
    from tracescore.live import SharedCoordination

    coordination = getattr(app.state, "live_coordination", None)
    if coordination is None:
        coordination = app.state.live_coordination = SharedCoordination(
            node.coordination(), owner=node.node_id, lease_s=node.settings.lease_seconds,
            control=node.coordination())
    return {"store": reader.local_store, "reader": reader, "coordination": coordination,
            "placement": node, "judge_cache_factory": node.judge_cache,
            "shared_writes": node.shared_writes()}


def mount_live(app: FastAPI) -> None:
    """Validate the live config of ``app.state.settings`` and add the ``/api/live`` routes."""
    app.state.live_setup = None
    _setup(app)
    app.state.live = None
    app.include_router(router)


@contextlib.asynccontextmanager
async def live_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Run the live scheduler while the app serves."""
    from tracescore.live import ConfigError as LiveConfigError

    live_settings, _ = _setup(app)
    app.state.live = None
    if not live_settings.enabled:
        log.info("live scoring is off ([live] enabled = false)")
        yield
        return
    scheduler = _new_scheduler(app)
    _check_judges_later(app, scheduler)
    try:
        await scheduler.start()
    except LiveConfigError as exc:
        raise ConfigError(str(exc)) from None
    app.state.live = scheduler
    try:
        yield
    finally:
        app.state.live = None
        await scheduler.stop()
        log.info("live scoring stopped")


def _check_judges_later(app: FastAPI, scheduler: Any) -> None:
    """Hand the judge checks to the scheduler (run once litellm has loaded); a config error
    found then stops ``serve`` (``app.state.stop_serving``), else pauses the judge scorers."""
    from tracescore.live import check_judge_prices, check_judges

    path = getattr(app.state.settings, "config_path", None)
    source = str(path) if path else "the built-in defaults"

    def failed(exc: Exception) -> None:
        log.error("%s", exc)
        stop = getattr(app.state, "stop_serving", None)
        if stop is not None:
            stop(str(exc))

    def check() -> Mapping[str, str]:
        paused = check_judges(scheduler.registry, source=source)
        # litellm's price list says which judges have no price: a USD budget over one could
        # never count its spend (a ConfigError, like a model string with no provider).
        check_judge_prices(scheduler.registry, scheduler.settings, _pricing_of(app),
                           source=source)
        return paused

    scheduler.check_judges_later(check, on_error=failed)


def _scheduler(request: Request) -> Any:
    """The running scheduler, or an idle one over the same registry (live scoring off)."""
    state = request.app.state
    if getattr(state, "live", None) is not None:
        return state.live
    return _new_scheduler(request.app)


@router.get("/api/live/scorers")
async def list_scorers(request: Request) -> dict[str, Any]:
    """Each registered scorer: version, state, decision counts, average score, judge spend."""
    from tracescore.labels import with_agreement
    from tracescore.live import scorer_attention, scorer_summary

    live = _scheduler(request)
    running = request.app.state.live is not None
    status = live.status()
    if not running:
        for row in status:
            if row["state"] == "running":
                row["state"], row["note"] = "stopped", "live scoring is off ([live] enabled)"

    def summary() -> list[dict[str, Any]]:
        rows = scorer_attention(live.reader.read, scorer_summary(live.reader.read, status))
        return with_agreement(live.reader.read, rows)

    rows = await asyncio.to_thread(summary)
    stats = live.stats
    return {
        "running": running,
        "scorers": rows,
        "traces_waiting": stats.traces_waiting,
        "scoring_lag_seconds": stats.scoring_lag_seconds,
        "last_tick_at": stats.last_tick_at.isoformat() + "Z" if stats.last_tick_at else None,
        "last_tick_error": stats.last_tick_error,
    }


@router.get("/api/live/monitors")
async def list_monitors(request: Request) -> dict[str, Any]:
    """Each ``[[monitors]]`` entry: state (ok or breached), last value and last event."""
    live = _scheduler(request)
    await live.monitors.restore(live)
    return {"running": request.app.state.live is not None, "monitors": live.monitors.status()}


@router.post("/api/live/scorers/{scorer_id}/resume")
async def resume_scorer(request: Request, scorer_id: str) -> dict[str, Any]:
    """Run a scorer paused by an authentication error again."""
    live = request.app.state.live
    if live is None or live.registry.get(scorer_id) is None:
        raise HTTPException(404, f"no running scorer {scorer_id!r}; see GET /api/live/scorers")
    return {"scorer": scorer_id, "resumed": live.resume(scorer_id)}


class BackfillRequest(BaseModel):
    """The body of ``POST /api/live/backfill``."""

    scorer: str = Field(min_length=1)
    since: str | None = None
    until: str | None = None
    limit: int | None = Field(default=None, ge=1)
    dry_run: bool = False


@router.post("/api/live/backfill")
async def post_backfill(request: Request, body: BackfillRequest) -> dict[str, Any]:
    """Score (or count and estimate, with ``dry_run``) a scorer's undecided past traces."""
    from tracescore.live import backfill

    from ._timeparse import parse_since

    try:
        since = parse_since(body.since) if body.since else None
        until = parse_since(body.until) if body.until else None
    except ValueError as exc:
        raise HTTPException(400, f"since/until: {exc}") from None
    live = _scheduler(request)
    if request.app.state.live is None:
        await live.prepare()
    result: dict[str, Any] = await backfill(live, body.scorer, since=since, until=until,
                                            limit=body.limit, dry_run=body.dry_run)
    return result


class RescoreRequest(BaseModel):
    """The body of ``POST /api/live/rescore`` (the fields of ``tracescore rescore``)."""

    scorer: str = Field(min_length=1)
    failed: bool = False
    since: str | None = None
    trace: list[str] = Field(default_factory=list)
    dry_run: bool = False


@router.post("/api/live/rescore")
async def post_rescore(request: Request, body: RescoreRequest) -> dict[str, Any]:
    """Give a scorer's failed or chosen pairs a new attempt (or count them, with ``dry_run``);
    answers when they are decided."""
    from tracescore.live import rescore

    from ._api import full_trace_id
    from ._timeparse import parse_since

    try:
        since = parse_since(body.since) if body.since else None
    except ValueError as exc:
        raise HTTPException(400, f"since: {exc}") from None
    if not (body.failed or since is not None or body.trace):
        raise HTTPException(400, "say which pairs to rescore: failed, since or trace")
    live = _scheduler(request)
    trace_ids = [await full_trace_id(live.store, text) for text in body.trace]
    if request.app.state.live is None:
        await live.prepare()
    result: dict[str, Any] = await rescore(live, body.scorer, failed=body.failed, since=since,
                                           trace_ids=trace_ids, dry_run=body.dry_run)
    return result


__all__ = ["live_lifespan", "mount_live", "router"]
