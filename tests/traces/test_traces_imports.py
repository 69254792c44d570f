"""The traces room imports only model (and pydantic/orjson): no DuckDB, FastAPI, litellm or grpc."""

from __future__ import annotations

import subprocess
import sys


def test_traces_room_import_is_light() -> None:
    code = (
        "import sys, tracescore.traces as t; "
        "t.Trace.from_rows([]).steps; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), '|', "
        "' '.join(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules "
        "if m.startswith('tracescore.')})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    top, rooms = out.stdout.split("|")
    loaded = set(top.split())
    assert loaded.isdisjoint(
        {"duckdb", "fastapi", "litellm", "grpc", "apscheduler", "httpx", "pyarrow"}
    )
    assert set(rooms.split()) == {"tracescore.model", "tracescore.traces"}


def test_public_names_resolve_from_the_package_root() -> None:
    import tracescore
    import tracescore.traces as traces

    for name in (
        "Trace",
        "load_trace",
        "trace_to_agent_run",
        "trace_to_span_run",
        "extract_trajectory_from_trace",
    ):
        assert getattr(tracescore, name) is getattr(traces, name)
    for name in traces.__all__:
        assert hasattr(traces, name), name
