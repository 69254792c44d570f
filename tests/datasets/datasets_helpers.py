"""Helpers for the datasets tests: a database file holding the captured fixture traces."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INDEX: dict[str, Any] = json.loads((FIXTURES / "INDEX.json").read_text())
SCENARIO: dict[str, Any] = json.loads((FIXTURES / "SCENARIO.json").read_text())
AGENT_FOLDERS = sorted(f for f in INDEX if not (FIXTURES / f / "CLIENT.json").exists())
"""The four shared captures (mastra, openinference, openai-v2, aisdk); folders with a CLIENT.json
are per-client captures with scenarios of their own."""


def body(folder: str) -> bytes:
    """The captured OTLP request body of a fixture folder."""
    return base64.b64decode((FIXTURES / folder / "0001-traces.b64").read_text())


def trace_id(folder: str, scenario: str) -> str:
    """The trace id of one scenario (turn1, turn2, workflow) in a folder."""
    for item in INDEX[folder]["traces"]:
        if item["scenario"] == scenario:
            return str(item["traceId"])
    raise KeyError((folder, scenario))


def has(folder: str, scenario: str) -> bool:
    """True when the folder captured that scenario."""
    return any(item["scenario"] == scenario for item in INDEX[folder]["traces"])


def load_fixtures(store: Any) -> None:
    """Write every fixture folder's captured request into ``store`` through the real decoder."""
    from tracescore.ingest import decode_request

    for folder in AGENT_FOLDERS:
        store.write_spans_sync(decode_request(body(folder), encoding="protobuf", kind="traces"))
