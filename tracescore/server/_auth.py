"""Bearer-token authentication for OTLP and API paths (pure ASGI middleware).

With API keys configured, every request under ``/v1/``, ``/api/`` and ``/metrics`` needs
``Authorization: Bearer <key>``; otherwise it gets 401 in the error shape. ``/healthz`` and
the dashboard's static pages stay open (the pages ask for the key themselves).
"""

from __future__ import annotations

import hmac
from typing import Any

import orjson

PROTECTED_PREFIXES = ("/v1/", "/api/", "/metrics")


class BearerAuth:
    """ASGI middleware checking the bearer token against ``keys``."""

    def __init__(self, app: Any, *, keys: tuple[str, ...]) -> None:
        self.app = app
        self._keys = tuple(key.encode() for key in keys)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self._keys or not scope["path"].startswith(
            PROTECTED_PREFIXES
        ):
            await self.app(scope, receive, send)
            return
        token = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                if value[:7].lower() == b"bearer ":
                    token = value[7:].strip()
                break
        if any(hmac.compare_digest(token, key) for key in self._keys):
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


__all__ = ["PROTECTED_PREFIXES", "BearerAuth"]
