"""Cluster mode's storage side: flush CPU per row, catalog retries of three writers, and a trace
lookup bounded by its arrival range on a large lake.

Run: ``make bench-cluster`` (``.venv-cluster/bin/python tests/bench/bench_cluster.py
[--rows 50000] [--writers 3] [--seconds 40] [--lake-rows 10000000]``). It starts a throwaway
PostgreSQL (``tracescore.testing.PostgresServer``) and puts the lake in a temp directory, then:

1. Flush CPU per row: spans (~1 KB each, attributes as real agents send them) committed
   through a node's writer (the single-node ingest commit, the baseline of the same run), then
   flushed to the lake in one flush and in flushes of one 5-second window each, then 40 flushes
   of 200 spans (a quiet node, where a flush's fixed cost is most of it); process CPU (DuckDB's
   threads included) per row and per flush.
2. Catalog retries: ``--writers`` processes, each a node writing 2,000 spans and flushing every
   1-5 s for ``--seconds``; failed DuckLake commits seen by PostgreSQL (its transaction
   rollbacks on the catalog database; DuckLake retries the catalog part of a commit itself) and
   whole flushes run again, per flush.
3. A trace lookup at ``--lake-rows`` lake rows (20 commits over ten days of arrival, trace ids
   in no order, as real traffic has them): ``ClusterStore.fetch_trace_rows`` bounded by the
   trace's ``traces`` row (the PostgreSQL lookup and the node's unflushed rows included), and a
   lake read by trace id alone (no arrival bound), medians.

Prints figures; asserts nothing. Without the cluster extra it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

BASE_NS = 1_764_000_000_000_000_000


def spans(start: int, count: int) -> list[dict[str, Any]]:
    """``count`` spans of ~1 KB (10 per trace) with ids from ``start``."""
    rows = []
    for n in range(start, start + count):
        trace = n // 10
        rows.append({
            "trace_id": f"{trace:032x}", "span_id": f"{n:016x}",
            "parent_span_id": None if n % 10 == 0 else f"{trace * 10:016x}",
            "project": "bench", "service_name": "support-bot", "name": f"step-{n % 10}",
            "kind": "INTERNAL", "start_time_ns": BASE_NS + n * 1000,
            "end_time_ns": BASE_NS + n * 1000 + 500, "status_code": "OK",
            "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                           "gen_ai.usage.input_tokens": 812, "gen_ai.usage.output_tokens": 96,
                           "input.value": "Where is my order 12345? " * 20,
                           "output.value": "It ships tomorrow from the Lyon warehouse. " * 8},
            "resource_attributes": {"service.name": "support-bot", "host.name": "agent-7"},
        })
    return rows


def node(pg_dsn: str, root: Path, node_id: str) -> tuple[Any, Any, Any]:
    from tracescore.cluster import ClusterNode, ClusterSettings
    from tracescore.store import Store

    settings = ClusterSettings(node_id=node_id, postgres=pg_dsn, data_path=str(root / "lake"),
                               flush_interval_seconds=3600)
    cluster = ClusterNode(settings)
    store = Store(root / f"{node_id}.duckdb", on_connect=cluster.on_connect).open()
    reader = cluster.start(store)
    return cluster, store, reader


def flush_cpu(pg: Any, root: Path, rows: int) -> None:
    cluster, store, _ = node(pg.create_database("bench_flush"), root / "flush", "node-1")
    try:
        batch = spans(0, rows)
        began = time.process_time()
        for i in range(0, rows, 2048):
            store.write_spans_sync(batch[i:i + 2048])
        ingest = time.process_time() - began
        began = time.process_time()
        result = cluster.flusher.flush()
        one = time.process_time() - began
        assert result is not None and result.spans == rows
        window = 5000  # a 5 s flush interval at 1,000 spans/s
        more = spans(rows, rows)
        total = 0.0
        flushes = 0
        for i in range(0, rows, window):
            for j in range(i, min(i + window, rows), 2048):
                store.write_spans_sync(more[j:min(j + 2048, i + window, rows)])
            began = time.process_time()
            cluster.flusher.flush()
            total += time.process_time() - began
            flushes += 1
        quiet, small = 40, 200  # a node that receives 40 spans/s, flushing every 5 s
        small_total = 0.0
        for i in range(quiet):
            store.write_spans_sync(spans(2 * rows + i * small, small))
            began = time.process_time()
            cluster.flusher.flush()
            small_total += time.process_time() - began
        print(f"flush CPU: {rows} spans (~1 KB); local ingest commits {ingest / rows * 1e6:.1f} "
              f"µs/span (baseline)")
        print(f"  one flush of {rows}: {one / rows * 1e6:.1f} µs/span ({one * 1000:.0f} ms)")
        print(f"  {flushes} flushes of {window}: {total / rows * 1e6:.1f} µs/span, "
              f"{total / flushes * 1000:.0f} ms CPU per flush (fixed costs included)")
        print(f"  {quiet} flushes of {small} (a quiet node): {small_total / quiet * 1000:.1f} ms "
              "CPU per flush")
    finally:
        cluster.stop(flush=False)
        store.close()


WRITER = textwrap.dedent("""
    import random, sys, time
    sys.path[:0] = [{root!r}, {bench!r}]
    from bench_cluster import node, spans
    from pathlib import Path
    cluster, store, _ = node({dsn!r}, Path({dir!r}), {node_id!r})
    deadline = time.monotonic() + {seconds}
    start = {offset}
    while time.monotonic() < deadline:
        store.write_spans_sync(spans(start, 2000))
        start += 2000
        cluster.flusher.flush()
        time.sleep(random.uniform(1.0, 5.0))
    s = cluster.flusher.stats
    print(s.flushes, s.commit_retries, s.failures, s.flush_ms, flush=True)
    cluster.stop(flush=False)
    store.close()
""")


def catalog_retries(pg: Any, root: Path, writers: int, seconds: float) -> None:
    dsn = pg.create_database("bench_writers")
    lake_db = dsn.rsplit("dbname=", 1)[1].split()[0]

    def rollbacks() -> int:
        return int(pg.execute("SELECT xact_rollback FROM pg_stat_database WHERE datname = "
                              f"'{lake_db}'")[0][0])

    # Create the schema and the lake's tables once, before the writers race.
    cluster, store, _ = node(dsn, root / "writers", "setup")
    cluster.stop(flush=False)
    store.close()
    before = rollbacks()
    bench = str(ROOT / "tests" / "bench")
    procs = [subprocess.Popen(
        [sys.executable, "-c", WRITER.format(root=str(ROOT), bench=bench, dsn=dsn,
                                             dir=str(root / "writers"), node_id=f"node-{i}",
                                             seconds=seconds, offset=i * 10_000_000)],
        stdout=subprocess.PIPE, text=True) for i in range(writers)]
    results = [p.communicate(timeout=seconds + 300)[0].split() for p in procs]
    time.sleep(1)
    failed_commits = rollbacks() - before
    flushes = sum(int(r[0]) for r in results)
    again = sum(int(r[1]) for r in results)
    print(f"catalog: {writers} writers, a flush every 1-5 s for {seconds:g} s: {flushes} "
          f"flushes; PostgreSQL rolled back {failed_commits} transactions on the catalog "
          f"database ({failed_commits / max(1, flushes):.2f} per flush; DuckLake's own catalog "
          f"retries); {again} flushes run again whole ({again / max(1, flushes):.2f} per flush); "
          f"mean flush {sum(float(r[3]) for r in results) / max(1, flushes):.0f} ms wall")


def fill_lake(store: Any, rows: int, node_id: str, *, model_calls: bool = False) -> str:
    """``rows`` spans in the lake of ``store`` (10 per trace, 20 commits over ten days of
    arrival; with ``model_calls``, one per trace on its first span, as flushes write them);
    returns the id of the last commit's middle trace."""
    commits = 20
    per = rows // commits
    cur = store.cursor()
    for c in range(commits):
        cur.execute("BEGIN")
        cur.execute(
            "INSERT INTO lake.spans (trace_id, span_id, parent_span_id, project, "
            "service_name, name, kind, start_time, end_time, duration_ms, status_code, "
            "attributes, received_at, node_id) SELECT "
            "md5(((? + range) // 10)::VARCHAR), printf('%016x', ? + range), NULL, 'bench', "
            "'svc', 'step', 'INTERNAL', TIMESTAMP_NS '2026-11-01' + to_microseconds(range), "
            "TIMESTAMP_NS '2026-11-01' + to_microseconds(range + 500), 0.5, 'OK', "
            "'{\"k\": 1}', TIMESTAMP '2026-11-01' + to_hours(? * 24 // ?) "
            "+ to_microseconds(range), ? FROM range(?)",
            [c * per, c * per, c, commits // 10 or 1, node_id, per])
        if model_calls:
            cur.execute(
                "INSERT INTO lake.model_calls (trace_id, span_id, project, service_name, "
                "model, started_at, duration_ms, input_tokens, output_tokens, total_tokens, "
                "cost_usd, received_at, node_id) SELECT md5(((? + range * 10) // 10)::VARCHAR), "
                "printf('%016x', ? + range * 10), 'bench', 'svc', 'gpt-4o-mini', "
                "TIMESTAMP '2026-11-01' + to_microseconds(range * 10), 900.0, 812, 96, 908, "
                "0.0002, TIMESTAMP '2026-11-01' + to_hours(? * 24 // ?) "
                "+ to_microseconds(range * 10 + 9), ? FROM range(?)",
                [c * per, c * per, c, commits // 10 or 1, node_id, per // 10])
        cur.execute("COMMIT")
    cur.close()
    target = (commits - 1) * per + per // 2  # a span of the last commit's middle trace
    return str(store.read("SELECT md5((? // 10)::VARCHAR) AS t", [target])[0]["t"])


def lookup(pg: Any, root: Path, lake_rows: int) -> None:
    import psycopg

    dsn = pg.create_database("bench_lookup")
    cluster, store, reader = node(dsn, root / "lookup", "node-1")
    try:
        began = time.perf_counter()
        trace_id = fill_lake(store, lake_rows, "node-1")
        built = time.perf_counter() - began
        row = store.read("SELECT min(received_at) AS a, max(received_at) AS b FROM lake.spans "
                         "WHERE trace_id = ?", [trace_id])[0]
        with psycopg.connect(dsn) as conn:
            conn.execute("INSERT INTO tracescore.traces (trace_id, first_received_at, "
                         "last_received_at, nodes) VALUES (%s, %s, %s, ARRAY['node-1'])",
                         [trace_id, row["a"], row["b"]])
        bounded = []
        for _ in range(20):
            began = time.perf_counter()
            found = reader.fetch_trace_rows(trace_id)
            bounded.append(time.perf_counter() - began)
        assert len(found) == 10, len(found)
        unbounded = []
        for _ in range(5):
            began = time.perf_counter()
            store.read("SELECT * FROM lake.spans WHERE trace_id = ?", [trace_id])
            unbounded.append(time.perf_counter() - began)
        files = store.read("SELECT count(*) AS n FROM ducklake_list_files('lake', 'spans')")
        print(f"lookup: {lake_rows:,} lake rows in {files[0]['n']} files (built in "
              f"{built:.0f} s): the trace view bounded by its traces row "
              f"{statistics.median(bounded) * 1000:.1f} ms (median of 20), by trace id alone "
              f"{statistics.median(unbounded) * 1000:.0f} ms (median of 5)")
    finally:
        cluster.stop(flush=False)
        store.close()


def main() -> None:
    import duckdb

    if duckdb.__version__ != "1.5.5":
        print(f"bench_cluster: skipped, it needs the cluster extra (duckdb 1.5.5, found "
              f"{duckdb.__version__}); run `make bench-cluster`")
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--lake-rows", type=int, default=10_000_000)
    parser.add_argument("--only", choices=("flush", "catalog", "lookup"))
    args = parser.parse_args()
    from tracescore.testing import PostgresServer

    random.seed(1)
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp, PostgresServer() as pg:
        root = Path(tmp)
        print(f"bench_cluster on {os.cpu_count()} cores, duckdb {duckdb.__version__}")
        if args.only in (None, "flush"):
            flush_cpu(pg, root, args.rows)
        if args.only in (None, "catalog"):
            catalog_retries(pg, root, args.writers, args.seconds)
        if args.only in (None, "lookup"):
            lookup(pg, root, args.lake_rows)


if __name__ == "__main__":
    main()
