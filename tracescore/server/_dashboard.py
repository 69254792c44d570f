"""The built-in web dashboard: static pages at ``/`` and the JSON routes they need beyond the API.

``mount_dashboard(app)`` serves the page files shipped inside the package (``tracescore/_web``;
``dashboards/web`` in a checkout is a link to it) at ``/`` and under ``/ui/`` (plain files, no
build step, no CDN), and adds two read-only routes:

- ``GET /api/traces/{trace_id}/scorer-input[?span_id=]``: what a scorer would see for the trace
  (``tracescore.traces.scorer_input``), as JSON.
- ``GET /api/traces/{trace_id}/steps``: the normalized step tree (``Trace.steps``), as JSON.
- ``GET /api/dashboard/info``: the server's real HTTP and gRPC ports (for the set-up hints).
- ``GET /api/dashboard/schema``: tables, columns, types and column docs (the SQL page's panel).

The pages read everything else through ``POST /api/sql`` and ``GET /api/traces[/{id}]``.
"""

from __future__ import annotations

import base64
import logging
import re
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parents[1] / "_web"
"""Where the dashboard's files live: package data (``tracescore/_web``), so a wheel carries them."""

_SPAN_ID = re.compile(r"^[0-9a-fA-F]{16}$")
# Step fields the dashboard does not need: the parent link is a cycle, raw attributes are on the
# span already (GET /api/traces/{id}).
_STEP_SKIP = frozenset({"parent", "attributes"})


def mount_dashboard(app: FastAPI, *, web_dir: str | Path | None = None) -> None:
    """Serve the dashboard pages at ``/`` and add the dashboard's JSON routes to ``app``.

    The store is read from ``app.state.store`` at request time. ``web_dir`` overrides where the
    page files are (default: the package's ``_web`` folder).
    """
    from fastapi import APIRouter
    from fastapi.responses import FileResponse, HTMLResponse
    from starlette.staticfiles import StaticFiles

    web = Path(web_dir) if web_dir is not None else WEB_DIR
    router = APIRouter()

    @router.get("/api/traces/{trace_id}/scorer-input", tags=["dashboard"])
    def get_scorer_input(request: Request, trace_id: str, span_id: str | None = None) -> Any:
        """What a scorer sees for this trace (default target, or the given span)."""
        if span_id is not None and not _SPAN_ID.match(span_id):
            raise HTTPException(400, f"span_id must be 16 hex digits, got {span_id!r}")
        trace = _load(request, trace_id)
        from tracescore.traces import SpanNotFound, scorer_input

        try:
            result = scorer_input(trace, span_id.lower() if span_id else None)
        except SpanNotFound as exc:
            raise HTTPException(404, str(exc)) from exc
        return _jsonable(result)

    @router.get("/api/traces/{trace_id}/steps", tags=["dashboard"])
    def get_steps(request: Request, trace_id: str) -> Any:
        """The normalized step tree of this trace (one root step per root span)."""
        trace = _load(request, trace_id)
        return {"trace_id": trace.trace_id, "steps": [step_to_dict(s) for s in trace.steps]}

    @router.get("/api/dashboard/info", tags=["dashboard"])
    def get_info(request: Request) -> dict[str, Any]:
        """The server's listeners, for the pages' set-up hints (the real ports, not defaults)."""
        state = request.app.state
        settings = state.settings
        return {
            "http_port": getattr(state, "http_port", None) or settings.http_port,
            "grpc_port": state.grpc_port if settings.grpc else None,
        }

    @router.get("/api/dashboard/schema", tags=["dashboard"])
    def get_schema(request: Request) -> dict[str, Any]:
        """Tables and views users query, with each column's type and its one-line doc."""
        rows = request.app.state.store.read(SCHEMA_SQL)
        docs = _schema_docs(web)
        tables: dict[str, dict[str, Any]] = {}
        for row in rows:
            name = row["table_name"]
            table = tables.setdefault(name, {
                "name": name, "kind": "view" if row["table_type"] == "VIEW" else "table",
                "columns": []})
            table["columns"].append({"name": row["column_name"], "type": row["data_type"],
                                     "doc": docs.get(name, {}).get(row["column_name"])})
        return {"tables": list(tables.values())}

    app.include_router(router)

    if not (web / "index.html").is_file():
        log.warning("dashboard files not found in %s; the dashboard is not served", web)

        @app.get("/", include_in_schema=False)
        def no_dashboard() -> HTMLResponse:
            return HTMLResponse(
                "<p>tracescore is running, but the dashboard files were not found in "
                f"{web}. The API is at /api/sql and /api/traces.</p>"
            )

        return

    no_cache = {"Cache-Control": "no-cache"}

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(web / "index.html", media_type="text/html", headers=no_cache)

    class _Assets(StaticFiles):
        def file_response(self, *args: Any, **kwargs: Any) -> Any:
            response = super().file_response(*args, **kwargs)
            response.headers["Cache-Control"] = "no-cache"
            return response

    app.mount("/ui", _Assets(directory=web), name="dashboard")


SCHEMA_SQL = """
SELECT c.table_name, c.column_name, c.data_type, t.table_type
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
WHERE c.table_schema = 'main'
ORDER BY t.table_type, c.table_name, c.ordinal_position
"""


def _schema_docs(web: Path) -> dict[str, dict[str, str]]:
    """table → column → doc line, from ``schema-docs.json`` (made from docs/server.md)."""
    import json

    try:
        docs: dict[str, dict[str, str]] = json.loads((web / "schema-docs.json").read_text())
    except (OSError, ValueError):
        return {}
    return docs


def _load(request: Request, trace_id: str) -> Any:
    """The trace a full id or a unique 8+ digit prefix names (run in FastAPI's thread pool)."""
    from tracescore.traces import TraceNotFound, load_trace

    from ._errors import TraceIdError
    from ._trace_ids import resolve_trace_id

    store = request.app.state.store
    try:
        return load_trace(store, resolve_trace_id(store.read, trace_id))
    except TraceIdError as exc:
        raise HTTPException(exc.status_code, str(exc)) from None
    except TraceNotFound as exc:
        raise HTTPException(404, str(exc)) from exc


def step_to_dict(step: Any) -> dict[str, Any]:
    """A normalized ``Step`` (and its children) as JSON-ready dicts; messages as role + parts."""
    out: dict[str, Any] = {}
    for name in _field_names(type(step)):
        if name in _STEP_SKIP:
            continue
        value = getattr(step, name, None)
        if name == "children":
            out["children"] = [step_to_dict(c) for c in value or ()]
        elif value is None or value == {} or value == []:
            continue
        else:
            out[name] = _jsonable(value)
    out["duration_ms"] = step.duration_ms
    out["children"] = out.pop("children", [])
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """The declared fields of a traces value class, in order, by their public names.

    Private fields (``_input``) are read through their public property (``input``), which
    resolves lazily parsed values.
    """
    cached = _FIELDS.get(cls)
    if cached is not None:
        return cached
    names: dict[str, None] = {}
    for klass in reversed(cls.__mro__):
        for name in getattr(klass, "__annotations__", {}):
            public = name.lstrip("_")
            if public and (public == name or isinstance(getattr(cls, public, None), property)):
                names[public] = None
    _FIELDS[cls] = tuple(names)
    return _FIELDS[cls]


def _jsonable(value: Any) -> Any:
    """Plain JSON values from pydantic models, step-tree objects (parts tagged), bytes, …."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if type(value).__name__ == "Lazy" and callable(getattr(value, "get", None)):
        return _jsonable(value.get())  # a lazily parsed value of the step tree
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return isoformat()
    if hasattr(value, "span_id") and hasattr(value, "children") and hasattr(value, "kind"):
        return step_to_dict(value)
    names = _field_names(type(value))
    if names:
        fields = {n: _jsonable(getattr(value, n, None)) for n in names if n not in _STEP_SKIP}
        fields.setdefault("type", _part_type(type(value).__name__))
        return fields
    return str(value)


def _part_type(class_name: str) -> str:
    return {"Call": "tool_call", "Result": "tool_result", "Msg": "message"}.get(
        class_name, class_name.lower()
    )


__all__ = ["WEB_DIR", "mount_dashboard", "step_to_dict"]
