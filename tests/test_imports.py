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
    "tracescore.cli": HEAVY,
}


def _loaded_after_import(module: str) -> set[str]:
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


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
