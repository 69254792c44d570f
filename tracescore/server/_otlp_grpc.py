"""OTLP/gRPC receivers (grpcio aio, in the server's event loop): TraceService and LogsService.

Handlers receive the raw request bytes (no generated servicer) so gRPC shares the exact decode
path of OTLP/HTTP, lenient UTF-8 included. gzip is handled by gRPC; the message size limit is
``max_body_bytes``. Queue full → RESOURCE_EXHAUSTED with a RetryInfo detail.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from tracescore.ingest import DecodeError
from tracescore.store import BatchTooLarge, StoreClosed, StoreUnavailable, WriteQueueFull

from ._otlp_common import Signal, ingest_export, status_bytes

log = logging.getLogger(__name__)

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"


def _handler(kind: Signal, state: Any) -> Any:
    import grpc

    settings = state.settings
    keys = tuple(key.encode() for key in settings.api_keys)

    async def export(request: bytes, context: Any) -> bytes:
        stats = state.ingest_stats
        metadata = {key.lower(): value for key, value in context.invocation_metadata() or ()}
        if keys:
            header = metadata.get("authorization", "")
            token = header[7:].strip().encode() if header[:7].lower() == "bearer " else b""
            if not any(hmac.compare_digest(token, key) for key in keys):
                stats.requests["grpc", "unauthorized"] += 1
                await context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "send metadata 'authorization: Bearer <api key>'",
                )
        try:
            response = await ingest_export(
                request,
                store=state.store,
                stats=stats,
                encoding="protobuf",
                kind=kind,
                project=metadata.get("x-tracescore-project"),
                pool=state.decode_pool,
            )
        except DecodeError as exc:
            stats.requests["grpc", "bad_request"] += 1
            stats.rejected["decode_error"] += 1
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except BatchTooLarge as exc:
            # not retryable as it is: INVALID_ARGUMENT, so exporters do not resend it
            stats.requests["grpc", "too_large"] += 1
            stats.rejected["too_large"] += 1
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except StoreUnavailable as exc:
            stats.requests["grpc", "unavailable"] += 1
            stats.rejected["unavailable"] += 1
            details = status_bytes(14, str(exc), retry_after_s=exc.retry_after_s)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                str(exc),
                trailing_metadata=(("grpc-status-details-bin", details),),
            )
        except (WriteQueueFull, StoreClosed) as exc:
            stats.requests["grpc", "queue_full"] += 1
            stats.rejected["queue_full"] += 1
            retry = getattr(exc, "retry_after_s", settings.retry_after_seconds)
            details = status_bytes(8, str(exc), retry_after_s=retry)
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                str(exc),
                trailing_metadata=(("grpc-status-details-bin", details),),
            )
        except Exception:
            stats.requests["grpc", "error"] += 1
            log.exception("OTLP/gRPC export failed")
            await context.abort(grpc.StatusCode.INTERNAL, "the export could not be stored")
        stats.requests["grpc", "partial" if response.HasField("partial_success") else "ok"] += 1
        data: bytes = response.SerializeToString()
        return data

    return grpc.unary_unary_rpc_method_handler(export)


async def start_grpc(state: Any) -> tuple[Any, int]:
    """Start the gRPC server on ``settings.host:grpc_port``; return (server, bound port)."""
    import grpc

    settings = state.settings
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", settings.max_body_bytes),
            ("grpc.so_reuseport", 0),
        ]
    )
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                TRACE_SERVICE, {"Export": _handler("traces", state)}
            ),
            grpc.method_handlers_generic_handler(LOGS_SERVICE, {"Export": _handler("logs", state)}),
        )
    )
    host = settings.host
    address = f"[{host}]:{settings.grpc_port}" if ":" in host else f"{host}:{settings.grpc_port}"
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(f"cannot listen for OTLP/gRPC on {address}: {exc}") from exc
    await server.start()
    log.info("OTLP/gRPC listening on %s:%d", host, port)
    return server, port


__all__ = ["LOGS_SERVICE", "TRACE_SERVICE", "start_grpc"]
