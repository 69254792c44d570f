"""``GET /api/sessions/{session_id}/turns``: a conversation's turns, a page per request.

A long conversation is thousands of traces. The session page used to ask for each turn's
scorer input one request at a time (each loading a whole trace with a scan of ``spans``), and
showed only the first 500. This route answers a page of turns, newest first, with how many
there are, in three reads: the page's traces from ``traces``, their turns from
``session_turns`` (the totals maintainer writes each session trace's input messages and answer
there when it computes the trace, from the step tree it builds anyway), bounded by the page's
earliest arrival so DuckDB skips older row groups, and their per-trace scores. A turn without
a stored row (a database from before schema version 11, a trace whose totals are being
recomputed) is read from its spans here, the way an agent scorer sees it
(``trace_to_agent_run``), all such traces of the page in one read. The stored JSON goes into
the answer as it is (``orjson.Fragment``): nothing is parsed and encoded again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.responses import Response

TURNS_PER_PAGE = 100
"""Turns a request answers when it gives no ``limit``."""
MAX_TURNS_PER_PAGE = 500
"""The largest ``limit`` (more is a 400)."""
LOG_MARGIN = timedelta(minutes=10)
"""Log records that arrived this long before their trace's first span still belong to it."""

COUNT_SQL = "SELECT count(*) AS n FROM traces WHERE session_id = ?"
PAGE_SQL = """
SELECT trace_id, start_time, first_received_at FROM traces WHERE session_id = ?
ORDER BY start_time DESC NULLS LAST, first_received_at DESC, trace_id DESC
LIMIT ? OFFSET ?
"""
STORED_SQL = """
SELECT trace_id, CAST(input AS VARCHAR) AS input, CAST(output AS VARCHAR) AS output
FROM session_turns
WHERE computed_at >= ? AND session_id = ? AND trace_id IN (SELECT unnest(?::VARCHAR[]))
"""
SCORES_SQL = """
SELECT trace_id, scorer_id, score, status, reason FROM scores
WHERE trace_id IN (SELECT unnest(?::VARCHAR[])) AND session_id IS NULL
ORDER BY created_at, scorer_id
"""

router = APIRouter(tags=["dashboard"])


@router.get("/api/sessions/{session_id}/turns")
def get_turns(
    request: Request,
    session_id: str,
    limit: int = Query(TURNS_PER_PAGE, ge=1, le=MAX_TURNS_PER_PAGE),
    offset: int = Query(0, ge=0, le=2**62),
) -> Response:
    """A page of the conversation's turns, newest first, and how many there are."""
    import orjson

    store = request.app.state.store
    total = int(store.read(COUNT_SQL, [session_id])[0]["n"])
    if total == 0:
        raise HTTPException(404, f"no trace carries session id {session_id!r} (a trace joins "
                                 "its session once its totals are computed)")
    rows = store.read(PAGE_SQL, [session_id, limit, offset])
    body = {"session_id": session_id, "total": total, "limit": limit, "offset": offset,
            "order": "newest first",
            "turns": turns_of(store, session_id, rows, first_number=total - offset)}
    return Response(orjson.dumps(body), media_type="application/json")


def turns_of(store: Any, session_id: str, rows: list[dict[str, Any]], *,
             first_number: int) -> list[dict[str, Any]]:
    """Each ``traces`` row (newest first) as a turn: number, input, answer, scores."""
    import orjson

    if not rows:
        return []
    ids = [row["trace_id"] for row in rows]
    since = min(row["first_received_at"] for row in rows)
    stored = {r["trace_id"]: r for r in store.read(STORED_SQL, [since, session_id, ids])}
    computed = _computed(store, [r for r in rows if r["trace_id"] not in stored], since)
    scores: dict[str, list[dict[str, Any]]] = {}
    for score in store.read(SCORES_SQL, [ids]):
        scores.setdefault(score.pop("trace_id"), []).append(score)
    turns = []
    for index, row in enumerate(rows):
        trace_id = row["trace_id"]
        turn: dict[str, Any] = {
            "turn": first_number - index, "trace_id": trace_id,
            "start_time": row["start_time"].isoformat() if row["start_time"] else None,
            "input": [], "output": [], "scores": scores.get(trace_id, []), "error": None}
        if trace_id in stored:
            text_in, text_out = stored[trace_id]["input"], stored[trace_id]["output"]
            if text_out.startswith("{"):  # {"error": ...}: the maintainer could not read it
                turn["error"] = orjson.loads(text_out).get("error")
            else:
                turn["input"] = orjson.Fragment(text_in or "[]")
                turn["output"] = orjson.Fragment(text_out)
        else:
            turn.update(computed[trace_id])
        turns.append(turn)
    return turns


def _computed(store: Any, rows: list[dict[str, Any]], since: Any) -> dict[str, dict[str, Any]]:
    """Turns read from the spans (no stored row): trace id → input, output, error."""
    from tracescore.traces import Trace, trace_to_agent_run

    if not rows:
        return {}
    ids = [row["trace_id"] for row in rows]
    spans, logs = store.fetch_recent_traces(ids, spans_since=since,
                                            logs_since=since - LOG_MARGIN)
    out: dict[str, dict[str, Any]] = {}
    for trace_id in ids:
        try:
            run = trace_to_agent_run(Trace.from_rows(spans.get(trace_id, ()),
                                                     logs=logs.get(trace_id, ()),
                                                     trace_id=trace_id))
            messages = getattr(run.input, "input_messages", None) or []
            out[trace_id] = {"input": [m.model_dump(mode="json") for m in messages],
                             "output": [m.model_dump(mode="json") for m in run.output or []],
                             "error": None}
        except Exception as exc:  # noqa: BLE001 - one unreadable trace must not hide the rest
            out[trace_id] = {"input": [], "output": [], "error": f"{type(exc).__name__}: {exc}"}
    return out


def mount_sessions(app: FastAPI) -> None:
    """Add ``GET /api/sessions/{session_id}/turns`` (in ``DEFAULT_MOUNTS``)."""
    app.include_router(router)


__all__ = ["MAX_TURNS_PER_PAGE", "TURNS_PER_PAGE", "mount_sessions", "turns_of"]
