"""Bearer-token authentication for OTLP and API paths (pure ASGI middleware).

With API keys configured, every HTTP request needs ``Authorization: Bearer <key>`` (else 401
in the error shape): OTLP under ``/v1/``, the API under ``/api/``, ``/metrics``, the API docs
(``/docs``, ``/redoc``, ``/openapi.json``) and any route added later. Only ``OPEN_PATHS`` stay
open: ``/healthz`` for supervisors and the dashboard's static pages (``/``, ``/ui/``), which ask
for the key themselves. Keys are compared with ``hmac.compare_digest`` (timing-safe), and an
empty token never matches: empty keys are refused at start-up (``Settings``).
"""

from __future__ import annotations

import hmac
from typing import Any

import orjson

PROTECTED_PREFIXES = ("/v1/", "/api/", "/metrics", "/docs", "/redoc", "/openapi.json")
"""Paths that always need the key (everything outside ``OPEN_PATHS`` does too)."""
OPEN_PATHS = frozenset({"/healthz", "/", "/favicon.ico"})
"""Exact paths served without a key."""
OPEN_PREFIXES = ("/ui/",)
"""Path prefixes served without a key (the dashboard's files)."""


def is_open(path: str) -> bool:
    """True when ``path`` is served without a key even when API keys are set."""
    if path.startswith(PROTECTED_PREFIXES):
        return False
    return path in OPEN_PATHS or path == "/ui" or path.startswith(OPEN_PREFIXES)


class BearerAuth:
    """ASGI middleware checking the bearer token against ``keys``."""

    def __init__(self, app: Any, *, keys: tuple[str, ...]) -> None:
        self.app = app
        self._keys = tuple(key.encode() for key in keys if key.strip())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self._keys or is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        token = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                if value[:7].lower() == b"bearer ":
                    token = value[7:].strip()
                break
        if token and any(hmac.compare_digest(token, key) for key in self._keys):
            await self.app(scope, receive, send)
            return
        state = scope.get("app").state if scope.get("app") is not None else None
        if state is not None and scope["path"].startswith("/v1/"):
            state.ingest_stats.requests["http", "unauthorized"] += 1
        message = (
            "this server needs an API key: send 'Authorization: Bearer <key>'"
            if not token
            else "the API key is not valid"
        )
        body = orjson.dumps({"error": {"message": message, "status": 401}})
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="tracescore"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


__all__ = ["OPEN_PATHS", "OPEN_PREFIXES", "PROTECTED_PREFIXES", "BearerAuth", "is_open"]
