"""The OTLP traces schema cut down to what the store keeps, for the columnar decoder.

ptars builds one Arrow array per field of the schema it is given: the full OTLP schema costs
~0.4 ms per call before a byte is read, and every unused field (trace state, dropped counts,
flags, schema URLs, scope attributes, entity refs) is still copied out. This is a copy of the
OTLP descriptors (same field numbers and wire types, so the same bytes parse) with only the
fields the store keeps; fields left out are skipped as unknown fields. ``array_value`` and
``kvlist_value`` are declared ``bytes`` (the same length-delimited wire type): they stay
serialized, and the few there are are parsed by upb and converted by the reference decoder's
``any_value``.
"""

from __future__ import annotations

import functools
from typing import Any

_KEEP = {
    "ExportTraceServiceRequest": {"resource_spans"},
    "ResourceSpans": {"resource", "scope_spans"},
    "Resource": {"attributes"},
    "ScopeSpans": {"scope", "spans"},
    "InstrumentationScope": {"name", "version"},
    "Span": {"trace_id", "span_id", "parent_span_id", "name", "kind", "start_time_unix_nano",
             "end_time_unix_nano", "attributes", "events", "links", "status"},
    "Event": {"time_unix_nano", "name", "attributes"},
    "Link": {"trace_id", "span_id", "attributes"},
    "Status": {"message", "code"},
    "KeyValue": {"key", "value"},
    "AnyValue": {"string_value", "bool_value", "int_value", "double_value", "array_value",
                 "kvlist_value", "bytes_value", "string_value_strindex"},
}
"""Fields kept, by message name (messages not listed keep all their fields)."""

_SERIALIZED = {"array_value", "kvlist_value"}


@functools.cache
def request_descriptor() -> Any:
    """The pruned ``ExportTraceServiceRequest`` descriptor (in a private descriptor pool)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from ._descriptors import edited_pool

    root = ExportTraceServiceRequest.DESCRIPTOR
    return edited_pool(root.file, _prune).FindMessageTypeByName(root.full_name)


def _prune(message: Any) -> None:
    from google.protobuf import descriptor_pb2

    keep = _KEEP.get(message.name)
    if keep is not None:
        fields = [field for field in message.field if field.name in keep]
        del message.field[:]
        message.field.extend(fields)
    for field in message.field:
        if message.name == "AnyValue" and field.name in _SERIALIZED:
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            field.ClearField("type_name")
    for nested in message.nested_type:
        _prune(nested)


__all__ = ["request_descriptor"]
