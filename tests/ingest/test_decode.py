"""Decoding OTLP bodies into span and log rows (tracescore.ingest)."""

from __future__ import annotations

import json
import os

import orjson
import pytest

from ingest.otlp_payloads import (
    FIXTURE_DIRS,
    FIXTURES,
    fixture_json,
    fixture_protobuf,
    logs_request,
    span_json,
    traces_json,
    traces_request,
)
from tracescore.ingest import (
    DecodeError,
    UnsupportedContentType,
    WrongSignalError,
    decode_logs_json,
    decode_logs_protobuf,
    decode_traces_json,
    decode_traces_protobuf,
    span_dicts_from_otlp,
)

ROW_KEYS = {
    "trace_id", "span_id", "parent_span_id", "project", "service_name", "name", "kind",
    "start_time_ns", "end_time_ns", "duration_ms", "status_code", "status_message",
    "attributes", "resource_attributes", "events", "links", "scope_name", "scope_version",
}


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_fixture_protobuf_and_json_decode_to_the_same_rows(name: str) -> None:
    from_protobuf = span_dicts_from_otlp(fixture_protobuf(name))
    from_json = span_dicts_from_otlp(fixture_json(name), content_type="application/json")
    assert from_protobuf, "fixture decoded to no spans"
    assert from_protobuf == from_json


@pytest.mark.parametrize("name", FIXTURE_DIRS)
def test_fixture_rows_match_the_flat_capture(name: str) -> None:
    flat = json.loads((FIXTURES / name / "spans.flat.json").read_text())
    rows = {row["span_id"]: row for row in span_dicts_from_otlp(fixture_protobuf(name))}
    assert len(rows) == len(flat)
    for expected in flat:
        row = rows[expected["spanId"]]
        assert set(row) == ROW_KEYS
        assert row["trace_id"] == expected["traceId"]
        assert row["parent_span_id"] == expected["parentSpanId"]
        assert row["name"] == expected["name"]
        assert row["attributes"] == expected["attributes"]
        assert row["resource_attributes"] == expected["resource"]
        assert row["service_name"] == expected["resource"].get("service.name")
        assert row["start_time_ns"] == int(expected["startTimeUnixNano"])
        assert row["end_time_ns"] == int(expected["endTimeUnixNano"])
        assert row["duration_ms"] == pytest.approx(
            (int(expected["endTimeUnixNano"]) - int(expected["startTimeUnixNano"])) / 1e6
        )
        assert row["scope_name"] == expected["scope"].get("name")
        assert row["project"] == "default"


def test_row_values_and_project_resolution() -> None:
    request = traces_request(2, resource_project="from-resource")
    request.resource_spans[0].scope_spans[0].spans[1].status.code = 2
    request.resource_spans[0].scope_spans[0].spans[1].status.message = "boom"
    body = request.SerializeToString()
    rows = span_dicts_from_otlp(body)
    assert [r["project"] for r in rows] == ["from-resource", "from-resource"]
    assert rows[0]["parent_span_id"] is None
    assert rows[1]["parent_span_id"] == rows[0]["span_id"]
    assert rows[0]["kind"] == "INTERNAL"
    assert (rows[1]["status_code"], rows[1]["status_message"]) == ("ERROR", "boom")
    assert rows[0]["attributes"] == {"payload": "x" * 16, "index": 0}
    assert span_dicts_from_otlp(body, project="header")[0]["project"] == "header"
    no_project = traces_request(1).SerializeToString()
    assert span_dicts_from_otlp(no_project)[0]["project"] == "default"


def test_any_value_kinds_events_and_links() -> None:
    request = traces_request(1)
    span = request.resource_spans[0].scope_spans[0].spans[0]
    kv = span.attributes.add()
    kv.key = "list"
    for item in ("a", "b"):
        kv.value.array_value.values.add().string_value = item
    kv = span.attributes.add()
    kv.key = "map"
    entry = kv.value.kvlist_value.values.add()
    entry.key, entry.value.double_value = "pi", 3.5
    kv = span.attributes.add()
    kv.key, kv.value.bytes_value = "raw", b"\x00\x01"
    kv = span.attributes.add()
    kv.key, kv.value.bool_value = "flag", True
    event = span.events.add()
    event.name, event.time_unix_nano = "gen_ai.choice", 42
    event.attributes.add(key="k").value.string_value = "v"
    link = span.links.add()
    link.trace_id, link.span_id = b"\x01" * 16, b"\x02" * 8
    row = span_dicts_from_otlp(request.SerializeToString())[0]
    assert row["attributes"]["list"] == ["a", "b"]
    assert row["attributes"]["map"] == {"pi": 3.5}
    assert row["attributes"]["raw"] == "AAE="
    assert row["attributes"]["flag"] is True
    assert row["events"] == [{"name": "gen_ai.choice", "time_unix_nano": 42,
                              "attributes": {"k": "v"}}]
    assert row["links"] == [{"trace_id": "01" * 16, "span_id": "02" * 8, "attributes": {}}]


def test_bad_ids_are_rejected_and_the_rest_kept() -> None:
    request = traces_request(3)
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[1].trace_id = b"\x01" * 15
    spans[2].span_id = b""
    batch = decode_traces_protobuf(request.SerializeToString())
    assert len(batch) == 1
    assert batch.rejected == 2
    assert "trace_id must be 16 bytes" in batch.error_message


def test_truncated_protobuf_is_a_decode_error() -> None:
    body = traces_request(3).SerializeToString()
    with pytest.raises(DecodeError, match="not a valid OTLP/protobuf"):
        decode_traces_protobuf(body[: len(body) // 2])


def test_invalid_utf8_is_replaced_not_refused() -> None:
    request = traces_request(2)
    request.resource_spans[0].scope_spans[0].spans[0].attributes.add(
        key="bad"
    ).value.string_value = "MARKER"
    body = request.SerializeToString().replace(b"MARKER", b"\xed\xa0\x80ok!")
    rows = span_dicts_from_otlp(body)
    assert len(rows) == 2
    assert rows[0]["attributes"]["bad"] == "\ufffd\ufffd\ufffdok!"


def test_empty_body_is_an_empty_export() -> None:
    assert span_dicts_from_otlp(b"") == []
    assert span_dicts_from_otlp(b"", content_type="application/json") == []
    assert span_dicts_from_otlp(b"{}", content_type="application/json") == []


def test_logs_body_on_traces_is_refused() -> None:
    body = logs_request(os.urandom(16), os.urandom(8)).SerializeToString()
    with pytest.raises(WrongSignalError, match="/v1/logs"):
        decode_traces_protobuf(body)
    with pytest.raises(WrongSignalError, match="/v1/logs"):
        decode_traces_json(b'{"resourceLogs": []}')
    with pytest.raises(WrongSignalError, match="/v1/traces"):
        decode_logs_protobuf(traces_request(2).SerializeToString())


def test_unsupported_content_type() -> None:
    with pytest.raises(UnsupportedContentType, match="application/x-protobuf"):
        span_dicts_from_otlp(b"x", content_type="text/plain")


@pytest.mark.parametrize("as_string", [True, False])
def test_json_int64_as_string_or_number(as_string: bool) -> None:
    start, end = 1_700_000_000_123_456_789, 1_700_000_001_123_456_789
    value = (lambda n: str(n)) if as_string else (lambda n: n)
    span = span_json(
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        start=value(start),
        end=value(end),
        attributes=[{"key": "tokens", "value": {"intValue": value(9_007_199_254_740_993)}}],
    )
    rows = span_dicts_from_otlp(orjson.dumps(traces_json(span)), content_type="application/json")
    assert rows[0]["start_time_ns"] == start
    assert rows[0]["end_time_ns"] == end
    assert rows[0]["attributes"]["tokens"] == 9_007_199_254_740_993
    assert rows[0]["kind"] == "SERVER"


def test_json_snake_case_and_enum_names() -> None:
    body = {
        "resource_spans": [
            {
                "resource": {"attributes": [{"key": "service.name",
                                             "value": {"string_value": "snake"}}]},
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": "0af7651916cd43dd8448eb211c80319c",
                                "span_id": "b7ad6b7169203331",
                                "parent_span_id": "",
                                "name": "s",
                                "kind": "SPAN_KIND_CLIENT",
                                "start_time_unix_nano": 5,
                                "end_time_unix_nano": 7,
                                "status": {"code": "STATUS_CODE_ERROR"},
                                "attributes": [{"key": "d",
                                                "value": {"double_value": "Infinity"}}],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    rows = span_dicts_from_otlp(orjson.dumps(body), content_type="application/json")
    assert rows[0]["service_name"] == "snake"
    assert (rows[0]["kind"], rows[0]["status_code"]) == ("CLIENT", "ERROR")
    assert rows[0]["parent_span_id"] is None


def test_json_bad_span_rejected_rest_kept() -> None:
    good = span_json("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    short = span_json("0af7651916cd43dd8448eb211c8031", "b7ad6b7169203332")
    bad_int = span_json("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203333", start="soon")
    batch = decode_traces_json(orjson.dumps(traces_json(good, short, bad_int)))
    assert len(batch) == 1
    assert batch.rejected == 2
    assert "traceId must be 32 hex characters" in batch.error_message


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'{"resourceSpans": 3}'])
def test_json_undecodable_body(body: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_traces_json(body)


def test_logs_protobuf_and_json_agree() -> None:
    trace_id, span_id = os.urandom(16), os.urandom(8)
    request = logs_request(trace_id, span_id)
    rows = span_dicts_from_otlp(request.SerializeToString(), kind="logs")
    assert rows == [
        {
            "trace_id": trace_id.hex(),
            "span_id": span_id.hex(),
            "time_unix_nano": 1_700_000_000_100_000_000,
            "observed_time_unix_nano": 1_700_000_000_200_000_000,
            "severity_number": 9,
            "severity_text": "INFO",
            "event_name": "gen_ai.user.message",
            "body": {"content": "What is the weather in Paris?"},
            "attributes": {"gen_ai.system": "openai"},
            "resource_attributes": {"service.name": "svc"},
            "scope_name": "tests",
            "scope_version": None,
            "project": "default",
            "service_name": "svc",
        }
    ]
    from google.protobuf.json_format import MessageToDict

    document = MessageToDict(request)
    record = document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["traceId"], record["spanId"] = trace_id.hex(), span_id.hex()
    assert decode_logs_json(orjson.dumps(document)).to_dicts() == rows
    # A re-sent record gets the same log_id, so the store can drop the copy.
    first = decode_logs_protobuf(request.SerializeToString()).columns["log_id"]
    assert first == decode_logs_json(orjson.dumps(document)).columns["log_id"]


def test_log_event_name_falls_back_to_attribute() -> None:
    request = logs_request(os.urandom(16), os.urandom(8), event_name="")
    record = request.resource_logs[0].scope_logs[0].log_records[0]
    record.attributes.add(key="event.name").value.string_value = "gen_ai.choice"
    rows = span_dicts_from_otlp(request.SerializeToString(), kind="logs")
    assert rows[0]["event_name"] == "gen_ai.choice"
