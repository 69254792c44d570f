"""Cluster mode where no PostgreSQL runs (the default environment): the ``[cluster]`` table is
validated with sentences and documented, the PostgreSQL schema is derived from the local one,
the router's ring moves few traces when a node joins, and ``serve`` with ``[cluster]`` but
without the extra stops with what to install. The cluster suite itself is tests/cluster."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tracescore.cluster import KEYS, ClusterConfigError, parse_cluster, pg_tables
from tracescore.cluster._pg_schema import create_statements
from tracescore.testing import HashRing

ROOT = Path(__file__).resolve().parents[1]
GOOD = {"node_id": "node-1", "postgres": "host=db port=5432 dbname=t user=t",
        "data_path": "/shared/lake"}


def test_no_cluster_table_means_no_cluster() -> None:
    assert parse_cluster({"server": {}}, source="x.toml") is None


def test_a_cluster_table_is_parsed_with_its_defaults() -> None:
    settings = parse_cluster({"cluster": GOOD}, source="x.toml")
    assert settings is not None
    assert settings.data_path == "/shared/lake/"
    assert (settings.flush_interval_seconds, settings.local_retention_seconds) == (5.0, 3600.0)


@pytest.mark.parametrize(("table", "words"), [
    ({**GOOD, "node_id": "node 1"}, "[cluster].node_id must be 1-64 letters"),
    ({k: v for k, v in GOOD.items() if k != "postgres"}, "[cluster].postgres is required"),
    ({**GOOD, "flush_interval_seconds": 0}, "[cluster].flush_interval_seconds"),
    ({**GOOD, "data_path": "s3://bucket/lake"}, "shared directory"),
    ({**GOOD, "flush_every": 3}, "unknown key [cluster].flush_every"),
])
def test_a_bad_cluster_key_is_one_sentence_naming_it(table: dict[str, object],
                                                     words: str) -> None:
    with pytest.raises(ClusterConfigError) as caught:
        parse_cluster({"cluster": table}, source="node.toml")
    assert str(caught.value).startswith("node.toml: ")
    assert words in str(caught.value)


def test_a_password_in_the_connection_string_is_never_echoed() -> None:
    with pytest.raises(ClusterConfigError) as caught:
        parse_cluster({"cluster": {**GOOD, "postgres": "password='s3cret' host=x"}},
                      source="node.toml")
    assert "s3cret" not in str(caught.value)


def test_every_cluster_key_is_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    page = (ROOT / "docs" / "cluster.md").read_text()
    assert [k for k in KEYS if f"`{k}`" not in readme] == []
    assert [k for k in KEYS if f"`{k}`" not in page] == []


def test_the_postgresql_schema_is_derived_from_the_local_tables() -> None:
    from tracescore.store import TABLES

    tables = pg_tables()
    assert {"spans", "logs", "model_calls", "cluster_flushes"}.isdisjoint(tables)
    for name, columns in TABLES.items():
        if name in tables:
            assert [c for c, _ in columns] == list(tables[name].column_names[:len(columns)])
    statements = "\n".join(create_statements(tables.values()))
    assert "CREATE TABLE IF NOT EXISTS tracescore.scoring_decisions" in statements
    assert "PRIMARY KEY (trace_id, span_id, scorer_id, scorer_version)" in statements
    assert "ADD COLUMN IF NOT EXISTS error jsonb" in statements
    assert "models text[]" in statements


def test_a_joining_node_takes_about_its_share_of_the_traces() -> None:
    ids = [i.to_bytes(16, "big") for i in range(1, 20_001)]
    ring = HashRing(["http://a", "http://b", "http://c"])
    before = {t: ring.owner(t) for t in ids}
    assert {ring.owner(t) for t in ids} == {"http://a", "http://b", "http://c"}
    ring.add("http://d")
    moved = [t for t in ids if ring.owner(t) != before[t]]
    assert all(ring.owner(t) == "http://d" for t in moved), "only the new node takes traces"
    assert 0.15 < len(moved) / len(ids) < 0.35


def test_serve_with_a_cluster_table_but_without_the_extra_says_what_to_install(
        tmp_path: Path) -> None:
    import duckdb

    if duckdb.__version__ == "1.5.5":
        pytest.skip("this environment has the cluster extra's duckdb (tests/cluster covers it)")
    config = tmp_path / "node.toml"
    config.write_text('[cluster]\nnode_id = "node-1"\npostgres = "host=127.0.0.1 port=1"\n'
                      f'data_path = "{tmp_path / "lake"}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--config", str(config), "--db",
         str(tmp_path / "n.duckdb"), "--http-port", "0", "--grpc-port", "0"],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "pip install 'tracescore[cluster]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_with_a_bad_cluster_key_stops_before_listening(tmp_path: Path) -> None:
    config = tmp_path / "node.toml"
    config.write_text('[cluster]\nnode_id = "node one"\npostgres = "host=x"\n'
                      'data_path = "/tmp/lake"\n')
    done = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--config", str(config), "--db",
         str(tmp_path / "n.duckdb"), "--http-port", "0", "--grpc-port", "0"],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "[cluster].node_id must be" in done.stderr and "Traceback" not in done.stderr
