"""Server fixtures: real ``tracescore serve`` subprocesses on loopback ports, OTLP helpers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_process import ServerProcess, running_server

SMALL_LIMIT_CONFIG = """
[server]
max_body_bytes = 4194304
sql_timeout_seconds = 1.0
sql_row_limit = 100
"""


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the read/write tests: 4 MiB body limit, 1 s SQL limit, 100-row cap."""
    root = tmp_path_factory.mktemp("server")
    config = root / "tracescore.toml"
    config.write_text(SMALL_LIMIT_CONFIG)
    with running_server(root / "db" / "tracescore.duckdb", args=["--config", str(config)]) as s:
        yield s


@pytest.fixture
def project() -> str:
    """A project name unique to the test (sent as x-tracescore-project) to isolate its rows."""
    return f"p-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def db_dir(tmp_path: Path) -> Path:
    """A directory for a test's own database."""
    path = tmp_path / "db"
    path.mkdir()
    return path
