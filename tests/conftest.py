"""Shared fixtures: the scripted OpenAI-compatible judge server, env isolation, fixture paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tracescore.testing import ScriptedLLMServer

FIXTURES = Path(__file__).parent / "fixtures"

# litellm must never fetch its price map from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# tests/cluster needs the [cluster] extra (duckdb 1.5.5 with the DuckLake and postgres
# extensions, psycopg) and PostgreSQL binaries, which the default environment does not have
# (it keeps the newest duckdb): `make test-cluster` runs it in .venv-cluster, and .ci/run runs
# both. Here it is left out of collection, said in the header of every run.
CLUSTER_SUITE = bool(os.environ.get("TRACESCORE_CLUSTER_SUITE"))
collect_ignore = [] if CLUSTER_SUITE else ["cluster"]


def _cluster_note() -> str:
    if CLUSTER_SUITE:
        return "tests/cluster: included (TRACESCORE_CLUSTER_SUITE is set)"
    return ("tests/cluster: not collected here (it needs the [cluster] extra and PostgreSQL); "
            "run it with `make test-cluster`")


def pytest_report_header() -> str:
    """Say whether tests/cluster is in this run, and why not (verbose runs)."""
    return _cluster_note()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The same at the end of every run, quiet ones too (``make test`` runs with -q)."""
    terminalreporter.write_line(_cluster_note())


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop TRACESCORE_* and provider keys so tests do not depend on the caller's shell."""
    for name in list(os.environ):
        if name.startswith("TRACESCORE_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scripted")


@pytest.fixture(scope="session")
def _llm_server_session() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(_llm_server_session: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (reset for each test).

    Point litellm at it with ``model="openai/<name>"`` and ``api_base=llm_server.url``.
    """
    _llm_server_session.reset()
    yield _llm_server_session
    _llm_server_session.reset()


@pytest.fixture
def fixtures_dir() -> Path:
    """tests/fixtures: captured OTLP payloads from real clients."""
    return FIXTURES
