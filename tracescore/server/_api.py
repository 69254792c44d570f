"""The JSON API: /api/sql, /api/traces, /api/traces/{trace_id}, /api/scores, /api/export, /healthz.

Views only call the store (``request.app.state.store``); errors are raised as exceptions and
turned into the one error shape by ``_errors_http``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse

from ._timeparse import parse_since

if TYPE_CHECKING:
    from tracescore.store import Store

router = APIRouter()


EXPORT_TIME_COLUMNS = {
    "spans": "start_time",
    "logs": "log_time",
    "traces": "start_time",
    "model_calls": "started_at",
    "scores": "created_at",
    "judge_executions": "created_at",
    "scoring_decisions": "updated_at",
}
"""Tables ``/api/export`` and ``tracescore export`` accept, with the column ``since`` filters."""


class SqlRequest(BaseModel):
    """Body of POST /api/sql."""

    sql: str = Field(description="One read statement (SELECT, WITH, FROM, DESCRIBE, SHOW).")
    params: list[Any] | dict[str, Any] | None = Field(
        None, description="Values for ? (list) or $name (object) placeholders."
    )


class ScoresRequest(BaseModel):
    """Body of POST /api/scores."""

    scores: list[dict[str, Any]] = Field(default_factory=list)
    judge_executions: list[dict[str, Any]] = Field(default_factory=list)
    decisions: list[dict[str, Any]] = Field(default_factory=list)


def _time(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return parse_since(value)
    except ValueError as exc:
        raise HTTPException(400, f"{name}: {exc}") from None


def sql_answer(store: Store, sql: str, params: Any) -> Any:
    """Run the query and keep its rows as JSON text (both bounded: ``sql_max_bytes``, the
    time limit); in a worker thread, so a large answer never holds the event loop. Returns a
    ``QueryAnswer`` whose ``chunks()`` are the response body."""
    return store.query_json(sql, params)


@router.post("/api/sql", tags=["query"])
async def post_sql(request: Request, body: SqlRequest) -> Response:
    """Run one read-only statement: ``{"columns", "rows", "truncated", "truncated_reason",
    "types"}``."""
    answer = await asyncio.to_thread(sql_answer, request.app.state.store, body.sql, body.params)
    return StreamingResponse(answer.chunks(), media_type="application/json")


TRACE_LIST_COLUMNS = (
    "trace_id, project, service_name, root_span_id, root_span_name, start_time, end_time, "
    "duration_ms, span_count, error_count, model_call_count, tool_call_count, input_tokens, "
    "output_tokens, total_tokens, cost_usd, models, agent_name, session_id, user_id"
)
"""The columns ``GET /api/traces`` returns per trace."""
TRACE_SORTS = (
    "start_time", "duration_ms", "span_count", "error_count", "model_call_count",
    "total_tokens", "cost_usd",
)
"""Columns ``GET /api/traces?sort=`` accepts."""


@router.get("/api/traces", tags=["query"])
async def list_traces(
    request: Request,
    project: str | None = None,
    service: str | None = None,
    since: str | None = Query(None, description="24h, 30m, 7d or an ISO-8601 time"),
    until: str | None = Query(None, description="24h, 30m, 7d or an ISO-8601 time"),
    limit: int = Query(50, ge=1, le=1000),
    offset: int = Query(0, ge=0),
    min_cost_usd: float | None = Query(None, ge=0, description="only traces costing more"),
    sort: str = Query("start_time", description=f"one of {', '.join(TRACE_SORTS)}"),
    order: str = Query("desc", pattern="^(asc|desc)$"),
) -> dict[str, Any]:
    """Recent traces (newest first, or sorted by ``sort``) from the ``traces`` table, with
    the agent's totals (model calls, tokens, cost), filtered."""
    if sort not in TRACE_SORTS:
        raise HTTPException(400, f"sort must be one of {', '.join(TRACE_SORTS)}; got {sort!r}")
    where: list[str] = []
    params: list[Any] = []
    if min_cost_usd is not None:
        where.append("cost_usd > ?")
        params.append(min_cost_usd)
    if project:
        where.append("project = ?")
        params.append(project)
    if service:
        where.append("service_name = ?")
        params.append(service)
    since_at, until_at = _time(since, "since"), _time(until, "until")
    if since_at is not None:
        where.append("start_time >= ?")
        params.append(since_at)
    if until_at is not None:
        where.append("start_time < ?")
        params.append(until_at)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    sql = (
        f"SELECT {TRACE_LIST_COLUMNS} FROM traces {clause} "
        f"ORDER BY {sort} {order.upper()} NULLS LAST, trace_id LIMIT {limit} OFFSET {offset}"
    )
    from tracescore.store import json_safe

    rows = await _postgres_read(request.app.state.store)(sql, params)
    return {"traces": [json_safe(row) for row in rows], "limit": limit, "offset": offset}


def _postgres_read(store: Any) -> Any:
    """How to read the ``traces`` table: a cluster node asks PostgreSQL itself (its index on
    ``start_time`` answers a page; through DuckDB's attachment the table would be read
    whole), one node its store."""
    read = getattr(store, "aread_postgres", None)
    return read if read is not None else store.aread


def span_tree(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Nest span rows under their parents (``children``); spans whose parent is missing are
    roots. Siblings keep start-time order."""
    nodes = {row["span_id"]: {**row, "children": []} for row in rows}
    roots = []
    for row in rows:
        node = nodes[row["span_id"]]
        parent = nodes.get(row["parent_span_id"]) if row["parent_span_id"] else None
        if parent is not None and parent is not node:
            parent["children"].append(node)
        else:
            roots.append(node)
    return roots


async def full_trace_id(store: Store, text: str) -> str:
    """The trace id ``text`` names (see ``_trace_ids``), or the HTTP error to answer."""
    from ._errors import TraceIdError
    from ._trace_ids import resolve_trace_id

    try:
        return await asyncio.to_thread(resolve_trace_id, store.read, text)
    except TraceIdError as exc:
        raise HTTPException(exc.status_code, str(exc)) from None


@router.get("/api/traces/{trace_id}", tags=["query"])
async def get_trace(request: Request, trace_id: str) -> dict[str, Any]:
    """One trace (a full id or a unique prefix of 8+ hex digits): its summary, its spans as a
    tree, and its log records."""
    store = request.app.state.store
    trace_id = await full_trace_id(store, trace_id)
    from tracescore.store import json_safe

    spans = await asyncio.to_thread(store.fetch_trace_rows, trace_id)
    if not spans:
        raise HTTPException(404, f"no spans stored for trace {trace_id.lower()}")
    logs = await asyncio.to_thread(store.fetch_trace_logs, trace_id)
    summary = await _postgres_read(store)("SELECT * FROM traces WHERE trace_id = ?",
                                          [trace_id.lower()])
    fetch_calls = getattr(store, "fetch_trace_calls", None)  # a cluster node: bounded read
    calls = await (asyncio.to_thread(fetch_calls, trace_id) if fetch_calls is not None
                   else store.aread(
                       "SELECT * FROM model_calls WHERE trace_id = ? ORDER BY started_at, span_id",
                       [trace_id.lower()]))
    return {
        "trace_id": trace_id.lower(),
        "trace": json_safe(summary[0]) if summary else None,
        "spans": span_tree(spans),
        "logs": logs,
        "model_calls": [json_safe(row) for row in calls],
    }


@router.post("/api/scores", tags=["scores"])
async def post_scores(request: Request, body: ScoresRequest) -> dict[str, Any]:
    """Store score, judge-execution (and scoring-decision) rows in one transaction."""
    await request.app.state.store.write_scores(body.scores, body.judge_executions, body.decisions)
    return {
        "written": {
            "scores": len(body.scores),
            "judge_executions": len(body.judge_executions),
            "decisions": len(body.decisions),
        }
    }


@router.get("/api/export", tags=["query"])
async def export(
    request: Request,
    table: str = "spans",
    since: str | None = Query(None, description="24h, 30m, 7d or an ISO-8601 time"),
) -> FileResponse:
    """A table (rows newer than ``since``) as a Parquet file, written with DuckDB COPY."""
    if table not in EXPORT_TIME_COLUMNS:
        raise HTTPException(
            400, f"table must be one of {', '.join(EXPORT_TIME_COLUMNS)}; got {table!r}"
        )
    sql, params = export_sql(table, _time(since, "since"))
    path: Path = await asyncio.to_thread(request.app.state.store.export_parquet, sql, params)
    return FileResponse(
        path,
        media_type="application/vnd.apache.parquet",
        filename=f"{table}.parquet",
        background=BackgroundTask(path.unlink, missing_ok=True),
    )


def export_sql(table: str, since_at: Any) -> tuple[str, list[Any]]:
    """The SELECT an export runs for ``table`` (and its parameters)."""
    if since_at is None:
        return f"SELECT * FROM {table}", []
    return f"SELECT * FROM {table} WHERE {EXPORT_TIME_COLUMNS[table]} >= ?", [since_at]


def _judge_state(state: Any) -> str:
    """The live scorer's judge machinery: ``none`` (no judge scorer), ``loading`` (litellm
    importing in the background), ``ready``, ``failed: …``; ``off`` without live scoring."""
    live = getattr(state, "live", None)
    return str(getattr(live, "judge_state", "none")) if live is not None else "off"


@router.get("/healthz", tags=["health"])
async def healthz(request: Request) -> JSONResponse:
    """Liveness and the writer's counters; 503 with the reason while the database is
    unusable (DuckDB invalidated it and the store is reopening it); 200 with ``"status":
    "degraded"`` and the reason once a read met a damaged block of the file, or while the disk
    holding the database is full (writes answered 503 until space is freed)."""
    state = request.app.state
    stats = state.store.stats()
    problem = state.store.unavailable
    full = getattr(state.store, "disk_full", None)
    damaged = getattr(state.store, "damaged", None) or (
        f"the disk holding the database is full ({full}); writes are refused with 503 until "
        "space is freed" if full else None)
    body = {
        "status": "unavailable" if problem else "degraded" if damaged else "ok",
        "reason": problem or damaged,
        "judges": _judge_state(state),
        "schema_version": state.store.schema_version,
        "grpc_port": getattr(state, "grpc_port", None),
        "writer": {
            "pending_rows": stats.pending_rows,
            "pending_bytes": stats.pending_bytes,
            "commits": stats.commits,
            "reopens": stats.reopens,
            "refreshes": stats.refreshes,
            "refreshes_skipped": stats.refreshes_skipped,
            "last_refresh_ms": round(stats.last_refresh_ms, 3),
            "split_commits": stats.split_commits,
            "spans_inserted": stats.spans_inserted,
            "logs_inserted": stats.logs_inserted,
            "last_commit_ms": round(stats.last_commit_ms, 3),
            "span_key_checks": stats.span_key_checks,
            "duplicate_retries": stats.duplicate_retries,
            "traces_exact_retries": stats.traces_exact_retries,
            "checkpoints": stats.checkpoints,
            "idle_checkpoints": stats.idle_checkpoints,
            "last_checkpoint_ms": round(stats.last_checkpoint_ms, 3),
            "max_checkpoint_ms": round(stats.max_checkpoint_ms, 3),
            "wal_bytes": stats.wal_bytes,
        },
        "ingest": state.ingest_stats.as_dict(),
    }
    headers = {"Retry-After": str(max(1, round(state.settings.retry_after_seconds)))}
    if problem is None:
        return JSONResponse(body)
    return JSONResponse(body, status_code=503, headers=headers)


__all__ = ["EXPORT_TIME_COLUMNS", "export_sql", "router", "span_tree"]
