"""What the HTTP and gRPC receivers share: decode + write one export, and the response bodies.

``ingest_export`` is the whole receive path after transport concerns: decode the body, write the
batch (awaiting its commit), count it, and return the OTLP response message. Transports map the
exceptions to their status codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from tracescore.ingest import DecodePool, decode_request

from ._ingest_stats import IngestStats

if TYPE_CHECKING:
    from tracescore.store import Store

Signal = Literal["traces", "logs"]


async def ingest_export(
    body: bytes,
    *,
    store: Store,
    stats: IngestStats,
    encoding: Literal["protobuf", "json"],
    kind: Signal,
    project: str | None,
    pool: DecodePool | None = None,
) -> Any:
    """Decode and commit one export request; return its Export*ServiceResponse message.

    Large bodies are decoded off the event loop: in ``pool``'s worker processes (traces) or
    a thread. Raises ``DecodeError`` (bad body), ``BatchTooLarge`` (more rows or bytes than
    the write queue holds), ``WriteQueueFull`` / ``StoreClosed`` / ``StoreUnavailable`` (try
    again later).
    """
    batch: Any
    if pool is not None:
        batch = await pool.decode(body, encoding=encoding, kind=kind, project=project or None)
    else:
        batch = decode_request(body, encoding=encoding, kind=kind, project=project or None)
    if len(batch):
        if kind == "traces":
            await store.write_spans(batch)
        else:
            await store.write_logs(batch)
        stats.count_rows(kind, batch.project_counts())
    if batch.rejected:
        stats.rejected["invalid_id" if kind == "traces" else "invalid_record"] += batch.rejected
    return export_response(kind, batch.rejected, batch.error_message)


def export_response(kind: Signal, rejected: int, error_message: str) -> Any:
    """The OTLP response message, with ``partial_success`` when something was rejected."""
    if kind == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = error_message
        return response
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    logs_response = ExportLogsServiceResponse()
    if rejected:
        logs_response.partial_success.rejected_log_records = rejected
        logs_response.partial_success.error_message = error_message
    return logs_response


def response_json(kind: Signal, response: Any) -> dict[str, Any]:
    """The OTLP/JSON form of an export response (int64 as a string, as proto3 JSON says)."""
    if not response.HasField("partial_success"):
        return {}
    partial = response.partial_success
    count_key = "rejectedSpans" if kind == "traces" else "rejectedLogRecords"
    count = partial.rejected_spans if kind == "traces" else partial.rejected_log_records
    return {"partialSuccess": {count_key: str(count), "errorMessage": partial.error_message}}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def status_bytes(code: int, message: str, *, retry_after_s: float | None = None) -> bytes:
    """A serialized ``google.rpc.Status`` (with a ``RetryInfo`` detail when given).

    Written by hand (three fields) so the server needs no googleapis-common-protos.
    """
    out = _varint(1 << 3) + _varint(code) if code else b""
    if message:
        out += _field(2, message.encode("utf-8"))
    if retry_after_s is not None:
        seconds = int(retry_after_s)
        nanos = int(round((retry_after_s - seconds) * 1e9))
        duration = (_varint(1 << 3) + _varint(seconds) if seconds else b"") + (
            _varint(2 << 3) + _varint(nanos) if nanos else b""
        )
        retry_info = _field(1, duration)
        any_detail = _field(1, b"type.googleapis.com/google.rpc.RetryInfo") + _field(
            2, retry_info
        )
        out += _field(3, any_detail)
    return out


__all__ = ["export_response", "ingest_export", "response_json", "status_bytes"]
