"""Decode OTLP/protobuf export requests (traces, logs) into columnar batches.

Pure functions of bytes: the HTTP and gRPC receivers share them. opentelemetry-proto (upb)
parses; the Python walk over attributes is the cost that matters, so it is kept flat.
A body whose strings are not valid UTF-8 (JavaScript exporters write lone surrogates that way)
is parsed a second time with a lenient schema and the bad bytes become U+FFFD.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import orjson

from ._batch import LogBatch, SpanBatch
from ._errors import DecodeError, WrongSignalError
from ._limits import (
    BODY_KEY,
    MAX_ATTRIBUTE_BYTES,
    MAX_VALUE_DEPTH,
    TRUNCATED_KEY,
    ValueTooDeep,
    cap_value,
    dumps_attributes,
    dumps_items,
    time_in_range,
)

KIND_NAMES = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_NAMES = ("UNSET", "OK", "ERROR")
_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)
_LOGS_ON_TRACES = "this is an OTLP logs body (ExportLogsServiceRequest); post it to /v1/logs"
_TRACES_ON_LOGS = "this is an OTLP traces body (ExportTraceServiceRequest); post it to /v1/traces"


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` message as a plain Python value (bytes become base64 text).

    Raises ``ValueTooDeep`` past ``MAX_VALUE_DEPTH`` nested arrays / key-value lists.
    """
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "array_value":
        if depth >= MAX_VALUE_DEPTH:
            raise ValueTooDeep()
        return [any_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        if depth >= MAX_VALUE_DEPTH:
            raise ValueTooDeep()
        return {kv.key: any_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return None


_SCALARS = frozenset({str, int, float, bool})


def key_values(items: Any) -> dict[str, Any]:
    """A repeated ``KeyValue`` field as a dict (a repeated key keeps its last value)."""
    out: dict[str, Any] = {}
    scalars = _SCALARS
    for kv in items:
        value = kv.value
        # ListFields gives the one set member of the oneof in a single C call (the fast path).
        fields = value.ListFields()
        if not fields:
            out[kv.key] = None
            continue
        item = fields[0][1]
        out[kv.key] = item if item.__class__ in scalars else any_value(value)
    return out


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def resource_fields(
    attributes: dict[str, Any], project: str | None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> tuple[str, str | None, str]:
    """(project, service_name, resource_attributes JSON) for one resource."""
    service = attributes.get("service.name")
    service_name = str(service) if service is not None else None
    if project is None:
        candidate = attributes.get("tracescore.project")
        project = str(candidate) if candidate not in (None, "") else "default"
    return project, service_name, dumps_attributes(attributes, max_attribute_bytes)


def _parse(message_cls: Any, body: bytes, what: str) -> Any:
    message = message_cls()
    try:
        message.ParseFromString(body)
    except Exception as exc:  # upb raises google.protobuf.message.DecodeError
        if what == "traces" and _looks_like_logs(body):
            raise WrongSignalError(_LOGS_ON_TRACES) from exc
        if what == "logs" and _looks_like_traces(body):
            raise WrongSignalError(_TRACES_ON_LOGS) from exc
        if "UTF-8" not in str(exc):
            raise DecodeError(
                f"the body is not a valid OTLP/protobuf {what} request ({exc}); send an "
                "ExportServiceRequest serialized with protobuf, or use application/json"
            ) from exc
        from ._lenient import parse_lenient

        message = parse_lenient(message_cls, body)
    return message


def decode_traces_protobuf(
    body: bytes, *, project: str | None = None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> SpanBatch:
    """Decode an OTLP/protobuf ``ExportTraceServiceRequest`` into a span batch.

    ``project`` (from the request header) overrides the resource attribute
    ``tracescore.project``; without either the project is ``default``. Spans with a missing
    or malformed id, a time past 2^63 − 1 ns or a value nested too deep (``_limits.py``) are
    counted in ``rejected`` and left out; longer strings than ``max_attribute_bytes`` are cut.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = _parse(ExportTraceServiceRequest, body, "traces")
    batch = SpanBatch.empty()
    c = batch.columns
    trace_ids, span_ids, parent_ids = c["trace_id"], c["span_id"], c["parent_span_id"]
    projects, services, names, kinds = c["project"], c["service_name"], c["name"], c["kind"]
    starts, ends, durations = c["start_time_ns"], c["end_time_ns"], c["duration_ms"]
    status_codes, status_messages = c["status_code"], c["status_message"]
    attributes_col, resources_col = c["attributes"], c["resource_attributes"]
    events_col, links_col = c["events"], c["links"]
    scope_names, scope_versions = c["scope_name"], c["scope_version"]
    kind_names, status_names = KIND_NAMES, STATUS_NAMES
    unidentified = 0

    cap = max_attribute_bytes
    for resource_spans in request.resource_spans:
        resource_attrs = _resource_attributes(resource_spans.resource.attributes)
        res_project, service_name, resource_json = resource_fields(resource_attrs, project, cap)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            scope_name = scope.name or None
            scope_version = scope.version or None
            for span in scope_spans.spans:
                trace_id = span.trace_id
                span_id = span.span_id
                parent = span.parent_span_id
                if len(trace_id) != 16 or len(span_id) != 8 or (parent and len(parent) != 8):
                    if not trace_id and not span_id:
                        unidentified += 1
                    batch.reject(
                        f"span {span.name!r}: trace_id must be 16 bytes, span_id and "
                        f"parent_span_id 8 bytes (got {len(trace_id)}, {len(span_id)}, "
                        f"{len(parent)})"
                    )
                    continue
                if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
                    batch.reject(f"span {span.name!r}: trace_id and span_id must not be all zero")
                    continue
                start = span.start_time_unix_nano
                end = span.end_time_unix_nano or None
                if not (time_in_range(start) and time_in_range(end)):
                    batch.reject(
                        f"span {span.name!r}: start/end time is past 2^63-1 ns (year 2262)"
                    )
                    continue
                try:
                    attributes_json, events_json, links_json = _span_json(span, cap)
                except ValueTooDeep as exc:
                    batch.reject(f"span {span.name!r}: {exc}")
                    continue
                trace_ids.append(trace_id.hex())
                span_ids.append(span_id.hex())
                parent_ids.append(parent.hex() if parent else None)
                projects.append(res_project)
                services.append(service_name)
                names.append(span.name)
                kind = span.kind
                kinds.append(kind_names[kind] if 0 <= kind < 6 else "UNSPECIFIED")
                starts.append(start)
                ends.append(end)
                durations.append((end - start) / 1e6 if end is not None else None)
                status = span.status
                code = status.code
                status_codes.append(status_names[code] if 0 <= code < 3 else "UNSET")
                status_messages.append(status.message or None)
                attributes_col.append(attributes_json)
                resources_col.append(resource_json)
                events_col.append(events_json)
                links_col.append(links_json)
                scope_names.append(scope_name)
                scope_versions.append(scope_version)

    if unidentified and not len(batch) and _looks_like_logs(body):
        raise WrongSignalError(_LOGS_ON_TRACES)
    return batch


def _span_json(span: Any, cap: int) -> tuple[str, str, str]:
    """(attributes, events, links) JSON of one span; raises ``ValueTooDeep``."""
    attributes = dumps_attributes(key_values(span.attributes), cap)
    events = dumps_items(
        [
            {
                "name": event.name,
                "time_unix_nano": event.time_unix_nano,
                "attributes": key_values(event.attributes),
            }
            for event in span.events
        ],
        cap,
    ) if span.events else "[]"
    links = dumps_items(
        [
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "attributes": key_values(link.attributes),
            }
            for link in span.links
        ],
        cap,
    ) if span.links else "[]"
    return attributes, events, links


def _resource_attributes(items: Any) -> dict[str, Any]:
    """Resource attributes; a value nested too deep fails the whole request (``DecodeError``)."""
    try:
        return key_values(items)
    except ValueTooDeep as exc:
        raise DecodeError(f"resource attributes: {exc}") from None


def decode_logs_protobuf(
    body: bytes, *, project: str | None = None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> LogBatch:
    """Decode an OTLP/protobuf ``ExportLogsServiceRequest`` into a log batch.

    Records without a trace id are kept (trace_id NULL); records whose ids have the wrong
    length, a time past 2^63 − 1 ns or a value nested too deep are rejected. ``event_name`` is
    the record's ``event_name``, else its ``event.name`` attribute.
    """
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
    )

    request = _parse(ExportLogsServiceRequest, body, "logs")
    batch = LogBatch.empty()
    cap = max_attribute_bytes
    for resource_logs in request.resource_logs:
        resource_attrs = _resource_attributes(resource_logs.resource.attributes)
        res_project, service_name, resource_json = resource_fields(resource_attrs, project, cap)
        for scope_logs in resource_logs.scope_logs:
            scope = scope_logs.scope
            for record in scope_logs.log_records:
                trace_id = record.trace_id
                span_id = record.span_id
                if (trace_id and len(trace_id) != 16) or (span_id and len(span_id) != 8):
                    batch.reject(
                        "log record: trace_id must be 16 bytes and span_id 8 bytes "
                        f"(got {len(trace_id)}, {len(span_id)})"
                    )
                    continue
                if not (
                    time_in_range(record.time_unix_nano)
                    and time_in_range(record.observed_time_unix_nano)
                ):
                    batch.reject("log record: its time is past 2^63-1 ns (year 2262)")
                    continue
                try:
                    attributes = key_values(record.attributes)
                    body_value = any_value(record.body) if record.HasField("body") else None
                except ValueTooDeep as exc:
                    batch.reject(f"log record: {exc}")
                    continue
                event_name = getattr(record, "event_name", "") or attributes.get("event.name")
                append_log(
                    batch,
                    trace_id=trace_id.hex() if trace_id and trace_id != _ZERO_TRACE else None,
                    span_id=span_id.hex() if span_id and span_id != _ZERO_SPAN else None,
                    time_unix_nano=record.time_unix_nano or None,
                    observed_time_unix_nano=record.observed_time_unix_nano or None,
                    severity_number=record.severity_number or None,
                    severity_text=record.severity_text or None,
                    event_name=str(event_name) if event_name else None,
                    body=body_value,
                    attributes=attributes,
                    resource_json=resource_json,
                    scope_name=scope.name or None,
                    scope_version=scope.version or None,
                    project=res_project,
                    service_name=service_name,
                    max_attribute_bytes=cap,
                )
    if batch.rejected and not len(batch) and _looks_like_traces(body):
        raise WrongSignalError(_TRACES_ON_LOGS)
    return batch


def append_log(
    batch: LogBatch,
    *,
    trace_id: str | None,
    span_id: str | None,
    time_unix_nano: int | None,
    observed_time_unix_nano: int | None,
    severity_number: int | None,
    severity_text: str | None,
    event_name: str | None,
    body: Any,
    attributes: dict[str, Any],
    resource_json: str,
    scope_name: str | None,
    scope_version: str | None,
    project: str,
    service_name: str | None,
    max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES,
) -> None:
    """Append one log record; ``log_id`` is a digest of its content so a re-sent record dedupes.

    A body string longer than ``max_attribute_bytes`` is cut, and ``(body)`` is listed in the
    record's ``tracescore.truncated_attributes``.
    """
    body, body_cut = cap_value(body, max_attribute_bytes)
    if body_cut:
        attributes = {**attributes, TRUNCATED_KEY: [BODY_KEY]}
    body_json = _dumps(body) if body is not None else None
    attributes_json = dumps_attributes(attributes, max_attribute_bytes)
    key = orjson.dumps(
        [
            trace_id,
            span_id,
            time_unix_nano,
            observed_time_unix_nano,
            severity_number,
            severity_text,
            event_name,
            body_json,
            attributes_json,
            resource_json,
            scope_name,
            project,
        ]
    )
    c = batch.columns
    c["log_id"].append(hashlib.blake2b(key, digest_size=16).hexdigest())
    c["trace_id"].append(trace_id)
    c["span_id"].append(span_id)
    c["time_unix_nano"].append(time_unix_nano)
    c["observed_time_unix_nano"].append(observed_time_unix_nano)
    c["severity_number"].append(severity_number)
    c["severity_text"].append(severity_text)
    c["event_name"].append(event_name)
    c["body"].append(body_json)
    c["attributes"].append(attributes_json)
    c["resource_attributes"].append(resource_json)
    c["scope_name"].append(scope_name)
    c["scope_version"].append(scope_version)
    c["project"].append(project)
    c["service_name"].append(service_name)


def _looks_like_logs(body: bytes) -> bool:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsServiceRequest,
    )

    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception:
        return False
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if record.time_unix_nano or record.observed_time_unix_nano or record.HasField(
                    "body"
                ):
                    return True
    return False


def _looks_like_traces(body: bytes) -> bool:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except Exception:
        return False
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) == 16 and len(span.span_id) == 8:
                    return True
    return False


__all__ = ["any_value", "decode_logs_protobuf", "decode_traces_protobuf", "key_values"]
