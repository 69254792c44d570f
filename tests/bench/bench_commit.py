"""Writer commit cost by batch size: CPU per span commit, split as the writer's stats split it.

Run: ``.venv/bin/python tests/bench/bench_commit.py [--sizes 16 64 512] [--commits 300]``

Each size stores ``--commits`` export batches (``bench_ingest``'s GenAI spans, 8 spans per
trace, fresh trace ids per batch) one commit each, through the store's real writer on a temp
file, after 50 warm-up commits, and prints the process CPU per commit and per span with the
writer's split (span insert, the ``traces`` fold, COMMIT). A small batch is what a low-traffic
agent sends (an SDK exporting a few spans per request), where the fixed part of a commit is
what it costs. The baseline in the same run: the fold's per-batch aggregate by trace in Arrow
(``aggregate_by_trace``, what the writer runs) against the same aggregate as the SQL the exact
recompute runs in DuckDB (``_traces_table._AGGREGATE``), on the same batches. Last, the floor
under any commit: a 16-row INSERT from an Arrow view in a transaction of its own, into plain
tables of 6 and of 30 VARCHAR columns, which shows what DuckDB costs per statement and per column
written, with the view registered and dropped around the statement against one registered once
and lent to it (``arrow_view`` on the writer's pool, what the writer does). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "bench")]

_WARMUP = 50


def _batches(spans: int, count: int) -> list[Any]:
    import bench_ingest

    from tracescore.ingest._columnar import decode_traces_columnar

    bench_ingest.SPANS_PER_REQUEST = spans
    bench_ingest.TRACES_PER_REQUEST = max(1, spans // 8)
    return [decode_traces_columnar(bench_ingest.build_body(seed)[0])[0] for seed in range(count)]


def _commits(spans: int, commits: int) -> None:
    from tracescore.store import Store

    batches = _batches(spans, commits + _WARMUP)
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "bench.duckdb") as store:
        for batch in batches[:_WARMUP]:
            store.write_spans_sync(batch)
        names = ("insert_ms", "traces_ms", "commit_ms")
        before = {name: getattr(store.stats(), name) for name in names}
        cpu = time.process_time()
        for batch in batches[_WARMUP:]:
            store.write_spans_sync(batch)
        cpu = (time.process_time() - cpu) / commits
        after = {name: getattr(store.stats(), name) for name in names}
    split = {name: (after[name] - before[name]) / commits for name in names}
    print(f"{spans:>6} spans/commit: {cpu * 1e3:6.2f} ms CPU per commit "
          f"({cpu / spans * 1e6:7.1f} µs per span); span insert {split['insert_ms']:.2f} ms, "
          f"traces fold {split['traces_ms']:.2f} ms, COMMIT {split['commit_ms']:.2f} ms (wall)")


def _aggregates(spans: int, rounds: int) -> None:
    import duckdb

    from tracescore.store._trace_batch import aggregate_by_trace
    from tracescore.store._traces_table import _AGGREGATE

    batches = _batches(spans, rounds)
    now = datetime.now(UTC).replace(tzinfo=None)
    conn = duckdb.connect(config={"threads": 1})
    sql = _AGGREGATE.format(first="?::TIMESTAMP", last="?::TIMESTAMP", source="batch")

    def in_duckdb(batch: Any) -> None:
        conn.register("batch", batch)
        conn.sql(sql, params=[now, now]).to_arrow_table()
        conn.unregister("batch")

    timed = {}
    for label, run in (("Arrow", lambda b: aggregate_by_trace(b, now)), ("DuckDB SQL", in_duckdb)):
        for batch in batches[:10]:
            run(batch)
        cpu = time.process_time()
        for batch in batches:
            run(batch)
        timed[label] = (time.process_time() - cpu) / rounds * 1e3
    print(f"{spans:>6} spans: aggregate by trace in Arrow {timed['Arrow']:.2f} ms, as DuckDB SQL "
          f"{timed['DuckDB SQL']:.2f} ms ({timed['DuckDB SQL'] / timed['Arrow']:.1f}×)")


def _floor(columns: int, commits: int, *, pooled: bool) -> None:
    import duckdb
    import pyarrow as pa

    from tracescore.store import arrow_view
    from tracescore.store._views import ViewPool

    with tempfile.TemporaryDirectory() as folder:
        conn = duckdb.connect(str(Path(folder) / "floor.duckdb"))
        names = [f"c{k}" for k in range(columns)]
        conn.execute(f"CREATE TABLE t ({', '.join(f'{n} VARCHAR' for n in names)})")
        tables = [pa.table({n: [f"v{i}_{j}_{n}" for j in range(16)] for n in names})
                  for i in range(commits + _WARMUP)]
        pool = ViewPool()  # not connected: it lends nothing, each statement registers its view
        if pooled:
            pool.connect(conn)
        pool.serve()

        def commit(table: Any) -> None:
            conn.execute("BEGIN TRANSACTION")
            with arrow_view(conn, table) as view:
                conn.execute(f"INSERT INTO t SELECT * FROM {view}")
            conn.execute("COMMIT")

        for table in tables[:_WARMUP]:
            commit(table)
        cpu = time.process_time()
        for table in tables[_WARMUP:]:
            commit(table)
        cpu = (time.process_time() - cpu) / commits
        conn.close()
    how = "a view registered once (the writer's)" if pooled else "a view registered for it"
    print(f"  16 rows into {columns:>2} VARCHAR columns from {how}: {cpu * 1e3:.2f} ms CPU per "
          "commit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 512])
    parser.add_argument("--commits", type=int, default=300)
    args = parser.parse_args()
    print(f"writer commits ({args.commits} per size, after {_WARMUP} warm-up commits):")
    for spans in args.sizes:
        _commits(spans, args.commits)
    print("the traces fold's aggregate alone (one DuckDB thread):")
    for spans in args.sizes:
        _aggregates(spans, 200)
    print("the floor: BEGIN, an INSERT from an Arrow view, COMMIT (alternating):")
    for columns in (6, 30):
        for pooled in (False, True, False, True):
            _floor(columns, args.commits, pooled=pooled)


if __name__ == "__main__":
    main()
