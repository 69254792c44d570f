"""Decode OTLP/JSON export requests (traces, logs) into the same columnar batches.

The OTLP/JSON mapping: trace and span ids are hex strings, 64-bit integers arrive as strings or
numbers, enums as integers or names, and field names in lowerCamelCase or the proto's
snake_case. A span or record with bad ids or bad field types is rejected on its own; a body that
is not an OTLP JSON object fails as a whole.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import orjson

from ._batch import LogBatch, SpanBatch
from ._errors import DecodeError, WrongSignalError
from ._limits import (
    MAX_ATTRIBUTE_BYTES,
    MAX_VALUE_DEPTH,
    ValueTooDeep,
    dumps_attributes,
    dumps_items,
    time_in_range,
)
from ._protobuf import KIND_NAMES, STATUS_NAMES, append_log, resource_fields
from ._utf8 import load_lenient

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT64_MAX = 2**64 - 1
_DOUBLE_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class _Invalid(ValueError):
    """One span or record is malformed (it is rejected, the rest of the body is kept)."""


def _get(obj: dict[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    value = obj.get(camel)
    if value is None:
        value = obj.get(snake, default)
    return default if value is None else value


def _int(value: Any, what: str, *, unsigned: bool = False) -> int:
    if isinstance(value, bool):
        raise _Invalid(f"{what} must be an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            raise _Invalid(f"{what} must be an integer, got {value[:40]!r}") from None
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        raise _Invalid(f"{what} must be an integer")
    low, high = (0, _UINT64_MAX) if unsigned else (_INT64_MIN, _INT64_MAX)
    if not low <= number <= high:
        raise _Invalid(f"{what} is out of the 64-bit range")
    return number


def _double(value: Any) -> float:
    if isinstance(value, bool):
        raise _Invalid("doubleValue must be a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _DOUBLE_WORDS:
            return _DOUBLE_WORDS[value]
        try:
            return float(value)
        except ValueError:
            pass
    raise _Invalid("doubleValue must be a number")


def _id(value: Any, size: int, what: str) -> bytes:
    """A hex id (the OTLP/JSON rule); base64 is accepted too, as some exporters send it."""
    if value in (None, ""):
        return b""
    if not isinstance(value, str):
        raise _Invalid(f"{what} must be a hex string")
    if len(value) == size * 2:
        try:
            return bytes.fromhex(value)
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) == size:
        return raw
    raise _Invalid(f"{what} must be {size * 2} hex characters, got {len(value)}")


def _enum(value: Any, names: tuple[str, ...], prefix: str, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and not value.lstrip("-").isdigit():
        name = value.removeprefix(prefix)
        if name in names:
            return names.index(name)
        raise _Invalid(f"{what} {value!r} is not a known value")
    return _int(value, what)


def any_value_json(value: Any, depth: int = 0) -> Any:
    """An OTLP/JSON ``AnyValue`` object as a plain Python value (``ValueTooDeep`` past
    ``MAX_VALUE_DEPTH`` nested arrays / key-value lists, as for protobuf)."""
    if not isinstance(value, dict):
        raise _Invalid("an attribute value must be an AnyValue object")
    for key, item in value.items():
        if key in ("stringValue", "string_value"):
            if not isinstance(item, str):
                raise _Invalid("stringValue must be a string")
            return item
        if key in ("intValue", "int_value"):
            return _int(item, "intValue")
        if key in ("doubleValue", "double_value"):
            return _double(item)
        if key in ("boolValue", "bool_value"):
            if not isinstance(item, bool):
                raise _Invalid("boolValue must be true or false")
            return item
        if key in ("arrayValue", "array_value"):
            if depth >= MAX_VALUE_DEPTH:
                raise ValueTooDeep()
            if not isinstance(item or {}, dict):
                raise _Invalid("arrayValue must be an object with values")
            return [any_value_json(v, depth + 1) for v in (item or {}).get("values") or []]
        if key in ("kvlistValue", "kvlist_value"):
            if depth >= MAX_VALUE_DEPTH:
                raise ValueTooDeep()
            if not isinstance(item or {}, dict):
                raise _Invalid("kvlistValue must be an object with values")
            return key_values_json((item or {}).get("values"), depth + 1)
        if key in ("bytesValue", "bytes_value"):
            if not isinstance(item, str):
                raise _Invalid("bytesValue must be base64 text")
            return item
    return None


def key_values_json(items: Any, depth: int = 0) -> dict[str, Any]:
    """A JSON list of ``{"key", "value"}`` objects as a dict."""
    if not items:
        return {}
    if not isinstance(items, list):
        raise _Invalid("attributes must be a list of {key, value} objects")
    out: dict[str, Any] = {}
    for kv in items:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise _Invalid("each attribute must be an object with a string key")
        value = kv.get("value")
        out[kv["key"]] = any_value_json(value, depth) if value is not None else None
    return out


def _load(body: bytes, what: str) -> dict[str, Any]:
    if not body.strip():
        return {}
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        # Bad UTF-8 bytes or lone surrogate escapes: U+FFFD in their place, as for protobuf.
        document = load_lenient(body)
        if document is None:
            raise DecodeError(
                f"the body is not valid JSON ({exc}); send an OTLP/JSON {what} request"
            ) from exc
    if not isinstance(document, dict):
        raise DecodeError(f"the body must be a JSON object (an OTLP/JSON {what} request)")
    return document


def _list(obj: dict[str, Any], camel: str, snake: str) -> list[Any]:
    value = _get(obj, camel, snake, [])
    if not isinstance(value, list):
        raise DecodeError(f"{camel} must be a list")
    return value


def _resource(
    resource_item: dict[str, Any], project: str | None, cap: int
) -> tuple[str, str | None, str]:
    resource = resource_item.get("resource") or {}
    if not isinstance(resource, dict):
        raise DecodeError("resource must be an object")
    try:
        attributes = key_values_json(resource.get("attributes"))
    except (_Invalid, ValueTooDeep) as exc:
        raise DecodeError(f"resource attributes: {exc}") from None
    return resource_fields(attributes, project, cap)


def _scope(scope_item: dict[str, Any]) -> tuple[str | None, str | None]:
    scope = scope_item.get("scope") or {}
    if not isinstance(scope, dict):
        raise DecodeError("scope must be an object")
    return scope.get("name") or None, scope.get("version") or None


def decode_traces_json(
    body: bytes, *, project: str | None = None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> SpanBatch:
    """Decode an OTLP/JSON ``ExportTraceServiceRequest`` into a span batch (the limits of
    ``_limits.py`` apply as for protobuf)."""
    document = _load(body, "traces")
    if "resourceLogs" in document or "resource_logs" in document:
        raise WrongSignalError("this is an OTLP logs body (resourceLogs); post it to /v1/logs")
    batch = SpanBatch.empty()
    c = batch.columns
    for resource_item in _list(document, "resourceSpans", "resource_spans"):
        if not isinstance(resource_item, dict):
            raise DecodeError("each resourceSpans item must be an object")
        res_project, service_name, resource_json = _resource(
            resource_item, project, max_attribute_bytes
        )
        for scope_item in _list(resource_item, "scopeSpans", "scope_spans"):
            if not isinstance(scope_item, dict):
                raise DecodeError("each scopeSpans item must be an object")
            scope_name, scope_version = _scope(scope_item)
            for span in _list(scope_item, "spans", "spans"):
                try:
                    row = _span_row(span, max_attribute_bytes)
                except (_Invalid, ValueTooDeep) as exc:
                    name = span.get("name") if isinstance(span, dict) else None
                    batch.reject(f"span {name!r}: {exc}")
                    continue
                for key, value in row.items():
                    c[key].append(value)
                c["project"].append(res_project)
                c["service_name"].append(service_name)
                c["resource_attributes"].append(resource_json)
                c["scope_name"].append(scope_name)
                c["scope_version"].append(scope_version)
    return batch


def _span_row(span: Any, cap: int) -> dict[str, Any]:
    if not isinstance(span, dict):
        raise _Invalid("a span must be an object")
    trace_id = _id(_get(span, "traceId", "trace_id"), 16, "traceId")
    span_id = _id(_get(span, "spanId", "span_id"), 8, "spanId")
    parent = _id(_get(span, "parentSpanId", "parent_span_id"), 8, "parentSpanId")
    if not trace_id or not span_id:
        raise _Invalid("traceId and spanId are required")
    if not any(trace_id) or not any(span_id):
        raise _Invalid("traceId and spanId must not be all zero")
    start = _int(_get(span, "startTimeUnixNano", "start_time_unix_nano", 0), "startTimeUnixNano",
                 unsigned=True)
    end = _int(_get(span, "endTimeUnixNano", "end_time_unix_nano", 0), "endTimeUnixNano",
               unsigned=True) or None
    if not (time_in_range(start) and time_in_range(end)):
        raise _Invalid("start/end time is past 2^63-1 ns (year 2262)")
    kind = _enum(span.get("kind"), KIND_NAMES, "SPAN_KIND_", "kind")
    status = span.get("status") or {}
    if not isinstance(status, dict):
        raise _Invalid("status must be an object")
    code = _enum(status.get("code"), STATUS_NAMES, "STATUS_CODE_", "status.code")
    name = span.get("name", "")
    if not isinstance(name, str):
        raise _Invalid("name must be a string")
    events = []
    for event in span.get("events") or []:
        if not isinstance(event, dict):
            raise _Invalid("each event must be an object")
        events.append(
            {
                "name": event.get("name", ""),
                "time_unix_nano": _int(
                    _get(event, "timeUnixNano", "time_unix_nano", 0), "timeUnixNano",
                    unsigned=True,
                ),
                "attributes": key_values_json(event.get("attributes")),
            }
        )
    links = []
    for link in span.get("links") or []:
        if not isinstance(link, dict):
            raise _Invalid("each link must be an object")
        links.append(
            {
                "trace_id": _id(_get(link, "traceId", "trace_id"), 16, "link traceId").hex(),
                "span_id": _id(_get(link, "spanId", "span_id"), 8, "link spanId").hex(),
                "attributes": key_values_json(link.get("attributes")),
            }
        )
    return {
        "trace_id": trace_id.hex(),
        "span_id": span_id.hex(),
        "parent_span_id": parent.hex() if parent else None,
        "name": name,
        "kind": KIND_NAMES[kind] if 0 <= kind < 6 else "UNSPECIFIED",
        "start_time_ns": start,
        "end_time_ns": end,
        "duration_ms": (end - start) / 1e6 if end is not None else None,
        "status_code": STATUS_NAMES[code] if 0 <= code < 3 else "UNSET",
        "status_message": status.get("message") or None,
        "attributes": dumps_attributes(key_values_json(span.get("attributes")), cap),
        "events": dumps_items(events, cap) if events else "[]",
        "links": dumps_items(links, cap) if links else "[]",
    }


def decode_logs_json(
    body: bytes, *, project: str | None = None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> LogBatch:
    """Decode an OTLP/JSON ``ExportLogsServiceRequest`` into a log batch."""
    document = _load(body, "logs")
    if "resourceSpans" in document or "resource_spans" in document:
        raise WrongSignalError("this is an OTLP traces body (resourceSpans); post it to /v1/traces")
    batch = LogBatch.empty()
    for resource_item in _list(document, "resourceLogs", "resource_logs"):
        if not isinstance(resource_item, dict):
            raise DecodeError("each resourceLogs item must be an object")
        res_project, service_name, resource_json = _resource(
            resource_item, project, max_attribute_bytes
        )
        for scope_item in _list(resource_item, "scopeLogs", "scope_logs"):
            if not isinstance(scope_item, dict):
                raise DecodeError("each scopeLogs item must be an object")
            scope_name, scope_version = _scope(scope_item)
            for record in _list(scope_item, "logRecords", "log_records"):
                try:
                    fields = _log_fields(record)
                except (_Invalid, ValueTooDeep) as exc:
                    batch.reject(f"log record: {exc}")
                    continue
                append_log(
                    batch,
                    **fields,
                    resource_json=resource_json,
                    scope_name=scope_name,
                    scope_version=scope_version,
                    project=res_project,
                    service_name=service_name,
                    max_attribute_bytes=max_attribute_bytes,
                )
    return batch


def _log_fields(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise _Invalid("a log record must be an object")
    trace_id = _id(_get(record, "traceId", "trace_id"), 16, "traceId")
    span_id = _id(_get(record, "spanId", "span_id"), 8, "spanId")
    attributes = key_values_json(record.get("attributes"))
    event_name = _get(record, "eventName", "event_name") or attributes.get("event.name")
    body = record.get("body")
    time_ns = _int(_get(record, "timeUnixNano", "time_unix_nano", 0), "timeUnixNano",
                   unsigned=True) or None
    observed_ns = _int(_get(record, "observedTimeUnixNano", "observed_time_unix_nano", 0),
                       "observedTimeUnixNano", unsigned=True) or None
    if not (time_in_range(time_ns) and time_in_range(observed_ns)):
        raise _Invalid("its time is past 2^63-1 ns (year 2262)")
    severity_text = _get(record, "severityText", "severity_text")
    return {
        "trace_id": trace_id.hex() if any(trace_id) else None,
        "span_id": span_id.hex() if any(span_id) else None,
        "time_unix_nano": time_ns,
        "observed_time_unix_nano": observed_ns,
        "severity_number": _severity(_get(record, "severityNumber", "severity_number")),
        "severity_text": str(severity_text) if severity_text else None,
        "event_name": str(event_name) if event_name else None,
        "body": any_value_json(body) if body is not None else None,
        "attributes": attributes,
    }


def _severity(value: Any) -> int | None:
    if isinstance(value, str) and not value.lstrip("-").isdigit():
        from opentelemetry.proto.logs.v1 import logs_pb2

        try:
            return int(logs_pb2.SeverityNumber.Value(value)) or None
        except ValueError:
            raise _Invalid(f"severityNumber {value!r} is not a known value") from None
    if value is None:
        return None
    return _int(value, "severityNumber") or None


__all__ = ["any_value_json", "decode_logs_json", "decode_traces_json", "key_values_json"]
