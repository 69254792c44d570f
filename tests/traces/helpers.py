"""Helpers for the traces tests: captured fixture traces (decoded by the real ingest decoder) and
small span-row builders for edge cases."""

from __future__ import annotations

import base64
import itertools
import json
from functools import cache
from pathlib import Path
from typing import Any

from tracescore.ingest import span_dicts_from_otlp
from tracescore.traces import Trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INDEX: dict[str, Any] = json.loads((FIXTURES / "INDEX.json").read_text())
SCENARIO: dict[str, Any] = json.loads((FIXTURES / "SCENARIO.json").read_text())
# Only the shared captures for now: the issue-11 client captures (folders with a CLIENT.json, whose
# `current_transform` says what today's transform gets wrong) join as the transform learns them.
FOLDERS = sorted(f for f in INDEX if not (FIXTURES / f / "CLIENT.json").exists())


@cache
def fixture_rows(folder: str) -> tuple[dict[str, Any], ...]:
    """Span rows of a fixture folder: its captured request body through ``span_dicts_from_otlp``."""
    body = base64.b64decode((FIXTURES / folder / "0001-traces.b64").read_text())
    content_type = json.loads((FIXTURES / folder / "0001-traces.meta.json").read_text())[
        "content_type"
    ]
    return tuple(span_dicts_from_otlp(body, content_type=content_type))


def trace_id_of(folder: str, scenario: str) -> str:
    for item in INDEX[folder]["traces"]:
        if item["scenario"] == scenario:
            return str(item["traceId"])
    raise KeyError((folder, scenario))


def scenarios(folder: str) -> list[str]:
    return [item["scenario"] for item in INDEX[folder]["traces"]]


def fixture_trace(folder: str, scenario: str) -> Trace:
    """A fresh ``Trace`` of one scenario of a fixture folder."""
    return Trace.from_rows(fixture_rows(folder), trace_id=trace_id_of(folder, scenario))


CASES = [(folder, scenario) for folder in FOLDERS for scenario in scenarios(folder)]

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
