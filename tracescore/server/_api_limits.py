"""Bounds on every ``/api/*`` request body (pure ASGI middleware), checked before any route
parses it.

* ``api_max_body_bytes``: a body larger than this is refused with 413 as soon as its
  ``Content-Length`` says so, or when reading it passes the limit (the rest is never read).
* ``api_max_items``: a JSON object body whose top-level list (``items``, ``results``,
  ``scores``, ``item_ids``, ``params``, ...) or object (``ground_truth``) holds more entries
  than this is refused with 413, before pydantic builds a model per entry (2,000,000 tiny
  dataset items took 6 GB of memory that way).
* ``MAX_JSON_DEPTH``: a body nesting arrays/objects deeper than this is refused with 400 (a
  dataset item nested 300 levels deep made the store's JSON writer fail with a 500).

OTLP bodies (``/v1/*``) have their own limit (``max_body_bytes``, ``_body.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects in an ``/api/*`` JSON body."""

_CHECKED_METHODS = frozenset({"POST", "PUT", "PATCH"})


class BodyRefused(Exception):
    """The body breaks a limit; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def check_shape(value: Any, *, max_items: int, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise ``BodyRefused`` when a parsed body has a top-level list/object longer than
    ``max_items`` or nests deeper than ``max_depth``."""
    if isinstance(value, dict):
        for key, entry in value.items():
            if isinstance(entry, list | dict) and len(entry) > max_items:
                raise BodyRefused(
                    413, f"`{key}` holds {len(entry)} entries; send at most {max_items} per "
                    "request (api_max_items) and the rest in further requests")
    elif isinstance(value, list) and len(value) > max_items:
        raise BodyRefused(413, f"the body holds {len(value)} entries; send at most "
                               f"{max_items} per request (api_max_items)")
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            raise BodyRefused(400, f"the body nests arrays/objects deeper than {max_depth} "
                                   "levels; flatten it or send deep values as JSON text")
        if isinstance(item, dict):
            stack.extend((entry, depth + 1) for entry in item.values()
                         if isinstance(entry, list | dict))
        elif isinstance(item, list):
            stack.extend((entry, depth + 1) for entry in item if isinstance(entry, list | dict))


def _parse_and_check(body: bytes, max_items: int) -> None:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc).lower():
            raise BodyRefused(400, f"the body nests arrays/objects deeper than "
                                   f"{MAX_JSON_DEPTH} levels; flatten it") from None
        return  # not JSON: the route answers with its own sentence
    check_shape(value, max_items=max_items)


class ApiBodyLimits:
    """ASGI middleware applying the limits of the module docstring to ``/api/*`` bodies."""

    def __init__(self, app: Any, *, max_bytes: int, max_items: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_items = max_items

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (scope["type"] != "http" or scope["method"] not in _CHECKED_METHODS
                or not scope["path"].startswith("/api/")):
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read(scope, receive)
            if body:
                await asyncio.to_thread(_parse_and_check, body, self.max_items)
        except BodyRefused as exc:
            await _refuse(send, exc)
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, scope: Any, receive: Any) -> bytes:
        too_large = BodyRefused(
            413, f"the request body is larger than {self.max_bytes} bytes (api_max_body_bytes); "
            "send fewer items per request")
        for name, value in scope["headers"]:
            if name == b"content-length" and value.strip().isdigit() \
                    and int(value) > self.max_bytes:
                raise too_large
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


async def _refuse(send: Any, exc: BodyRefused) -> None:
    body = orjson.dumps({"error": {"message": str(exc), "status": exc.status}})
    await send({
        "type": "http.response.start",
        "status": exc.status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")],
    })
    await send({"type": "http.response.body", "body": body})


__all__ = ["MAX_JSON_DEPTH", "ApiBodyLimits", "BodyRefused", "check_shape"]
