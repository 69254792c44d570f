"""Helpers of the server tests: SQL over HTTP, OTLP posts, the error-shape assertion."""

from __future__ import annotations

import httpx
from server_process import ServerProcess, sql

__all__ = ["assert_error_shape", "count_spans", "post_otlp", "sql"]


def count_spans(server: ServerProcess, project: str) -> int:
    """Spans stored for ``project``."""
    return int(sql(server, "SELECT count(*) FROM spans WHERE project = ?", [project])[0][0])


def post_otlp(
    server: ServerProcess,
    body: bytes,
    *,
    path: str = "/v1/traces",
    content_type: str = "application/x-protobuf",
    project: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """POST an OTLP body."""
    all_headers = {"content-type": content_type, **server.headers, **(headers or {})}
    if project:
        all_headers["x-tracescore-project"] = project
    return httpx.post(f"{server.url}{path}", content=body, headers=all_headers, timeout=30)


def assert_error_shape(response: httpx.Response, status: int) -> str:
    """The response has ``status`` and the one JSON error shape; returns the message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body["error"]) == {"message", "status"}
    assert body["error"]["status"] == status
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    message: str = body["error"]["message"]
    return message
