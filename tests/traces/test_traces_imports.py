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


def _room_imports() -> dict[str, set[str]]:
    """Module → the room modules it imports at import time (not under TYPE_CHECKING, not inside
    functions)."""
    import ast
    from pathlib import Path

    import tracescore.traces as traces

    room = Path(traces.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in room.glob("_*.py"):
        tree = ast.parse(path.read_text())
        deps: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module)
                else:
                    deps.update(alias.name for alias in node.names)
        graph[path.stem] = deps
    return graph


def test_the_room_has_no_import_circle_and_adapters_do_not_import_assembly() -> None:
    graph = _room_imports()
    for adapter in [m for m in graph if m.startswith("_adapt")]:
        assert not graph[adapter] & {"_trace", "_tree", "_targets", "_runs"}, adapter
    assert graph["_span"] <= {"_values"}
    # Depth-first search for a cycle among import-time imports.
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in graph.get(module, ()):
            assert state.get(dep) != 1, " → ".join([*path, module, dep])
            if dep not in state:
                visit(dep, [*path, module])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [])
