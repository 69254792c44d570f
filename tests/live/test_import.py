"""Importing the live room stays cheap: no DuckDB, litellm, FastAPI or APScheduler until used."""

from __future__ import annotations

import subprocess
import sys


def test_import_tracescore_live_is_light() -> None:
    code = ("import sys, tracescore.live; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'duckdb', 'litellm', 'fastapi', 'apscheduler', 'grpc', 'opentelemetry'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
