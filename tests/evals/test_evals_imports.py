"""Importing tracescore.evals stays cheap: no duckdb, litellm, fastapi or httpx."""

from __future__ import annotations

import subprocess
import sys


def test_importing_evals_loads_no_heavy_module() -> None:
    code = (
        "import sys, tracescore.evals, tracescore.testing; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert loaded.isdisjoint({"duckdb", "litellm", "fastapi", "httpx", "grpc", "apscheduler"})


def test_public_names_import_as_spelled() -> None:
    import tracescore
    from tracescore.evals import (  # noqa: F401
        AgentResponse,
        AgentScorerConfig,
        EvalItem,
        EvalResult,
        WorkflowRunResult,
        WorkflowScorerConfig,
        run_evals,
        run_evals_sync,
    )

    assert tracescore.run_evals is run_evals
    assert tracescore.EvalResult is EvalResult
