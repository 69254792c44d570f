"""Importing the live room stays cheap: no DuckDB, litellm, FastAPI or APScheduler until used."""

from __future__ import annotations

import subprocess
import sys


def test_import_tracescore_live_is_light() -> None:
    code = ("import sys, tracescore.live; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'duckdb', 'litellm', 'fastapi', 'apscheduler', 'grpc', 'opentelemetry'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _live_import_graph() -> dict[str, set[str]]:
    """Each ``tracescore/live/_*.py`` module → the live modules it imports (at run time, inside
    functions or under ``TYPE_CHECKING``: every ``from ._x import``)."""
    import ast
    from pathlib import Path

    import tracescore.live

    graph: dict[str, set[str]] = {}
    for path in Path(tracescore.live.__file__).parent.glob("_*.py"):
        if path.stem == "__init__":
            continue
        tree = ast.parse(path.read_text())
        graph[path.stem] = {node.module for node in ast.walk(tree)
                            if isinstance(node, ast.ImportFrom) and node.level == 1
                            and node.module}
    return graph


def test_live_modules_import_one_way() -> None:
    """The stages import one way: no module of the live room reaches itself through its
    imports (the scheduler, worker, inline scoring, expansion and spend recording once did)."""
    graph = _live_import_graph()
    assert {"_scheduler", "_worker", "_inline", "_expand", "_spend"} <= set(graph)

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            module = todo.pop()
            if module in seen or module not in graph:
                continue
            seen.add(module)
            todo += graph[module]
        return seen

    circles = sorted(module for module in graph if module in reaches(module))
    assert circles == [], f"live modules in an import circle: {circles}"
    assert "_scheduler" not in set().union(*(reaches(m) for m in
                                             ("_worker", "_inline", "_expand", "_spend")))
