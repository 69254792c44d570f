"""Builders of OTLP request bodies for ingest and server tests (protobuf messages, JSON dicts)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _first_traces_body(folder: Path) -> Path | None:
    """The first captured traces request of a fixture folder (``NNNN-traces.b64``; a client
    that also exports logs may have sent a logs request first, as OpenLIT's do)."""
    return next(iter(sorted(folder.glob("[0-9][0-9][0-9][0-9]-traces.b64"))), None)


FIXTURE_DIRS = sorted(p.name for p in FIXTURES.iterdir()
                      if p.is_dir() and _first_traces_body(p) is not None)


def fixture_protobuf(name: str) -> bytes:
    """The captured protobuf traces request body of one fixture client (its first); for a
    client that sent OTLP/JSON (its ``.meta.json`` says so), the same request re-encoded as
    protobuf from what it sent."""
    body = _first_traces_body(FIXTURES / name)
    assert body is not None, f"{name} holds no captured traces request"
    meta = json.loads(body.with_name(body.name.replace(".b64", ".meta.json")).read_text())
    sent = base64.b64decode(body.read_text())
    if "json" not in str(meta.get("content_type", "")):
        return sent
    return _protobuf_of_json(json.loads(sent))


def _protobuf_of_json(request: dict[str, Any]) -> bytes:
    """An OTLP/JSON traces request as protobuf bytes (OTLP/JSON writes trace and span ids as
    hex, where protobuf's JSON mapping expects base64: converted before parsing)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode() if hex_id else hex_id

    for resource_spans in request.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for record in (span, *span.get("links", [])):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in record:
                            record[key] = b64(record[key])
    return json_format.ParseDict(request, ExportTraceServiceRequest()).SerializeToString()


def fixture_json(name: str) -> bytes:
    """The same request in the OTLP/JSON mapping."""
    body = _first_traces_body(FIXTURES / name)
    assert body is not None, f"{name} holds no captured traces request"
    return body.with_name(body.name.replace(".b64", ".otlp.json")).read_bytes()


def traces_request(
    spans: int = 3,
    *,
    trace_id: bytes | None = None,
    service: str = "svc",
    resource_project: str | None = None,
    attribute_size: int = 16,
) -> Any:
    """An ``ExportTraceServiceRequest`` with ``spans`` spans (a root and its children)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    attr = resource_spans.resource.attributes.add()
    attr.key, attr.value.string_value = "service.name", service
    if resource_project:
        attr = resource_spans.resource.attributes.add()
        attr.key, attr.value.string_value = "tracescore.project", resource_project
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tests"
    trace_id = trace_id or os.urandom(16)
    root_id = os.urandom(8)
    for index in range(spans):
        span = scope_spans.spans.add()
        span.trace_id = trace_id
        span.span_id = root_id if index == 0 else os.urandom(8)
        if index:
            span.parent_span_id = root_id
        span.name = f"span-{index}"
        span.kind = 1
        span.start_time_unix_nano = 1_700_000_000_000_000_000 + index * 1000
        span.end_time_unix_nano = 1_700_000_000_500_000_000 + index * 1000
        kv = span.attributes.add()
        kv.key, kv.value.string_value = "payload", "x" * attribute_size
        kv = span.attributes.add()
        kv.key, kv.value.int_value = "index", index
    return request


def logs_request(
    trace_id: bytes, span_id: bytes, *, event_name: str = "gen_ai.user.message"
) -> Any:
    """An ``ExportLogsServiceRequest`` with one GenAI event record tied to a span."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    attr = resource_logs.resource.attributes.add()
    attr.key, attr.value.string_value = "service.name", "svc"
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = "tests"
    record = scope_logs.log_records.add()
    record.time_unix_nano = 1_700_000_000_100_000_000
    record.observed_time_unix_nano = 1_700_000_000_200_000_000
    record.severity_number = 9
    record.severity_text = "INFO"
    record.trace_id = trace_id
    record.span_id = span_id
    record.event_name = event_name
    kv = record.body.kvlist_value.values.add()
    kv.key, kv.value.string_value = "content", "What is the weather in Paris?"
    kv = record.attributes.add()
    kv.key, kv.value.string_value = "gen_ai.system", "openai"
    return request


def span_json(trace_hex: str, span_hex: str, **extra: Any) -> dict[str, Any]:
    """One OTLP/JSON span object."""
    return {
        "traceId": trace_hex,
        "spanId": span_hex,
        "name": extra.pop("name", "json-span"),
        "kind": extra.pop("kind", 2),
        "startTimeUnixNano": extra.pop("start", "1700000000000000000"),
        "endTimeUnixNano": extra.pop("end", "1700000001000000000"),
        **extra,
    }


def traces_json(*spans: dict[str, Any], service: str = "svc") -> dict[str, Any]:
    """An OTLP/JSON traces request with the given span objects."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": list(spans)}],
            }
        ]
    }
