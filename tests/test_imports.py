"""Import rules: rooms stay cheap and obey the arrows of DESIGN.md."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("litellm", "duckdb", "fastapi", "grpc", "apscheduler")

# room -> heavy modules that must NOT be loaded by importing it.
FORBIDDEN = {
    "tracescore": HEAVY,
    "tracescore.model": HEAVY,
    "tracescore.scoring": HEAVY,
    "tracescore.scorers": HEAVY,
    "tracescore.evals": HEAVY,
    "tracescore.datasets": HEAVY,
    "tracescore.traces": HEAVY,
    "tracescore.testing": HEAVY,
    "tracescore.ingest": ("litellm", "duckdb", "fastapi", "apscheduler"),
    "tracescore.store": ("litellm", "fastapi", "grpc", "apscheduler"),
    "tracescore.live": ("litellm", "fastapi", "grpc"),
    "tracescore.labels": HEAVY,
    "tracescore.cli": HEAVY,
    "tracescore.cluster": (*HEAVY, "psycopg"),
}

# room -> tracescore rooms it must not import (DESIGN.md's arrows point one way).
ARROWS = {
    "tracescore.model": (
        "scoring", "scorers", "evals", "traces", "store", "ingest", "live", "server"),
    "tracescore.scoring": ("scorers", "evals", "traces", "store", "ingest", "live", "server"),
    "tracescore.scorers": ("evals", "traces", "store", "ingest", "live", "server"),
    "tracescore.traces": ("scoring", "scorers", "evals", "store", "ingest", "live", "server"),
    "tracescore.evals": ("datasets", "store", "ingest", "live", "server"),
    "tracescore.datasets": ("store", "ingest", "live", "server"),
    "tracescore.ingest": ("scoring", "scorers", "evals", "traces", "live", "server"),
    "tracescore.store": ("scoring", "scorers", "evals", "traces", "ingest", "live", "server"),
    "tracescore.live": ("server", "evals"),
    "tracescore.cluster": ("scoring", "scorers", "evals", "traces", "ingest", "live", "server"),
    "tracescore.labels": ("evals", "datasets", "traces", "ingest", "live", "server"),
}
# The labels room sits above these: none of them may load it.
for _room in ("model", "scoring", "scorers", "traces", "evals", "datasets", "ingest", "store"):
    ARROWS[f"tracescore.{_room}"] = (*ARROWS[f"tracescore.{_room}"], "labels")


def _loaded_after_import(module: str) -> set[str]:
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def _rooms_after_import(module: str) -> set[str]:
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "print('\\n'.join(m.split('.')[1] for m in sys.modules "
        "if m.startswith('tracescore.') and m.count('.') >= 1))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("module", sorted(ARROWS))
def test_room_imports_only_rooms_below_it(module: str) -> None:
    loaded = _rooms_after_import(module)
    wrong = sorted(loaded.intersection(ARROWS[module]))
    assert wrong == [], f"importing {module} loaded the rooms {wrong}"


@pytest.mark.parametrize("module", sorted(FORBIDDEN))
def test_room_import_is_light(module: str) -> None:
    loaded = _loaded_after_import(module)
    heavy = sorted(loaded.intersection(FORBIDDEN[module]))
    assert heavy == [], f"importing {module} loaded {heavy}"


def test_cli_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "tracescore" in out.stdout
