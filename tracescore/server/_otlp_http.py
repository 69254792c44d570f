"""OTLP/HTTP receivers: ``POST /v1/traces`` and ``POST /v1/logs``.

Transport only: content type, streamed decompression under the size limit, status codes and
the response in the request's encoding (protobuf or JSON). Errors follow the OTLP spec: a
``google.rpc.Status`` in the request's encoding (the JSON form also carries tracescore's
``{"error": {"message", "status"}}``), 503 with ``Retry-After`` when the write queue is full.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from tracescore.ingest import DecodeError, UnsupportedContentType, encoding_of
from tracescore.store import BatchTooLarge, StoreClosed, StoreUnavailable, WriteQueueFull

from ._body import BodyError, read_body
from ._otlp_common import Signal, ingest_export, response_json, status_bytes

log = logging.getLogger(__name__)

PROJECT_HEADER = "x-tracescore-project"
# google.rpc.Code values used in Status bodies
_GRPC_CODES = {400: 3, 401: 16, 413: 3, 415: 3, 500: 13, 503: 14}


def _error(
    status: int,
    message: str,
    encoding: str | None,
    *,
    retry_after_s: float | None = None,
) -> Response:
    headers = {}
    if retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(retry_after_s)))
    code = _GRPC_CODES.get(status, 2)
    if encoding == "protobuf":
        return Response(
            status_bytes(code, message, retry_after_s=retry_after_s),
            status_code=status,
            media_type="application/x-protobuf",
            headers=headers,
        )
    body = {"code": code, "message": message, "error": {"message": message, "status": status}}
    return Response(
        orjson.dumps(body), status_code=status, media_type="application/json", headers=headers
    )


def make_endpoint(kind: Signal) -> Any:
    """The Starlette endpoint for ``/v1/traces`` (kind="traces") or ``/v1/logs``."""

    async def endpoint(request: Request) -> Response:
        state = request.app.state
        stats = state.ingest_stats
        try:
            encoding = encoding_of(request.headers.get("content-type"))
        except UnsupportedContentType as exc:
            stats.requests["http", "unsupported"] += 1
            return _error(415, str(exc), None)
        try:
            body = await read_body(
                request.stream(),
                content_encoding=request.headers.get("content-encoding"),
                limit=state.settings.max_body_bytes,
            )
        except BodyError as exc:
            outcome = {413: "too_large", 415: "unsupported"}.get(exc.status, "bad_request")
            stats.requests["http", outcome] += 1
            if exc.status == 413:
                stats.rejected["too_large"] += 1
            return _error(exc.status, str(exc), encoding)
        try:
            response = await ingest_export(
                body,
                store=state.store,
                stats=stats,
                encoding=encoding,
                kind=kind,
                project=request.headers.get(PROJECT_HEADER),
                pool=state.decode_pool,
            )
        except DecodeError as exc:
            stats.requests["http", "bad_request"] += 1
            stats.rejected["decode_error"] += 1
            return _error(400, str(exc), encoding)
        except BatchTooLarge as exc:
            stats.requests["http", "too_large"] += 1
            stats.rejected["too_large"] += 1
            return _error(413, str(exc), encoding)
        except (WriteQueueFull, StoreUnavailable) as exc:
            full = isinstance(exc, WriteQueueFull)
            stats.requests["http", "queue_full" if full else "unavailable"] += 1
            stats.rejected["queue_full" if full else "unavailable"] += 1
            return _error(503, str(exc), encoding, retry_after_s=exc.retry_after_s)
        except StoreClosed as exc:
            stats.requests["http", "error"] += 1
            return _error(503, str(exc), encoding, retry_after_s=state.settings.retry_after_seconds)
        except Exception:
            stats.requests["http", "error"] += 1
            log.exception("OTLP/HTTP export failed")
            return _error(500, "the export could not be stored; see the server log", encoding)
        partial = response.HasField("partial_success")
        stats.requests["http", "partial" if partial else "ok"] += 1
        if encoding == "protobuf":
            return Response(response.SerializeToString(), media_type="application/x-protobuf")
        return Response(orjson.dumps(response_json(kind, response)), media_type="application/json")

    endpoint.__name__ = f"otlp_{kind}"
    return endpoint


__all__ = ["PROJECT_HEADER", "make_endpoint"]
