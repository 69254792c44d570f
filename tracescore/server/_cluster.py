"""Cluster mode inside ``tracescore serve``: a ``[cluster]`` table makes the server a node.

``mount_cluster(app)`` (in ``DEFAULT_MOUNTS``) validates ``[cluster]`` (a bad key stops
``create_app`` with one sentence) and keeps the node as ``app.state.cluster`` (None without the
table: nothing changes) and adds ``GET /api/cluster``. ``open_store`` plugs the node into the
store's connections (``store_hook``). ``cluster_lifespan(app)`` (first in ``DEFAULT_HOOKS``:
live scoring and the totals maintainer start after it) recovers the node's last flush, starts
its thread and puts the readers' store (``ClusterStore``: lake ∪ local spans, users' SQL and
the dashboard's reads over the cluster views) on ``app.state.store``; the totals maintainer
and live scoring's selection keep reading the node's own rows (``local_store``), live scoring
shares its queue through PostgreSQL (``_live.cluster_parts``). On shutdown, after them, it
flushes once more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request

from ._errors import ConfigError


def mount_cluster(app: FastAPI) -> None:
    """Validate ``[cluster]``; ``app.state.cluster`` is the node, or None."""
    from tracescore.cluster import ClusterConfigError, ClusterNode, parse_cluster

    settings = app.state.settings
    config = getattr(settings, "config", None) or {}
    source = getattr(settings, "config_path", None) or "the config"
    try:
        parsed = parse_cluster(config, source=source)
    except ClusterConfigError as exc:
        raise ConfigError(str(exc)) from None
    app.state.cluster = ClusterNode(parsed) if parsed is not None else None
    if parsed is not None:
        app.add_api_route("/api/cluster", cluster_status, methods=["GET"], tags=["cluster"])


def store_hook(node: Any) -> Callable[[Any], Sequence[str]]:
    """The store's ``on_connect`` for ``node``: its errors become ``StoreError`` sentences
    (``serve`` reports them as it reports a database it cannot open)."""
    from tracescore.cluster import ClusterError
    from tracescore.store import StoreError

    def on_connect(conn: Any) -> Sequence[str]:
        try:
            return list(node.on_connect(conn))
        except ClusterError as exc:
            raise StoreError(f"cluster node {node.node_id}: {exc}") from None

    return on_connect


async def cluster_status(request: Request) -> dict[str, Any]:
    """The node's id, its last flush and the flusher's and maintenance's counters."""
    node = request.app.state.cluster
    flusher = node.flusher
    stats = flusher.stats if flusher is not None else None
    mark = flusher.mark if flusher is not None else None
    return {
        "node_id": node.node_id,
        "flush": None if mark is None else {
            "flush_no": mark.flush_no, "span_mark": str(mark.span_mark),
            "calls_mark": str(mark.calls_mark)},
        "flusher": None if stats is None else {
            "flushes": stats.flushes, "spans": stats.spans, "logs": stats.logs,
            "model_calls": stats.model_calls, "traces": stats.traces,
            "commit_retries": stats.commit_retries, "failures": stats.failures,
            "recovered": stats.recovered, "retention_deletes": stats.retention_deletes,
            "traces_upsert_failures": stats.traces_upsert_failures,
            "last_flush_ms": round(stats.last_flush_ms, 3), "last_error": stats.last_error},
        "maintenance": {"runs": node.maintenance.runs, "skipped": node.maintenance.skipped},
        "scoring": dict(getattr(getattr(getattr(request.app.state, "live", None),
                                        "coordination", None), "counts", None) or {}),
    }


@contextlib.asynccontextmanager
async def cluster_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Run the node while the app serves (nothing without ``[cluster]``)."""
    node = getattr(app.state, "cluster", None)
    if node is None:
        yield
        return
    from tracescore.cluster import ClusterError

    store = app.state.store
    try:
        app.state.store = await asyncio.to_thread(node.start, store)
    except ClusterError as exc:
        app.state.startup_error = f"cluster node {node.node_id}: {exc}"
        raise
    try:
        yield
    finally:
        await asyncio.to_thread(node.stop)
        app.state.store = store


__all__ = ["cluster_lifespan", "cluster_status", "mount_cluster", "store_hook"]
