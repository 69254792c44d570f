"""Shared fixtures: the scripted OpenAI-compatible judge server, env isolation, fixture paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracescore.testing import ScriptedLLMServer

FIXTURES = Path(__file__).parent / "fixtures"

# litellm must never fetch its price map from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


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
