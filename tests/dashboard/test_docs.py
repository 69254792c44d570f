"""docs/dashboard.md documents every route the dashboard adds and every page it has."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI

from tracescore.server._dashboard import mount_dashboard

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "dashboard.md").read_text()


def test_every_http_route_is_documented() -> None:
    app = FastAPI()
    mount_dashboard(app)
    api = set(app.openapi()["paths"])
    assert api == {"/api/traces/{trace_id}/scorer-input", "/api/traces/{trace_id}/steps",
                   "/api/dashboard/info", "/api/dashboard/schema"}
    static = {getattr(route, "path", "") for route in app.routes} & {"/", "/ui"}
    assert static == {"/", "/ui"}
    for path in api | static:
        assert f"`GET {path}" in DOC, path


def test_every_page_is_documented() -> None:
    app_js = (ROOT / "dashboards" / "web" / "js" / "app.js").read_text()
    pages = set(
        re.findall(
            r"TS\.pages\.(\w+) =",
            "".join(p.read_text() for p in (ROOT / "dashboards" / "web" / "js").glob("*.js")),
        )
    )
    assert pages == {"overview", "traces", "trace", "scorers", "sessions", "sql", "datasets",
                     "experiments", "review"}
    for page in pages - {"trace"}:  # the trace page lives under #/traces/<trace_id>
        assert f"`#/{page}" in DOC, page
    assert "`#/traces/<trace_id>" in DOC
    assert "`#/sessions/<session_id>" in DOC
    assert "`#/experiments/compare?" in DOC and "`#/datasets/<name>" in DOC
    assert "**Add to dataset**" in DOC
    assert "`#/review/<queue>`" in DOC
    assert "#/overview" in app_js
