"""Store fixtures: a Store on a temp DuckDB file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tracescore.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An open Store on a fresh temp file, closed after the test."""
    with Store(tmp_path / "db" / "tracescore.duckdb", sql_timeout_s=10) as opened:
        yield opened
