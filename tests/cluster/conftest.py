"""Cluster suite fixtures: one throwaway PostgreSQL per session, a fresh database per test, a
node's store with the lake attached (real DuckLake files in the test's temp dir)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tracescore.cluster import ClusterNode, ClusterSettings
from tracescore.store import CheckpointPolicy, Store
from tracescore.testing import PostgresServer


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL 15 on a free loopback port for the whole suite."""
    with PostgresServer() as server:
        yield server


@pytest.fixture
def pg_dsn(postgres: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh database for this test."""
    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:50]
    return postgres.create_database(f"t_{name}")


@pytest.fixture
def make_node(pg_dsn: str, tmp_path: Path) -> Iterator[Callable[..., tuple[Any, Any, Any]]]:
    """``make_node("node-1", **settings)`` → (node, store, reader): a node's store opened with
    the node's hook (and ``checkpoint``, the store's policy, when given) and the node started
    (stopped and closed after the test)."""
    opened: list[tuple[ClusterNode, Store]] = []

    def make(node_id: str = "node-1", *, start: bool = True,
             checkpoint: CheckpointPolicy | None = None, **options: Any
             ) -> tuple[Any, Any, Any]:
        settings = ClusterSettings(node_id=node_id, postgres=pg_dsn,
                                   data_path=str(tmp_path / "lake"),
                                   **{"flush_interval_seconds": 3600, **options})
        node = ClusterNode(settings)
        store = Store(tmp_path / f"{node_id}.duckdb", on_connect=node.on_connect,
                      checkpoint=checkpoint).open()
        opened.append((node, store))
        reader = node.start(store) if start else None
        return node, store, reader

    yield make
    for node, store in reversed(opened):
        node.stop(flush=False)
        store.close()
