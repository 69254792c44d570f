"""Decode large OTLP/protobuf trace bodies to the store's Arrow table without message objects.

The reference decoder (``_protobuf.py``) reaches every attribute through upb message objects
(~1 µs each, holding the GIL): most of the cost of a large body. Here ``ptars`` (Rust) parses
the serialized request straight into Arrow arrays; ids, times, names and the other scalar
columns are computed on those arrays, and only the attribute dicts are built in Python, from
bulk-converted keys and values, then serialized by the same ``dumps_attributes`` the reference
uses (so key order, a repeated key, ``max_attribute_bytes`` and JSON formatting are its own).
The few arrays, key-value lists and bytes values are parsed again by upb and converted by the
reference ``any_value``. The table equals what ``arrow_span_table`` builds from the reference
decoder's batch (``tests/ingest/test_columnar.py`` compares them on every captured fixture).

A body the reference decoder would treat specially returns ``None`` and goes to it instead: a
span it would reject (bad or all-zero ids, a time past 2^63 − 1 ns, a value nested too deep),
invalid UTF-8 (U+FFFD needs its lenient parse), a body that is not an OTLP traces request, no
spans at all, or ``ptars`` not installed.
"""

from __future__ import annotations

import base64
import functools
import itertools
from collections import Counter
from typing import Any

import orjson

from ._limits import MAX_ATTRIBUTE_BYTES, MAX_TIME_UNIX_NANO, dumps_attributes, dumps_items
from ._protobuf import KIND_NAMES, STATUS_NAMES, any_value, resource_fields

_CHUNK_SPANS = 512
"""Spans whose attribute dicts are built in one go (about a millisecond of holding the GIL)."""


class _Unsupported(Exception):
    """The body needs the reference decoder (see the module docstring)."""


@functools.cache
def _handler() -> Any:
    """The ptars handler for the pruned ``ExportTraceServiceRequest``; None without ptars."""
    try:
        from ptars import HandlerPool
    except ImportError:
        return None
    from ._columnar_schema import request_descriptor

    descriptor = request_descriptor()
    return HandlerPool([descriptor.file]).get_for_message(descriptor)


def decode_traces_columnar(
    body: bytes, *, project: str | None = None, max_attribute_bytes: int = MAX_ATTRIBUTE_BYTES
) -> tuple[Any, Counter[str]] | None:
    """(Arrow span table, spans per project) for a traces body, or None for the reference path.

    The table has the layout of ``tracescore.store.arrow_span_table``; nothing is rejected on
    this path (a body with a span to reject returns None).
    """
    handler = _handler()
    if handler is None:
        return None
    try:
        record_batch = handler.list_to_record_batch([body])
    except ValueError:  # not protobuf, or invalid UTF-8: the reference decoder says which
        return None
    try:
        return _span_table(record_batch, project, max_attribute_bytes)
    except _Unsupported:
        return None


def _children(array: Any) -> dict[str, Any]:
    """The child arrays of a struct array by field name (its offset and nulls applied)."""
    return dict(zip((field.name for field in array.type), array.flatten(), strict=True))


def _span_table(record_batch: Any, project: str | None, cap: int) -> tuple[Any, Counter[str]]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    resources = pc.list_flatten(record_batch.column(0))
    resource = _children(resources)
    scope_list = resource["scope_spans"]
    scopes = _children(pc.list_flatten(scope_list))
    scope_resource = pc.list_parent_indices(scope_list).to_numpy()
    span_list = scopes["spans"]
    spans = _children(pc.list_flatten(span_list))
    count = len(spans["name"])
    if not count:
        raise _Unsupported()
    span_scope = pc.list_parent_indices(span_list).to_numpy()
    span_resource = scope_resource[span_scope]

    trace_id = _ids(spans["trace_id"], 16)
    span_id = _ids(spans["span_id"], 8)
    parent = _ids(spans["parent_span_id"], 8, optional=True)
    start = spans["start_time_unix_nano"].to_numpy()
    end = spans["end_time_unix_nano"].to_numpy()
    if int(start.max()) > MAX_TIME_UNIX_NANO or int(end.max()) > MAX_TIME_UNIX_NANO:
        raise _Unsupported()
    start, end = start.astype(np.int64), end.astype(np.int64)
    no_end = end == 0
    duration = (end - start).astype(np.float64) / 1e6

    projects, services, resource_json = _resources(resource["resource"], project, cap)
    scope = _children(scopes["scope"])
    scope_names = [name or None for name in scope["name"].to_pylist()]
    scope_versions = [version or None for version in scope["version"].to_pylist()]

    kind = spans["kind"].to_numpy()
    kind = np.where((kind >= 0) & (kind < len(KIND_NAMES)), kind, 0)
    status = _children(spans["status"])
    code = status["code"].fill_null(0).to_numpy()
    code = np.where((code >= 0) & (code < len(STATUS_NAMES)), code, 0)

    attributes = _attributes_json(spans["attributes"], cap)
    events, links = _events_links(spans, cap)
    json_text = pa.json_()
    string = pa.string()
    timestamp = pa.timestamp("ns")

    def per_span(values: list[Any], by: Any, kind: Any = string) -> Any:
        return pa.array(values, kind).take(pa.array(by))

    table = pa.table(
        {
            "trace_id": trace_id,
            "span_id": span_id,
            "parent_span_id": parent,
            "project": per_span(projects, span_resource),
            "service_name": per_span(services, span_resource),
            "name": spans["name"],
            "kind": per_span(list(KIND_NAMES), kind),
            "start_time": pa.array(start, pa.int64()).cast(timestamp),
            "end_time": pa.array(end, pa.int64(), mask=no_end).cast(timestamp),
            "duration_ms": pa.array(duration, pa.float64(), mask=no_end),
            "status_code": per_span(list(STATUS_NAMES), code),
            "status_message": _empty_to_null(status["message"]),
            "attributes": pa.array(attributes, json_text),
            "resource_attributes": per_span(resource_json, span_resource, json_text),
            "events": events,
            "links": links,
            "scope_name": per_span(scope_names, span_scope),
            "scope_version": per_span(scope_versions, span_scope),
        }
    )
    per_resource = np.bincount(span_resource, minlength=len(projects)).tolist()
    counts: Counter[str] = Counter()
    for name, spans_of in zip(projects, per_resource, strict=True):
        if spans_of:
            counts[name] += spans_of
    return table, counts


def _empty_to_null(strings: Any) -> Any:
    """A string column with '' as NULL (as the reference's ``x or None``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = np.diff(_list_offsets(strings))
    if not lengths.any():
        return pa.nulls(len(strings), pa.string())
    return pc.if_else(pc.equal(pc.fill_null(strings, ""), ""), pa.scalar(None, pa.string()),
                      strings)


def _ids(ids: Any, width: int, *, optional: bool = False) -> Any:
    """Lower-case hex text of a binary id column; raises ``_Unsupported`` for an id of another
    length than ``width`` bytes, or all zeros unless ``optional`` (the reference rejects such
    spans). An empty ``optional`` id (no parent) becomes NULL."""
    import numpy as np
    import pyarrow as pa

    data_buffer = ids.buffers()[2]
    offsets = _list_offsets(ids)
    lengths = np.diff(offsets)
    empty = lengths == 0
    if not ((lengths == width) | (optional & empty)).all():
        raise _Unsupported()
    first, last = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(data_buffer, np.uint8)[first:last] if last > first else np.zeros(0,
                                                                                       np.uint8)
    if not optional and not data.reshape(-1, width).any(axis=1).all():
        raise _Unsupported()
    text = pa.py_buffer(data.tobytes().hex().encode("ascii"))
    hex_offsets = pa.py_buffer(((offsets - first) * 2).astype(np.int32))
    validity = None
    if optional and empty.any():
        validity = pa.py_buffer(np.packbits(~empty, bitorder="little"))
    return pa.StringArray.from_buffers(len(ids), hex_offsets, text, validity)


def _resources(resources: Any, project: str | None, cap: int) -> tuple[list[str], list[Any],
                                                                       list[str]]:
    """(project, service_name, resource_attributes JSON) per resource, as the reference does."""
    projects, services, texts = [], [], []
    for attributes in _children(resources)["attributes"].to_pylist():
        name, service, text = resource_fields(_key_values(attributes), project, cap)
        projects.append(name)
        services.append(service)
        texts.append(text)
    return projects, services, texts


def _plain(value: dict[str, Any]) -> Any:
    """One AnyValue (a ptars row; arrays and key-value lists still serialized) as
    ``any_value`` gives it; raises ``ValueTooDeep``."""
    for name in ("string_value", "bool_value", "int_value", "double_value",
                 "string_value_strindex"):
        if value.get(name) is not None:
            return value[name]
    if value.get("bytes_value") is not None:
        return base64.b64encode(value["bytes_value"]).decode("ascii")
    from google.protobuf.message import DecodeError as ProtobufDecodeError
    from opentelemetry.proto.common.v1.common_pb2 import ArrayValue, KeyValueList

    try:
        if value.get("array_value") is not None:
            array = ArrayValue.FromString(value["array_value"])
            return [any_value(item, 1) for item in array.values]
        if value.get("kvlist_value") is not None:
            pairs = KeyValueList.FromString(value["kvlist_value"]).values
            return {pair.key: any_value(pair.value, 1) for pair in pairs}
    except ProtobufDecodeError:  # invalid UTF-8 inside: the reference's lenient parse
        raise _Unsupported() from None
    return None


def _values(values: Any) -> list[Any]:
    """The Python value of each AnyValue row (a ptars struct array), as ``key_values`` gives it.

    Strings, ints, bools and doubles come out of Arrow in bulk; the few arrays, key-value lists
    and bytes are parsed again by upb and converted by the reference ``any_value``.
    """
    import numpy as np

    count = len(values)
    members = {name: array for name, array in _children(values).items()
               if array.null_count < count}  # the kinds present in this body
    strings = members.pop("string_value", None)
    out: list[Any] = strings.to_pylist() if strings is not None else [None] * count
    if not members:
        return out
    valid = {name: array.is_valid().to_numpy(zero_copy_only=False)
             for name, array in members.items()}
    set_count = sum(mask.astype(np.int8) for mask in valid.values())
    if strings is not None:
        set_count = set_count + strings.is_valid().to_numpy(zero_copy_only=False)
    if int(set_count.max()) > 1:  # two members of the oneof on the wire: upb keeps one
        raise _Unsupported()
    for name, array in members.items():
        present = array.drop_null().to_pylist()
        if name in ("array_value", "kvlist_value", "bytes_value"):
            present = [_plain({name: item}) for item in present]
        for position, item in zip(np.flatnonzero(valid[name]).tolist(), present, strict=True):
            out[position] = item
    return out


def _key_values(pairs: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``key_values`` of a repeated KeyValue given as ptars rows (events, links, resources)."""
    from ._limits import ValueTooDeep

    out: dict[str, Any] = {}
    for pair in pairs or ():
        value = pair["value"]
        try:
            out[pair["key"]] = _plain(value) if value is not None else None
        except ValueTooDeep:
            raise _Unsupported() from None
    return out


def _attributes_json(attribute_lists: Any, cap: int) -> list[bytes | str]:
    """The ``attributes`` JSON text of each span (capped as the reference caps it)."""
    import numpy as np
    import pyarrow.compute as pc

    from ._limits import ValueTooDeep

    pairs = _children(pc.list_flatten(attribute_lists))
    keys = pairs["key"].to_pylist()
    try:
        values = _values(pairs["value"])
    except ValueTooDeep:
        raise _Unsupported() from None
    # One dict per span, built and serialized by C-level iteration (the loop of this path), a
    # chunk of spans at a time: C code never lets go of the GIL, and between chunks the event
    # loop thread gets its turn (a large body would otherwise hold it for its whole decode).
    lengths = np.diff(_list_offsets(attribute_lists)).tolist()
    key_items, value_items = iter(keys), iter(values)
    islice, repeat = itertools.islice, itertools.repeat
    texts: list[bytes | str] = []
    for first in range(0, len(lengths), _CHUNK_SPANS):
        chunk = lengths[first : first + _CHUNK_SPANS]
        dicts = list(map(dict, map(zip, map(islice, repeat(key_items), chunk),
                                   map(islice, repeat(value_items), chunk))))
        encoded: list[bytes | str] = list(map(orjson.dumps, dicts))
        if max(map(len, encoded)) > cap:
            for index, text in enumerate(encoded):
                if len(text) > cap:  # cut over-long strings as the reference does
                    encoded[index] = dumps_attributes(dicts[index], cap)
        texts.extend(encoded)
    return texts


def _events_links(spans: Any, cap: int) -> tuple[Any, Any]:
    """``events`` and ``links`` JSON text of each span (most have neither: ``[]``)."""
    import numpy as np
    import pyarrow as pa

    count = len(spans["name"])
    columns = []
    for name in ("events", "links"):
        lists = spans[name]
        lengths = np.diff(_list_offsets(lists))
        if not lengths.any():
            columns.append(pa.repeat(pa.scalar("[]", pa.json_()), count))
            continue
        texts = ["[]"] * count
        positions = np.flatnonzero(lengths).tolist()
        rows = lists.take(pa.array(positions, pa.int64())).to_pylist()
        for position, items in zip(positions, rows, strict=True):
            texts[position] = dumps_items([_item(name, item) for item in items], cap)
        columns.append(pa.array(texts, pa.json_()))
    return columns[0], columns[1]


def _list_offsets(lists: Any) -> Any:
    """The offsets of a list array as numpy (its slice offset applied)."""
    import numpy as np

    raw = np.frombuffer(lists.buffers()[1], np.int32)
    return raw[lists.offset : lists.offset + len(lists) + 1]


def _item(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    if kind == "events":
        return {"name": item["name"], "time_unix_nano": item["time_unix_nano"],
                "attributes": _key_values(item["attributes"])}
    return {"trace_id": item["trace_id"].hex(), "span_id": item["span_id"].hex(),
            "attributes": _key_values(item["attributes"])}


__all__ = ["decode_traces_columnar"]
