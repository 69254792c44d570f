"""Exception handlers: every error leaves the API as ``{"error": {"message", "status"}}``.

The exception tree maps to statuses here (and only here); tracebacks go to the log, never to
the client.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from tracescore.ingest import DecodeError, UnsupportedContentType
from tracescore.model import TracescoreError
from tracescore.store import BatchTooLarge, RetryLater, StoreClosed

log = logging.getLogger(__name__)


def error_body(status: int, message: str) -> dict[str, Any]:
    """The one JSON error shape."""
    return {"error": {"message": message, "status": status}}


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A JSONResponse carrying the error shape."""
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


def _status_of(exc: TracescoreError) -> int:
    if isinstance(exc, UnsupportedContentType):
        return 415
    if isinstance(exc, RetryLater | StoreClosed):
        return 503
    if isinstance(exc, BatchTooLarge):
        return 413
    if isinstance(exc, DecodeError):
        return 400
    return 400


def install_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = f"no route {request.method} {request.url.path}"
        if exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return error_response(exc.status_code, message, dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
        message = f"invalid request: {where or 'body'}: {first.get('msg', 'invalid')}"
        return error_response(400, message)

    @app.exception_handler(TracescoreError)
    async def tracescore_error(request: Request, exc: TracescoreError) -> JSONResponse:
        status = _status_of(exc)
        headers = None
        if isinstance(exc, RetryLater):
            headers = {"Retry-After": str(max(1, round(exc.retry_after_s)))}
        return error_response(status, str(exc), headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal error; the server log has the details")


__all__ = ["error_body", "error_response", "install_handlers"]
