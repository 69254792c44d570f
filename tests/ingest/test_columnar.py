"""The columnar (ptars) decoder stores exactly what the reference decoder stores.

Every table is compared column by column with ``arrow_span_table(decode_traces_protobuf(...))``
(the reference), on every captured protobuf fixture and on bodies built to hit each value kind,
the limits and the cases the columnar path hands back to the reference.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest

from tests.ingest.otlp_payloads import FIXTURE_DIRS, fixture_protobuf, logs_request, traces_request
from tracescore.ingest import (
    decode_spans_arrow,
    decode_traces_columnar,
    decode_traces_protobuf,
)
from tracescore.store import arrow_span_table


def _columns(table: Any) -> dict[str, list[Any]]:
    import pyarrow as pa

    out = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_timestamp(field.type):
            column = column.cast(pa.int64())
        out[field.name] = column.to_pylist()
    return out


def assert_same_rows(body: bytes, **options: Any) -> Counter[str]:
    """The columnar table equals the reference one (schema, every value); returns projects."""
    reference = decode_traces_protobuf(body, **options)
    assert reference.rejected == 0
    expected = arrow_span_table(reference)
    decoded = decode_traces_columnar(body, **options)
    assert decoded is not None, "the columnar decoder handed this body back to the reference"
    table, projects = decoded
    assert table.schema == expected.schema
    assert _columns(table) == _columns(expected)
    assert table.equals(expected)
    assert projects == reference.project_counts()
    return projects


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_every_fixture_gives_the_reference_rows(name: str) -> None:
    assert_same_rows(fixture_protobuf(name))


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_every_fixture_with_a_header_project_and_a_small_cap(name: str) -> None:
    # A cap of 64 bytes cuts most message attributes: the reference's capping is kept.
    projects = assert_same_rows(fixture_protobuf(name), project="from-header",
                                max_attribute_bytes=64)
    assert set(projects) == {"from-header"}


def _span(request: Any, index: int = 0) -> Any:
    return request.resource_spans[0].scope_spans[0].spans[index]


def test_every_value_kind_nested_values_events_and_links() -> None:
    request = traces_request(3)
    span = _span(request)
    attrs = span.attributes
    attrs.add(key="list").value.array_value.values.add().string_value = "a"
    listed = attrs[-1].value.array_value.values
    listed.add().int_value = -7
    listed.add().double_value = 2.5
    listed.add().bool_value = False
    listed.add()  # an empty AnyValue inside an array: null
    listed.add().bytes_value = b"\xff\x00"
    inner = listed.add().array_value.values
    inner.add().string_value = "nested"
    inner.add().kvlist_value.values.add(key="deep").value.int_value = 1
    entry = attrs.add(key="map").value.kvlist_value.values
    entry.add(key="pi").value.double_value = 3.5
    entry.add(key="pi").value.string_value = "repeated key: the last wins"
    attrs.add(key="raw").value.bytes_value = b"\x00\x01\xfe"
    attrs.add(key="flag").value.bool_value = True
    attrs.add(key="zero").value.int_value = 0
    attrs.add(key="big").value.int_value = -(2**63)
    for key, number in (("float", 0.2), ("huge", 1e20), ("tiny", 1e-7), ("whole", 100.0),
                        ("nan", float("nan")), ("inf", float("-inf"))):
        attrs.add(key=key).value.double_value = number
    attrs.add(key="empty").value.string_value = ""
    attrs.add(key="no value")
    attrs.add(key="unset value").value.SetInParent()
    odd = attrs.add(key='quote" back\\slash \n\t\x01 é 🌍')
    odd.value.string_value = 'a"b\\c\n\r\t\x00\x1f\x7f\u2028'
    attrs.add(key="flag").value.string_value = "a repeated key keeps its first place"
    event = span.events.add(name="gen_ai.choice", time_unix_nano=42)
    event.attributes.add(key="k").value.array_value.values.add().string_value = "v"
    span.events.add(name="")
    link = span.links.add(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    link.attributes.add(key="n").value.int_value = 5
    span.links.add()  # a link without ids: empty hex, as the reference writes it
    other = _span(request, 1)
    other.status.code, other.status.message = 2, "boom"
    other.kind = 9  # past the enum: UNSPECIFIED, as the reference says
    other.end_time_unix_nano = 0  # no end: NULL end time and duration
    _span(request, 2).status.code = 7
    _span(request, 2).parent_span_id = bytes(8)  # an all-zero parent is kept (as hex)
    _span(request, 2).start_time_unix_nano = 2**63 - 1  # the latest time that fits
    assert_same_rows(request.SerializeToString())


def test_several_resources_and_scopes() -> None:
    request = traces_request(2, resource_project="from-resource")
    more = traces_request(3, service="other")
    extra = request.resource_spans.add()
    extra.CopyFrom(more.resource_spans[0])
    array = extra.resource.attributes.add(key="process.command_args").value.array_value
    array.values.add().string_value = "python"
    extra.resource.attributes.add(key="tracescore.project").value.int_value = 42
    nameless = extra.scope_spans.add()
    nameless.spans.add().CopyFrom(more.resource_spans[0].scope_spans[0].spans[0])
    nameless.spans[0].span_id = os.urandom(8)
    request.resource_spans.add()  # a resource with no spans
    projects = assert_same_rows(request.SerializeToString())
    assert projects == Counter({"from-resource": 2, "42": 4})


def test_the_bench_body() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_ingest

    body, _ = bench_ingest.build_body(7)
    assert_same_rows(body)


def _hand_back(body: bytes) -> None:
    """The columnar decoder declines; decode_spans_arrow then gives the reference's answer."""
    assert decode_traces_columnar(body) is None
    reference = decode_traces_protobuf(body)
    decoded = decode_spans_arrow(body, "protobuf", None)
    assert decoded.rejected == reference.rejected
    assert decoded.error_message == reference.error_message
    assert _columns(decoded.arrow_table) == _columns(arrow_span_table(reference))


def test_bad_ids_and_times_go_to_the_reference_with_partial_success() -> None:
    request = traces_request(4)
    _span(request, 1).trace_id = b"\x01" * 15
    _span(request, 2).span_id = b""
    _span(request, 3).start_time_unix_nano = 2**63
    _hand_back(request.SerializeToString())
    zero = traces_request(2)
    _span(zero).trace_id = bytes(16)
    _hand_back(zero.SerializeToString())
    short_parent = traces_request(2)
    _span(short_parent, 1).parent_span_id = b"\x01"
    _hand_back(short_parent.SerializeToString())


def test_a_value_nested_too_deep_goes_to_the_reference() -> None:
    request = traces_request(2)
    value = _span(request).attributes.add(key="deep").value
    for _ in range(20):
        value = value.array_value.values.add()
    value.string_value = "bottom"
    _hand_back(request.SerializeToString())


def test_invalid_utf8_goes_to_the_lenient_reference() -> None:
    request = traces_request(2)
    _span(request).attributes.add(key="bad").value.string_value = "MARKER"
    body = request.SerializeToString().replace(b"MARKER", b"\xed\xa0\x80ok!")
    _hand_back(body)
    rows = decode_traces_protobuf(body).to_dicts()
    assert rows[0]["attributes"]["bad"] == "\ufffd\ufffd\ufffdok!"


def test_empty_truncated_and_logs_bodies_go_to_the_reference() -> None:
    assert decode_traces_columnar(b"") is None
    body = traces_request(3).SerializeToString()
    assert decode_traces_columnar(body[: len(body) // 2]) is None
    logs = logs_request(os.urandom(16), os.urandom(8)).SerializeToString()
    assert decode_traces_columnar(logs) is None


def test_invalid_utf8_inside_an_array_goes_to_the_lenient_reference() -> None:
    request = traces_request(2)
    values = _span(request).attributes.add(key="list").value.array_value.values
    values.add().string_value = "MARKER"
    body = request.SerializeToString().replace(b"MARKER", b"\xff\xfeok!!")
    _hand_back(body)
    assert decode_traces_protobuf(body).to_dicts()[0]["attributes"]["list"] == ["\ufffd\ufffdok!!"]


def test_invalid_utf8_in_a_field_not_stored_changes_nothing() -> None:
    # trace_state is not stored: upb refuses the body (the reference re-parses it leniently),
    # ptars skips the field; the stored rows are the same.
    request = traces_request(2)
    _span(request).trace_state = "MARKER"
    body = request.SerializeToString().replace(b"MARKER", b"\xff\xfeok!!")
    assert_same_rows(body)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (tag, varint length, payload)."""
    head, size = bytearray([number << 3 | 2]), len(payload)
    while size >= 0x80:
        head.append(size & 0x7F | 0x80)
        size >>= 7
    head.append(size)
    return bytes(head) + payload


def test_two_members_of_a_value_on_the_wire_keep_the_last_as_upb_does() -> None:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    request = traces_request(2)
    value = AnyValue(string_value="first").SerializeToString()
    value += AnyValue(int_value=3).SerializeToString()
    spans = request.resource_spans[0].scope_spans[0]
    # Built by hand: upb would keep only one member if it serialized the message itself.
    span_bytes = spans.spans[0].SerializeToString() + _field(9, _field(1, b"twice") +
                                                              _field(2, value))
    scope_bytes = _field(1, spans.scope.SerializeToString()) + _field(2, span_bytes)
    scope_bytes += _field(2, spans.spans[1].SerializeToString())
    resource = request.resource_spans[0].resource.SerializeToString()
    body = _field(1, _field(1, resource) + _field(2, scope_bytes))
    reference = decode_traces_protobuf(body)
    assert len(reference) == 2
    assert reference.to_dicts()[0]["attributes"]["twice"] == 3
    decoded = decode_spans_arrow(body, "protobuf", None)
    assert _columns(decoded.arrow_table) == _columns(arrow_span_table(reference))
