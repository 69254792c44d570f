"""One span of a trace, read leniently from a span-row dict (the bottom of the traces room).

``Span.from_row`` accepts the span-row dicts of the store and of ``span_dicts_from_otlp``, and is
lenient about their shape (JSON strings for attributes and events, datetimes for times, camelCase
keys, OTLP/JSON key/value lists). Adapters and trace assembly both import from here; this module
imports nothing of the room but ``_values``, so there is no import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._values import as_dict, as_list, duration_ms, parse_json, to_ns

_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
_STATUS = ("UNSET", "OK", "ERROR")
_KIND_SET = frozenset(_KINDS)
_STATUS_SET = frozenset(_STATUS)


class Span:
    """One span of a trace, with its children (ordered by start time) and joined log records."""

    __slots__ = (
        "attributes",
        "children",
        "end_time_ns",
        "events",
        "kind",
        "links",
        "logs",
        "name",
        "parent",
        "parent_span_id",
        "project",
        "resource_attributes",
        "scope_name",
        "scope_version",
        "service_name",
        "span_id",
        "start_time_ns",
        "status_code",
        "status_message",
        "trace_id",
    )

    def __init__(
        self,
        *,
        trace_id: str,
        span_id: str,
        parent_span_id: str | None,
        name: str,
        kind: str = "INTERNAL",
        start_time_ns: int = 0,
        end_time_ns: int | None = None,
        status_code: str = "UNSET",
        status_message: str | None = None,
        attributes: dict[str, Any] | None = None,
        resource_attributes: dict[str, Any] | None = None,
        events: list[dict[str, Any]] | None = None,
        links: list[dict[str, Any]] | None = None,
        scope_name: str | None = None,
        scope_version: str | None = None,
        service_name: str | None = None,
        project: str | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_span_id = parent_span_id
        self.name = name
        self.kind = kind
        self.start_time_ns = start_time_ns
        self.end_time_ns = end_time_ns
        self.status_code = status_code
        self.status_message = status_message
        self.attributes: dict[str, Any] = attributes if attributes is not None else {}
        self.resource_attributes: dict[str, Any] = resource_attributes or {}
        self.events: list[dict[str, Any]] = events or []
        self.links: list[dict[str, Any]] = links or []
        self.scope_name = scope_name
        self.scope_version = scope_version
        self.service_name = service_name
        self.project = project
        self.logs: list[dict[str, Any]] = []
        self.children: list[Span] = []
        self.parent: Span | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Span:
        """Build a span from a span-row dict (store, ingest, or camelCase OTLP/JSON-like)."""
        if type(row) is dict and "start_time_ns" in row and "span_id" in row:
            fast = _from_standard_row(cls, row)
            if fast is not None:
                return fast
        get = row.get
        attributes = get("attributes")
        if type(attributes) is not dict:
            attributes = _attributes_of(attributes)
        resource = get("resource_attributes")
        if resource is None:
            resource = get("resource")
        if type(resource) is not dict:
            resource = _attributes_of(resource)
        events = get("events")
        if events:
            events = [_event_of(e) for e in as_list(events)]
        links = get("links")
        if links:
            links = [as_dict(link) for link in as_list(links)]
        code = get("status_code")
        if type(code) is str and code in _STATUS_SET:
            status_code, status_message = code, get("status_message")
        else:
            status_code, status_message = _status_of(row)
        start = get("start_time_ns")
        if type(start) is not int:
            start = to_ns(_first(row, "start_time_ns", "start_time", "startTimeUnixNano", "start"))
        end = get("end_time_ns")
        if type(end) is not int:
            end = to_ns(_first(row, "end_time_ns", "end_time", "endTimeUnixNano", "end"))
        scope_name = get("scope_name")
        scope_version = get("scope_version")
        scope = get("scope")
        if isinstance(scope, dict):
            scope_name = scope_name or scope.get("name")
            scope_version = scope_version or scope.get("version")
        trace_id = get("trace_id")
        if trace_id is None:
            trace_id = get("traceId")
        span_id = get("span_id")
        if span_id is None:
            span_id = get("spanId")
        parent = get("parent_span_id")
        if parent is None:
            parent = get("parentSpanId")
        kind = get("kind")
        span = cls.__new__(cls)
        span.trace_id = str(trace_id or "")
        span.span_id = str(span_id or "")
        span.parent_span_id = str(parent) if parent else None
        span.name = str(get("name") or "")
        span.kind = kind if type(kind) is str and kind in _KIND_SET else _kind_of(kind)
        span.start_time_ns = start or 0
        span.end_time_ns = end
        span.status_code = status_code
        span.status_message = status_message
        span.attributes = attributes
        span.resource_attributes = resource
        span.events = events or []
        span.links = links or []
        span.scope_name = scope_name
        span.scope_version = scope_version
        span.service_name = get("service_name") or resource.get("service.name")
        span.project = get("project")
        span.logs = []
        span.children = []
        span.parent = None
        return span

    @property
    def duration_ms(self) -> float | None:
        """Span duration in milliseconds; None while the span has not ended."""
        return duration_ms(self.start_time_ns, self.end_time_ns)

    @property
    def ended(self) -> bool:
        """True once the span has an end time."""
        return self.end_time_ns is not None and self.end_time_ns > 0

    def __repr__(self) -> str:
        return f"Span({self.name!r}, span_id={self.span_id!r}, children={len(self.children)})"


def _from_standard_row(cls: type[Span], row: dict[str, Any]) -> Span | None:
    """The common case, a row as ingest and the store write it; None when anything is off."""
    attributes = row.get("attributes")
    resource = row.get("resource_attributes")
    start = row["start_time_ns"]
    end = row.get("end_time_ns")
    code = row.get("status_code")
    kind = row.get("kind")
    if (
        type(attributes) is not dict
        or type(resource) is not dict
        or type(start) is not int
        or (end is not None and type(end) is not int)
        or type(code) is not str
        or code not in _STATUS_SET
        or type(kind) is not str
        or kind not in _KIND_SET
    ):
        return None
    events = row.get("events")
    links = row.get("links")
    if events:
        if type(events) is not list:
            return None
        events = [_event_of(e) for e in events]
    if links:
        if type(links) is not list:
            return None
        links = [as_dict(link) for link in links]
    span = cls.__new__(cls)
    span.trace_id = str(row.get("trace_id") or "")
    span.span_id = str(row["span_id"] or "")
    parent = row.get("parent_span_id")
    span.parent_span_id = str(parent) if parent else None
    span.name = str(row.get("name") or "")
    span.kind = kind
    span.start_time_ns = start
    span.end_time_ns = end
    span.status_code = code
    span.status_message = row.get("status_message")
    span.attributes = attributes
    span.resource_attributes = resource
    span.events = events or []
    span.links = links or []
    span.scope_name = row.get("scope_name")
    span.scope_version = row.get("scope_version")
    span.service_name = row.get("service_name") or resource.get("service.name")
    span.project = row.get("project")
    span.logs = []
    span.children = []
    span.parent = None
    return span


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None:
            return value
    return None


def _kind_of(value: Any) -> str:
    if isinstance(value, int) and 0 <= value < len(_KINDS):
        return _KINDS[value]
    if isinstance(value, str) and value:
        upper = value.upper().removeprefix("SPAN_KIND_")
        return upper if upper in _KINDS else "INTERNAL"
    return "INTERNAL"


def _status_of(row: Mapping[str, Any]) -> tuple[str, str | None]:
    code = row.get("status_code")
    message = row.get("status_message")
    status = row.get("status")
    if code is None and isinstance(status, dict):
        code = status.get("code")
        message = message or status.get("message")
    if isinstance(code, int):
        return (_STATUS[code] if 0 <= code < len(_STATUS) else "UNSET"), message
    if isinstance(code, str) and code:
        upper = code.upper().removeprefix("STATUS_CODE_")
        return (upper if upper in _STATUS else "UNSET"), message
    return "UNSET", message


def _attributes_of(value: Any) -> dict[str, Any]:
    """Attributes from a JSON string, or from an OTLP/JSON key/value list."""
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        return parsed
    if isinstance(parsed, list):
        out: dict[str, Any] = {}
        for item in parsed:
            if isinstance(item, dict) and "key" in item:
                out[str(item["key"])] = _any_value(item.get("value"))
        return out
    return {}


def _any_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _attributes_of((value["kvlistValue"] or {}).get("values", []))
    return value


def _event_of(value: Any) -> dict[str, Any]:
    event = as_dict(value)
    attributes = event.get("attributes")
    if not isinstance(attributes, dict):
        attributes = _attributes_of(attributes)
    return {
        "name": event.get("name") or "",
        "time_unix_nano": to_ns(event.get("time_unix_nano", event.get("timeUnixNano"))),
        "attributes": attributes,
    }


__all__ = ["Span"]
