"""Issue 12 defect 8 (first half): with API keys set, every route but the open few needs the key.

The routes come from the app itself (``create_app`` with the same settings, not started), so a
route added later is walked too; each is then requested without a key from a real
``tracescore serve`` process. The API docs (``/docs``, ``/redoc``, ``/openapi.json``) were open
before this fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, running_server

from tracescore.server import Settings, create_app

KEY = "routes-key-0123456789abcdef"
OPEN = {"/healthz", "/", "/ui"}
"""The only paths served without a key: supervisors' health check and the dashboard's files
(whose pages ask for the key themselves)."""


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A real server started with --api-key."""
    root = tmp_path_factory.mktemp("routes")
    with running_server(root / "routes.duckdb", api_key=KEY) as server:
        yield server


def app_routes() -> list[tuple[str, str]]:
    """(method, path) of every route and mount of the app, path parameters filled in."""
    app = create_app(Settings(api_keys=(KEY,)), lifespan_hooks=[])
    out: list[tuple[str, str]] = []

    def walk(routes: list[Any], prefix: str) -> None:
        for route in routes:
            included = getattr(route, "original_router", None)  # FastAPI's include_router
            if included is not None:
                walk(included.routes, prefix + route.include_context.prefix)
                continue
            path = prefix + re.sub(r"\{[^}]+\}", "0" * 32, route.path)
            methods = sorted(getattr(route, "methods", None) or {"GET"})
            out.extend((method, path) for method in methods if method != "HEAD")

    walk(list(app.routes), "")
    return sorted(set(out))


def test_every_route_but_the_open_ones_answers_401_without_a_key(
        secured: ServerProcess) -> None:
    routes = app_routes()
    paths = {path for _, path in routes}
    assert {"/docs", "/redoc", "/openapi.json", "/api/sql", "/v1/traces", "/metrics"} <= paths
    assert len(routes) >= 15, routes
    answered_open = set()
    for method, path in routes:
        response = httpx.request(method, f"{secured.url}{path}", timeout=30)
        if response.status_code != 401:
            answered_open.add(path)
            continue
        assert response.json()["error"]["status"] == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert answered_open <= OPEN, answered_open


def test_a_wrong_key_is_refused_on_every_protected_route(secured: ServerProcess) -> None:
    for method, path in app_routes():
        if path in OPEN:
            continue
        response = httpx.request(method, f"{secured.url}{path}", timeout=30,
                                 headers={"authorization": "Bearer " + KEY[:-1]})
        assert response.status_code == 401, (method, path)


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"])
def test_the_api_docs_need_the_key(secured: ServerProcess, path: str) -> None:
    assert httpx.get(f"{secured.url}{path}").status_code == 401
    assert httpx.get(f"{secured.url}{path}", headers=secured.headers).status_code == 200


def test_the_open_paths_stay_open(secured: ServerProcess) -> None:
    assert httpx.get(f"{secured.url}/healthz").status_code == 200
    page = httpx.get(f"{secured.url}/")
    assert page.status_code == 200 and "html" in page.headers["content-type"]
    assert httpx.get(f"{secured.url}/ui/../openapi.json").status_code in (401, 404)


def test_without_keys_the_docs_are_served(tmp_path_factory: pytest.TempPathFactory) -> None:
    with running_server(tmp_path_factory.mktemp("open") / "open.duckdb") as server:
        schema = httpx.get(f"{server.url}/openapi.json")
        assert schema.status_code == 200 and "/api/sql" in schema.json()["paths"]
