"""Helpers of the reliability tests: hostile OTLP bodies, concurrent bursts, health probes.

Every test here drives a real ``tracescore serve`` process (``server_process``) over loopback
with real bytes: protobuf messages built with opentelemetry-proto, JSON written by hand where
the hostile part (a lone surrogate, a raw ``\\xff``) cannot be produced by an encoder.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
from server_process import ServerProcess

PROTOBUF = {"content-type": "application/x-protobuf"}
JSON = {"content-type": "application/json"}


def span_request(
    count: int = 1,
    *,
    attribute: str = "payload",
    value: str = "x",
    start_ns: int = 1_700_000_000_000_000_000,
    service: str = "reliability",
) -> Any:
    """An ``ExportTraceServiceRequest`` of ``count`` spans, each with one string attribute."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    kv = resource_spans.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", service
    scope_spans = resource_spans.scope_spans.add()
    trace_id = os.urandom(16)
    for index in range(count):
        span = scope_spans.spans.add()
        span.trace_id, span.span_id = trace_id, os.urandom(8)
        span.name = f"span-{index}"
        span.start_time_unix_nano = start_ns + index
        span.end_time_unix_nano = start_ns + index + 1_000_000
        kv = span.attributes.add()
        kv.key, kv.value.string_value = attribute, value
    return request


def span_ids(request: Any) -> list[str]:
    """Hex span ids of every span of a request."""
    return [
        span.span_id.hex()
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def json_span(name: str = "span", **fields: Any) -> dict[str, Any]:
    """One OTLP/JSON span with fresh ids (``fields`` override or add keys)."""
    return {
        "traceId": os.urandom(16).hex(),
        "spanId": os.urandom(8).hex(),
        "name": name,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000500000000",
        **fields,
    }


def json_request(*spans: dict[str, Any]) -> dict[str, Any]:
    """An OTLP/JSON traces request holding ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": "reliability"}}
                    ]
                },
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": list(spans)}],
            }
        ]
    }


@dataclass
class PostOutcome:
    """What one client saw: final status, every status on the way, and the span ids sent."""

    ids: list[str]
    statuses: list[int] = field(default_factory=list)

    @property
    def acknowledged(self) -> bool:
        """True when the export ended with 200."""
        return bool(self.statuses) and self.statuses[-1] == 200


def post_with_retries(
    server: ServerProcess, body: bytes, ids: list[str], *, attempts: int = 30
) -> PostOutcome:
    """POST a protobuf export like an OTLP client: retry 503 after its Retry-After."""
    outcome = PostOutcome(ids)
    with httpx.Client(timeout=120) as client:
        for _ in range(attempts):
            response = client.post(f"{server.url}/v1/traces", content=body, headers=PROTOBUF)
            outcome.statuses.append(response.status_code)
            if response.status_code != 503:
                break
            time.sleep(min(float(response.headers.get("retry-after", "1")), 2.0))
    return outcome


def burst(
    server: ServerProcess, make_request: Callable[[int], Any], clients: int
) -> list[PostOutcome]:
    """``clients`` concurrent exports (each its own request from ``make_request(i)``)."""
    requests = [make_request(index) for index in range(clients)]
    bodies = [(request.SerializeToString(), span_ids(request)) for request in requests]
    del requests
    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(post_with_retries, server, body, ids) for body, ids in bodies]
        return [future.result() for future in futures]


def stored_span_ids(server: ServerProcess) -> set[str]:
    """Every span id in the server's ``spans`` table."""
    response = httpx.post(
        f"{server.url}/api/sql", json={"sql": "SELECT span_id FROM spans"}, timeout=60
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert not answer["truncated"], "more spans than /api/sql answers: use missing_span_ids"
    return {row[0] for row in answer["rows"]}


def missing_span_ids(server: ServerProcess, span_ids: set[str]) -> set[str]:
    """Which of ``span_ids`` the server's ``spans`` table lacks (asked in SQL, so the answer
    stays under /api/sql's row limit however many spans are stored)."""
    response = httpx.post(
        f"{server.url}/api/sql",
        json={"sql": "SELECT x FROM unnest(?::VARCHAR[]) AS t(x) "
                     "WHERE x NOT IN (SELECT span_id FROM spans)",
              "params": [sorted(span_ids)]},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert not answer["truncated"], f"{answer['truncated_reason']}: too many spans missing"
    return {row[0] for row in answer["rows"]}


def max_gap_s(url: str, seconds: float, during: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``during()`` while polling ``url`` every 20 ms; (longest wait for an answer, result)."""
    gaps, _, result = poll_during(url, seconds, during)
    return max(gaps, default=0.0), result


def answers_during(url: str, during: Callable[[], Any]) -> tuple[int, Any]:
    """Run ``during()`` while polling ``url`` every 20 ms; (answers that came back while
    ``during()`` ran, its result). An event loop blocked for the whole call answers at most
    once in that window; a free one answers every poll."""
    _, answered_at, (result, window) = poll_during(url, 0.2, lambda: _timed(during))
    started, ended = window
    return sum(1 for at in answered_at if started < at < ended), result


def _timed(during: Callable[[], Any]) -> tuple[Any, tuple[float, float]]:
    started = time.perf_counter()
    result = during()
    return result, (started, time.perf_counter())


def poll_during(
    url: str, seconds: float, during: Callable[[], Any]
) -> tuple[list[float], list[float], Any]:
    """Poll ``url`` every 20 ms around ``during()``; (each answer's wait, each answer's
    arrival time on ``time.perf_counter``, the result of ``during()``)."""
    import threading

    gaps: list[float] = []
    answered_at: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                started = time.perf_counter()
                client.get(url)
                answered_at.append(time.perf_counter())
                gaps.append(answered_at[-1] - started)
                time.sleep(0.02)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    time.sleep(0.2)
    try:
        result = during()
    finally:
        time.sleep(min(seconds, 0.2))
        stop.set()
        thread.join(30)
    return gaps, answered_at, result


__all__ = [
    "JSON",
    "PROTOBUF",
    "PostOutcome",
    "answers_during",
    "burst",
    "json_request",
    "json_span",
    "max_gap_s",
    "poll_during",
    "post_with_retries",
    "span_ids",
    "span_request",
    "missing_span_ids",
    "stored_span_ids",
]
