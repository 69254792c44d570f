"""OTLP/HTTP against a real server: fixtures replay, the bad-input table, encodings, logs."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
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
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from server_process import ServerProcess

from .helpers import assert_error_shape, count_spans, post_otlp, sql

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def _fresh_ids(body: bytes, flat: list[dict[str, Any]]) -> tuple[bytes, dict[str, str]]:
    """The JSON body with every trace and span id replaced by a new random one (so the JSON
    replay is not deduplicated against the protobuf replay of the same capture)."""
    ids = {span["traceId"] for span in flat} | {span["spanId"] for span in flat}
    mapping = {old: os.urandom(len(old) // 2).hex() for old in ids}
    text = body.decode()
    for old, new in mapping.items():
        text = text.replace(old, new)
    return text.encode(), mapping


def _renamed(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` with the ids of ``mapping`` replaced wherever they occur (some clients copy
    trace ids into attributes)."""
    text = json.dumps(value)
    for old, new in mapping.items():
        text = text.replace(old, new)
    return json.loads(text)


@pytest.mark.parametrize("name", FIXTURE_DIRS)
@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_fixture_replay_every_span_queryable(
    server: ServerProcess, project: str, name: str, content_type: str
) -> None:
    flat = json.loads((FIXTURES / name / "spans.flat.json").read_text())
    if content_type == PROTOBUF:
        body, mapping = fixture_protobuf(name), {}
    else:
        body, mapping = _fresh_ids(fixture_json(name), flat)
    response = post_otlp(server, body, content_type=content_type, project=project)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(content_type)
    rows = sql(
        server,
        "SELECT span_id, trace_id, parent_span_id, name, attributes, resource_attributes, "
        "service_name, epoch_ns(start_time)::VARCHAR FROM spans WHERE project = ?",
        [project],
    )
    stored = {row[0]: row for row in rows}
    assert len(stored) == len(flat)
    for expected in flat:
        new = lambda value: mapping.get(value, value)  # noqa: E731
        _, trace_id, parent, span_name, attributes, resource, service, start = stored[
            new(expected["spanId"])
        ]
        assert (trace_id, parent, span_name) == (
            new(expected["traceId"]), new(expected["parentSpanId"]), expected["name"]
        )
        assert json.loads(attributes) == _renamed(expected["attributes"], mapping)
        assert json.loads(resource) == expected["resource"]
        assert service == expected["resource"]["service.name"]
        assert start == expected["startTimeUnixNano"]


def test_resent_batch_is_not_duplicated(server: ServerProcess, project: str) -> None:
    body = traces_request(7).SerializeToString()
    for _ in range(3):
        assert post_otlp(server, body, project=project).status_code == 200
    assert count_spans(server, project) == 7


def test_project_from_resource_attribute_else_default(server: ServerProcess, project: str) -> None:
    body = traces_request(2, resource_project=project).SerializeToString()
    assert post_otlp(server, body).status_code == 200
    assert count_spans(server, project) == 2
    header_wins = traces_request(1, resource_project="ignored").SerializeToString()
    assert post_otlp(server, header_wins, project=project).status_code == 200
    assert count_spans(server, project) == 3


# ---- the bad-input table -----------------------------------------------------------------


@dataclass
class Case:
    """One request: body, headers, and what the server must answer and keep."""

    name: str
    build: Callable[[], tuple[bytes, dict[str, str]]]
    status: int
    stored: int
    check: Callable[[httpx.Response], None] | None = None


def _proto(spans: int = 3, **kw: Any) -> bytes:
    return traces_request(spans, **kw).SerializeToString()


def _short_trace_id() -> tuple[bytes, dict[str, str]]:
    request = traces_request(4)
    request.resource_spans[0].scope_spans[0].spans[2].trace_id = os.urandom(15)
    return request.SerializeToString(), {"content-type": PROTOBUF}


def _bad_utf8() -> tuple[bytes, dict[str, str]]:
    request = traces_request(2)
    request.resource_spans[0].scope_spans[0].spans[1].attributes.add(
        key="text"
    ).value.string_value = "OK-XYZ"
    body = request.SerializeToString().replace(b"OK-XYZ", b"OK-\xff\xfe!")
    return body, {"content-type": PROTOBUF}


def _json_int64(as_string: bool) -> Callable[[], tuple[bytes, dict[str, str]]]:
    def build() -> tuple[bytes, dict[str, str]]:
        start, end = 1_700_000_000_123_456_789, 1_700_000_002_123_456_789
        value: Callable[[int], Any] = str if as_string else int
        spans = [
            span_json(os.urandom(16).hex(), os.urandom(8).hex(), start=value(start),
                      end=value(end),
                      attributes=[{"key": "n", "value": {"intValue": value(2**62)}}])
            for _ in range(2)
        ]
        return orjson.dumps(traces_json(*spans)), {"content-type": JSON}

    return build


def _partial_success(expected_rejected: int) -> Callable[[httpx.Response], None]:
    def check(response: httpx.Response) -> None:
        message = ExportTraceServiceResponse()
        message.ParseFromString(response.content)
        assert message.partial_success.rejected_spans == expected_rejected
        assert "trace_id must be 16 bytes" in message.partial_success.error_message

    return check


def _status_message(fragment: str) -> Callable[[httpx.Response], None]:
    def check(response: httpx.Response) -> None:
        # a google.rpc.Status: field 2 (message) holds the sentence
        assert response.headers["content-type"] == PROTOBUF
        assert fragment.encode() in response.content

    return check


def _json_error(fragment: str) -> Callable[[httpx.Response], None]:
    def check(response: httpx.Response) -> None:
        assert fragment in assert_error_shape(response, response.status_code)

    return check


BOMB = gzip.compress(bytes(256 * 1024 * 1024), compresslevel=9)  # 256 MiB of zeros in ~250 KiB

CASES = [
    Case("valid protobuf", lambda: (_proto(3), {"content-type": PROTOBUF}), 200, 3),
    Case("truncated protobuf", lambda: (_proto(3)[:-7], {"content-type": PROTOBUF}), 400, 0,
         _status_message("not a valid OTLP/protobuf")),
    Case("wrong content type", lambda: (_proto(3), {"content-type": "text/plain"}), 415, 0,
         _json_error("application/x-protobuf")),
    Case("no content type", lambda: (_proto(3), {}), 415, 0, _json_error("not supported")),
    Case("15-byte trace id", _short_trace_id, 200, 3, _partial_success(1)),
    Case("empty body", lambda: (b"", {"content-type": PROTOBUF}), 200, 0),
    Case("empty JSON body", lambda: (b"", {"content-type": JSON}), 200, 0),
    Case("invalid UTF-8 in a string attribute", _bad_utf8, 200, 2),
    Case("1 MB attribute", lambda: (_proto(2, attribute_size=1024 * 1024),
                                    {"content-type": PROTOBUF}), 200, 2),
    Case("gzip body", lambda: (gzip.compress(_proto(4)), {"content-type": PROTOBUF,
                                                          "content-encoding": "gzip"}), 200, 4),
    Case("deflate body", lambda: (zlib.compress(_proto(4)), {"content-type": PROTOBUF,
                                                            "content-encoding": "deflate"}),
         200, 4),
    Case("gzip bomb", lambda: (BOMB, {"content-type": PROTOBUF, "content-encoding": "gzip"}),
         413, 0, _status_message("larger than")),
    Case("brotli body", lambda: (b"xx", {"content-type": PROTOBUF, "content-encoding": "br"}),
         415, 0),
    Case("JSON int64 as strings", _json_int64(True), 200, 2),
    Case("JSON int64 as numbers", _json_int64(False), 200, 2),
    Case("JSON that is not OTLP", lambda: (b'{"resourceSpans": 5}', {"content-type": JSON}),
         400, 0, _json_error("must be a list")),
    Case("invalid JSON", lambda: (b"{oops", {"content-type": JSON}), 400, 0,
         _json_error("not valid JSON")),
    Case("logs body on /v1/traces",
         lambda: (logs_request(os.urandom(16), os.urandom(8)).SerializeToString(),
                  {"content-type": PROTOBUF}), 400, 0, _status_message("/v1/logs")),
    Case("JSON logs body on /v1/traces",
         lambda: (b'{"resourceLogs": []}', {"content-type": JSON}), 400, 0,
         _json_error("/v1/logs")),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_table(server: ServerProcess, project: str, case: Case) -> None:
    body, headers = case.build()
    response = httpx.post(
        f"{server.url}/v1/traces",
        content=body,
        headers={**headers, "x-tracescore-project": project},
        timeout=60,
    )
    assert response.status_code == case.status, response.content[:300]
    if case.check:
        case.check(response)
    assert count_spans(server, project) == case.stored
    # the server stays up and keeps accepting
    assert post_otlp(server, _proto(1), project=project + "-after").status_code == 200
    assert count_spans(server, project + "-after") == 1


def test_invalid_utf8_is_stored_with_replacement(server: ServerProcess, project: str) -> None:
    body, headers = _bad_utf8()
    assert post_otlp(server, body, project=project).status_code == 200
    rows = sql(server, "SELECT attributes->>'$.text' FROM spans WHERE project = ? AND "
                       "attributes->>'$.text' IS NOT NULL", [project])
    assert rows == [["OK-\ufffd\ufffd!"]]


def test_one_megabyte_attribute_is_intact(server: ServerProcess, project: str) -> None:
    assert post_otlp(server, _proto(1, attribute_size=1024 * 1024), project=project).status_code \
        == 200
    rows = sql(server, "SELECT length(attributes->>'$.payload') FROM spans WHERE project = ?",
               [project])
    assert rows == [[1024 * 1024]]


def test_json_response_carries_partial_success(server: ServerProcess, project: str) -> None:
    good = span_json(os.urandom(16).hex(), os.urandom(8).hex())
    bad = span_json("abc", os.urandom(8).hex())
    response = post_otlp(server, orjson.dumps(traces_json(good, bad)), content_type=JSON,
                         project=project)
    assert response.status_code == 200
    assert response.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert "traceId" in response.json()["partialSuccess"]["errorMessage"]
    assert count_spans(server, project) == 1


def test_chunked_body(server: ServerProcess, project: str) -> None:
    body = gzip.compress(_proto(5))

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), 100):
            yield body[start : start + 100]

    response = httpx.post(
        f"{server.url}/v1/traces",
        content=chunks(),
        headers={"content-type": PROTOBUF, "content-encoding": "gzip",
                 "x-tracescore-project": project},
    )
    assert response.status_code == 200
    assert count_spans(server, project) == 5


def test_logs_with_genai_events_are_stored(server: ServerProcess, project: str) -> None:
    trace_id, span_id = os.urandom(16), os.urandom(8)
    body = logs_request(trace_id, span_id, event_name="gen_ai.client.inference.operation.details")
    response = post_otlp(server, body.SerializeToString(), path="/v1/logs", project=project)
    assert response.status_code == 200
    rows = sql(
        server,
        "SELECT trace_id, span_id, event_name, body->>'$.content', severity_text FROM logs "
        "WHERE project = ?",
        [project],
    )
    assert rows == [[trace_id.hex(), span_id.hex(), "gen_ai.client.inference.operation.details",
                     "What is the weather in Paris?", "INFO"]]
    traces_on_logs = post_otlp(server, _proto(2), path="/v1/logs", project=project)
    assert traces_on_logs.status_code == 400
    assert b"/v1/traces" in traces_on_logs.content


def test_wrong_method_and_unknown_route(server: ServerProcess) -> None:
    assert_error_shape(httpx.get(f"{server.url}/v1/traces"), 405)
    assert "no route" in assert_error_shape(httpx.get(f"{server.url}/v2/nothing"), 404)
