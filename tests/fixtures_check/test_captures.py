"""Every captured client folder (one with a CLIENT.json, issue 11) decodes with the real ingest
decoder, and INDEX.json labels its traces the way CLIENT.json says the client played the
scenario. What the transform makes of these traces is tested in tests/traces."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tracescore.ingest import span_dicts_from_otlp

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INDEX: dict[str, Any] = json.loads((FIXTURES / "INDEX.json").read_text())
CAPTURES = sorted(p.parent.name for p in FIXTURES.glob("*/CLIENT.json"))
CLIENT_KEYS = {"client", "versions", "instrumentation", "wire_format", "agent_name",
               "scenario_parts", "where", "gaps", "current_transform"}
GAP_ASSERTIONS = {"input", "history", "system", "output", "tool_calls", "tool_args", "tool_results",
                  "target",
                  "trajectory", "tokens", "workflow", "handoff", "nested_agent", "session",
                  "agent_name", "tool_spans", "history_tools", "workflow_shape"}
WHERE_KEYS = {"user_question", "system_prompt", "history", "final_text", "tool_args",
              "tool_results"}


def _client(folder: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / folder / "CLIENT.json").read_text())
    return data


def _rows(folder: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for body in sorted((FIXTURES / folder).glob("*-traces.b64")):
        meta = json.loads((FIXTURES / folder / body.name.replace(".b64", ".meta.json")).read_text())
        rows += span_dicts_from_otlp(base64.b64decode(body.read_text()),
                                     content_type=meta["content_type"])
    return rows


def test_there_are_captures() -> None:
    assert "py-openai-plain-openinference" in CAPTURES


@pytest.mark.parametrize("folder", CAPTURES)
def test_capture_decodes_to_the_flat_spans(folder: str) -> None:
    rows = _rows(folder)
    flat = json.loads((FIXTURES / folder / "spans.flat.json").read_text())
    assert sorted(r["span_id"] for r in rows) == sorted(s["spanId"] for s in flat)
    assert {r["trace_id"] for r in rows} == {s["traceId"] for s in flat}
    model_requests = (FIXTURES / folder / "requests.jsonl").read_text().splitlines()
    assert model_requests, "the client made no request to the LLM stand-in"


@pytest.mark.parametrize("folder", CAPTURES)
def test_index_labels_match_the_client(folder: str) -> None:
    client = _client(folder)
    assert set(client) >= CLIENT_KEYS
    assert set(client["where"]) >= WHERE_KEYS
    entry = INDEX[folder]
    labels = [t["scenario"] for t in entry["traces"] if t["scenario"] != "create_agent"]
    assert labels == client["scenario_parts"]
    assert sorted(client["current_transform"]) == sorted(labels)
    trace_ids = {r["trace_id"]: r for r in _rows(folder)}
    for item in entry["traces"]:
        assert item["traceId"] in trace_ids
        assert item["root"], f"{item['traceId']} has no root span"
    for gap in client["gaps"]:
        assert set(gap) == {"assertion", "scenarios", "reason"} and gap["reason"]
        assert gap["assertion"] in GAP_ASSERTIONS
        assert set(gap["scenarios"]) <= set(labels)


def _pins(folder: str) -> dict[str, str]:
    """Package → exact version the client installs: a Python client's requirements.txt pins, or
    the packages a JavaScript client's package-lock.json installs at its top level."""
    client_dir = FIXTURES / "clients" / folder
    lock = client_dir / "package-lock.json"
    if lock.exists():
        packages: dict[str, Any] = json.loads(lock.read_text())["packages"]
        prefix = "node_modules/"
        return {
            path.removeprefix(prefix).lower(): str(entry.get("version"))
            for path, entry in packages.items()
            if path.startswith(prefix) and "/node_modules/" not in path.removeprefix(prefix)
        }
    requirements = client_dir / "requirements.txt"
    pins = dict(
        line.lower().split("==", 1)
        for line in requirements.read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    return {name.split("[", 1)[0]: pin for name, pin in pins.items()}  # "pkg[extra]==1.0"


@pytest.mark.parametrize("folder", CAPTURES)
def test_client_versions_are_the_pinned_ones(folder: str) -> None:
    """CLIENT.json's versions are the ones the client's requirements.txt or package-lock.json
    pins (no drift)."""
    pins = _pins(folder)
    versions = _client(folder)["versions"]
    assert versions
    for package, version in versions.items():
        assert pins.get(package.lower()) == version, (package, version)
