"""``create_app(settings)``: the FastAPI app with OTLP/HTTP, the JSON API, and a lifespan.

The lifespan opens the store (its writer thread starts), starts OTLP/gRPC in the same event
loop, then enters the lifespan hooks in order; on shutdown everything stops in reverse (hooks,
gRPC with a grace period, the store draining its queue). State lives on ``app.state``:
``settings``, ``store``, ``decode_pool``, ``ingest_stats``, ``grpc_server``, ``grpc_port``,
``lifespan_hooks``.

A lifespan hook is a callable ``hook(app) -> async context manager``; it runs after the store
and gRPC are up and is closed before they stop. Hooks come from ``create_app(...,
lifespan_hooks=...)``, from ``app.state.lifespan_hooks.append(hook)`` before startup, and by
default from ``DEFAULT_HOOKS`` (``"module:attribute"`` names imported when present, so the live
scheduler plugs in without editing this module).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI

from ._api import router as api_router
from ._api_limits import ApiBodyLimits
from ._auth import BearerAuth
from ._handlers import install_handlers
from ._ingest_stats import IngestStats
from ._otlp_http import make_endpoint
from ._settings import Settings, short_key_warning

log = logging.getLogger(__name__)

LifespanHook = Callable[[FastAPI], AbstractAsyncContextManager[Any]]

DEFAULT_HOOKS: tuple[str, ...] = (
    "tracescore.server._cluster:cluster_lifespan",
    "tracescore.server._live:live_lifespan",
    "tracescore.server._totals:totals_lifespan",
)
"""Hooks loaded when ``create_app`` is not given ``lifespan_hooks`` (skipped if missing).
The cluster node comes first (live scoring in cluster mode uses its reader and PostgreSQL)
and stops last (its final flush follows the last scores)."""

DEFAULT_MOUNTS: tuple[str, ...] = (
    "tracescore.server._dashboard:mount_dashboard",
    "tracescore.server._datasets_api:mount_datasets",
    "tracescore.server._live:mount_live",
    "tracescore.server._totals:mount_totals",
    "tracescore.server._metrics:mount_metrics",
    "tracescore.server._cluster:mount_cluster",
    "tracescore.server._labels_api:mount_labels",
    "tracescore.server._sessions_api:mount_sessions",
)
"""Functions ``fn(app)`` called by ``create_app`` to add routes (skipped if missing)."""

GRPC_GRACE_S = 5.0


def _resolve(name: str) -> Any | None:
    module_name, _, attribute = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if exc.name and module_name.startswith(exc.name):
            log.debug("%s not available: %s", name, exc)
            return None
        raise
    return getattr(module, attribute, None)


def default_hooks() -> list[LifespanHook]:
    """The hooks named in ``DEFAULT_HOOKS`` that exist in this installation."""
    return [hook for hook in (_resolve(name) for name in DEFAULT_HOOKS) if hook is not None]


def open_store(settings: Settings, *, cluster: Any = None,
               discard_damaged_wal: bool = False) -> Any:
    """The Store ``settings`` describe (not yet opened); ``cluster``, a ``ClusterNode``, is
    plugged into its connections (cluster mode); ``discard_damaged_wal`` is ``serve
    --discard-damaged-wal`` (never a setting: it drops data, once, by hand)."""
    from tracescore.store import CheckpointPolicy, Store

    on_connect = None
    if cluster is not None:
        from ._cluster import store_hook

        on_connect = store_hook(cluster)
    return Store(
        settings.db,
        sql_row_limit=settings.sql_row_limit,
        sql_timeout_s=settings.sql_timeout_seconds,
        sql_max_bytes=settings.sql_max_bytes,
        sql_max_concurrent=settings.sql_max_concurrent,
        max_pending_rows=settings.max_pending_spans,
        max_pending_bytes=settings.max_pending_bytes,
        retry_after_s=settings.retry_after_seconds,
        memory_limit=settings.duckdb_memory_limit or None,
        checkpoint=CheckpointPolicy(max_wal_bytes=settings.checkpoint_wal_bytes,
                                    vacuum=settings.duckdb_vacuum,
                                    reopen_after=settings.duckdb_reopen_after_checkpoints),
        on_connect=on_connect,
        discard_damaged_wal=discard_damaged_wal,
    )


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = app.state
    store = state.store  # ``serve`` opens it before uvicorn starts; else it is opened here
    if store is None:
        store = open_store(state.settings, cluster=getattr(state, "cluster", None))
    if not store.is_open:
        await asyncio.to_thread(store.open)
    state.store = store
    from tracescore.ingest import DecodePool

    state.decode_pool = DecodePool(
        state.settings.decode_workers, max_attribute_bytes=state.settings.max_attribute_bytes
    )
    state.decode_pool.start()
    try:
        if state.settings.grpc:
            from ._otlp_grpc import start_grpc

            try:
                state.grpc_server, state.grpc_port = await start_grpc(state)
            except OSError as exc:
                state.startup_error = str(exc)
                raise
        async with contextlib.AsyncExitStack() as hooks:
            for hook in list(state.lifespan_hooks):
                await hooks.enter_async_context(hook(app))
            settings = state.settings
            port = getattr(state, "http_port", None) or settings.http_port
            grpc = f", OTLP/gRPC on port {state.grpc_port}" if state.grpc_port else ""
            log.info("tracescore ready: OTLP/HTTP, API and dashboard on http://%s:%s%s "
                     "(database %s)", settings.host, port, grpc, settings.db)
            yield
    finally:
        if state.grpc_server is not None:
            await state.grpc_server.stop(GRPC_GRACE_S)
            state.grpc_server = None
        await asyncio.to_thread(state.decode_pool.close)
        await asyncio.to_thread(store.close)
        log.info("tracescore stopped; database closed")


def create_app(
    settings: Settings | None = None,
    *,
    lifespan_hooks: Sequence[LifespanHook] | None = None,
    mounts: Sequence[Callable[[FastAPI], None]] | None = None,
) -> FastAPI:
    """Build the app for ``settings`` (default: ``Settings()`` from env and defaults).

    ``lifespan_hooks``: async-context-manager factories entered after the store and gRPC
    start (None → ``DEFAULT_HOOKS``; ``[]`` → none). ``mounts``: functions adding routes
    (None → ``DEFAULT_MOUNTS``).
    """
    settings = settings or Settings()
    app = FastAPI(
        title="tracescore",
        summary="OTLP in, DuckDB, scores queryable with SQL",
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.store = None
    app.state.decode_pool = None
    app.state.cluster = None
    app.state.grpc_server = None
    app.state.grpc_port = None
    app.state.ingest_stats = IngestStats()
    app.state.lifespan_hooks = list(default_hooks() if lifespan_hooks is None else lifespan_hooks)

    app.add_route("/v1/traces", make_endpoint("traces"), methods=["POST"])
    app.add_route("/v1/logs", make_endpoint("logs"), methods=["POST"])
    app.include_router(api_router)
    if mounts is None:
        mounts = [fn for fn in (_resolve(name) for name in DEFAULT_MOUNTS) if fn is not None]
    for mount in mounts:
        mount(app)
    install_handlers(app)
    app.add_middleware(ApiBodyLimits, max_bytes=settings.api_max_body_bytes,
                       max_items=settings.api_max_items)
    if settings.api_keys:
        app.add_middleware(BearerAuth, keys=settings.api_keys)
        warning = short_key_warning(settings)
        if warning:
            log.warning("%s", warning)
    return app


__all__ = ["DEFAULT_HOOKS", "DEFAULT_MOUNTS", "LifespanHook", "create_app", "open_store"]
