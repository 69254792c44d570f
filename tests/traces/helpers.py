"""Helpers for the traces tests: captured fixture traces (decoded by the real ingest decoder) and
small span-row builders for edge cases."""

from __future__ import annotations

import base64
import itertools
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from tracescore.ingest import span_dicts_from_otlp
from tracescore.traces import Trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INDEX: dict[str, Any] = json.loads((FIXTURES / "INDEX.json").read_text())
SCENARIO: dict[str, Any] = json.loads((FIXTURES / "SCENARIO.json").read_text())
# The four shared captures (test_traces_fixtures.py); every capture, the issue-11 client captures
# with their CLIENT.json included, is in ALL_FOLDERS (test_traces_clients.py).
FOLDERS = sorted(f for f in INDEX if not (FIXTURES / f / "CLIENT.json").exists())
ALL_FOLDERS = sorted(INDEX)


@cache
def fixture_rows(folder: str) -> tuple[dict[str, Any], ...]:
    """Span rows of a fixture folder: every captured request body (``NNNN-traces.b64``, in
    order) through ``span_dicts_from_otlp``."""
    rows: list[dict[str, Any]] = []
    for path in sorted((FIXTURES / folder).glob("[0-9][0-9][0-9][0-9]-traces.b64")):
        body = base64.b64decode(path.read_text())
        meta = json.loads(path.with_name(path.name.replace(".b64", ".meta.json")).read_text())
        content_type = meta.get("content_type") or "application/x-protobuf"
        rows.extend(span_dicts_from_otlp(body, content_type=content_type))
    return tuple(rows)


@cache
def fixture_logs(folder: str) -> tuple[dict[str, Any], ...]:
    """Log rows of a fixture folder: every captured OTLP logs body (``NNNN-logs.b64``, in
    order) through the real log decoder, as the server stores them beside the spans (OpenLIT
    and Semantic Kernel send message content as log records of their spans)."""
    from tracescore.ingest import decode_logs_protobuf

    rows: list[dict[str, Any]] = []
    for path in sorted((FIXTURES / folder).glob("[0-9][0-9][0-9][0-9]-logs.b64")):
        rows.extend(decode_logs_protobuf(base64.b64decode(path.read_text())).to_dicts())
    return tuple(rows)


@cache
def client_info(folder: str) -> dict[str, Any]:
    """A fixture's ``CLIENT.json`` (empty for the shared captures, which have none)."""
    path = FIXTURES / folder / "CLIENT.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def gaps(folder: str, scenario: str) -> dict[str, str]:
    """What the client does not capture in this scenario: assertion name → reason."""
    out: dict[str, str] = {}
    for gap in client_info(folder).get("gaps") or []:
        if isinstance(gap, dict) and gap.get("assertion"):
            if scenario in (gap.get("scenarios") or [scenario]):
                out[str(gap["assertion"])] = str(gap.get("reason") or "not captured")
    return out


@cache
def model_usage(folder: str) -> tuple[tuple[int, int], ...]:
    """(prompt, completion) tokens the scripted LLM stand-in answered each request of the capture
    with, in request order: recomputed from ``requests.jsonl`` with the kit's own stand-in."""
    import importlib.util

    kit = FIXTURES / "clients" / "kit" / "fake_openai.py"
    spec = importlib.util.spec_from_file_location("_fixture_fake_openai", kit)
    assert spec is not None and spec.loader is not None
    fake = importlib.util.module_from_spec(spec)
    argv, sys.argv = sys.argv, [str(kit)]  # the stand-in reads its port from argv on import
    try:
        spec.loader.exec_module(fake)
    finally:
        sys.argv = argv
    out: list[tuple[int, int]] = []
    for line in (FIXTURES / folder / "requests.jsonl").read_text().splitlines():
        request = json.loads(line)
        body = request["body"]
        if request["path"].endswith("/responses"):
            usage = fake.responses_result(body)["usage"]
            out.append((usage["input_tokens"], usage["output_tokens"]))
        else:
            usage = fake.chat_completion(body)[3]
            out.append((usage["prompt_tokens"], usage["completion_tokens"]))
    return tuple(out)


def trace_id_of(folder: str, scenario: str) -> str:
    for item in INDEX[folder]["traces"]:
        if item["scenario"] == scenario:
            return str(item["traceId"])
    raise KeyError((folder, scenario))


SETUP = "create_agent"
"""make_index's label of a trace of the framework's set-up (OpenLLMetry's and OpenLIT's one
``create_agent`` span of a graph being built): no part of the scenario."""


def scenarios(folder: str) -> list[str]:
    """The scenario parts of a folder's traces, in capture order (set-up traces left out)."""
    return [item["scenario"] for item in INDEX[folder]["traces"] if item["scenario"] != SETUP]


def fixture_trace(folder: str, scenario: str) -> Trace:
    """A fresh ``Trace`` of one scenario of a fixture folder (with its log records)."""
    trace_id = trace_id_of(folder, scenario)
    logs = [log for log in fixture_logs(folder) if log.get("trace_id") == trace_id]
    return Trace.from_rows(fixture_rows(folder), logs=logs, trace_id=trace_id)


def scenario_tools(city: str) -> list[tuple[str, Any, Any, str]]:
    """The scenario's tool calls for a city: (name, args, result, state)."""
    return [
        (
            "get_weather",
            {"city": city},
            {"city": city, "temperatureC": 18, "condition": "cloudy"},
            "result",
        ),
        ("convert_temperature", {"celsius": 18}, {"fahrenheit": 64.4}, "result"),
    ]


CASES = [(folder, scenario) for folder in FOLDERS for scenario in scenarios(folder)]
ALL_CASES = [(folder, scenario) for folder in ALL_FOLDERS for scenario in scenarios(folder)]


_ids = itertools.count(1)
TRACE_ID = "0123456789abcdef0123456789abcdef"


def span_id() -> str:
    return f"{next(_ids):016x}"


def row(
    name: str,
    *,
    span_id: str,
    parent: str | None = None,
    start_ms: float = 0,
    end_ms: float | None = 1,
    attributes: dict[str, Any] | None = None,
    status: str = "UNSET",
    status_message: str | None = None,
    events: list[dict[str, Any]] | None = None,
    trace_id: str = TRACE_ID,
) -> dict[str, Any]:
    """One span row dict in the shape of INTERFACES.md."""
    base_ns = 1_700_000_000_000_000_000
    start = base_ns + int(start_ms * 1_000_000)
    end = None if end_ms is None else base_ns + int(end_ms * 1_000_000)
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent,
        "project": "default",
        "service_name": "test",
        "name": name,
        "kind": "INTERNAL",
        "start_time_ns": start,
        "end_time_ns": end,
        "duration_ms": None if end is None else (end - start) / 1e6,
        "status_code": status,
        "status_message": status_message,
        "attributes": attributes or {},
        "resource_attributes": {"service.name": "test"},
        "events": events or [],
        "links": [],
        "scope_name": "test",
        "scope_version": None,
    }
