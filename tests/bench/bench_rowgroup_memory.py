"""What DuckDB keeps in memory per row group, and what reopening the file gives back (issue 27,
item 13: the server's RSS under a sustained load).

Run: ``.venv/bin/python tests/bench/bench_rowgroup_memory.py [--checkpoints 1000] [--columns 100]``

With its vacuum off (the server's default, ``duckdb_vacuum``), every checkpoint ends a row group
in each table it appended to, and DuckDB keeps per-column state for each row group while the
database stays open, outside ``memory_limit``. This script appends 10 rows to a table of
``--columns`` columns and checkpoints, ``--checkpoints`` times, on a temp file at a 64 MB
memory limit, printing the process RSS as it goes; then closes and reopens the file in the same
process and reads and appends again; then does the same in a fresh process (the baseline: what
the file costs to open, read and append to). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_CONFIG = {"memory_limit": "64MB", "max_vacuum_tasks": 0, "threads": 1}


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def _rows(columns: int) -> Any:
    import pyarrow as pa

    return pa.table({
        f"c{i}": (pa.array([f"value {j}" for j in range(10)]) if i % 2
                  else pa.array(list(range(10)), pa.int64()))
        for i in range(columns)
    })


def _append(conn: Any, rows: Any) -> None:
    conn.register("batch", rows)
    conn.execute("INSERT INTO t SELECT * FROM batch")
    conn.unregister("batch")
    conn.execute("CHECKPOINT")


def _touch(conn: Any, rows: Any, label: str, base: float) -> None:
    print(f"  {label:<34} {_rss_mb() - base:7.1f} MB")
    conn.execute("SELECT count(*) FROM t").fetchall()
    conn.execute("SELECT max(c2) FROM t").fetchall()
    print(f"  {'+ a count and a column scan':<34} {_rss_mb() - base:7.1f} MB")
    _append(conn, rows)
    print(f"  {'+ an append and a checkpoint':<34} {_rss_mb() - base:7.1f} MB")


def build(path: Path, checkpoints: int, columns: int) -> None:
    import duckdb

    rows = _rows(columns)
    base = _rss_mb()
    conn = duckdb.connect(str(path), config=_CONFIG)
    kinds = ("VARCHAR", "BIGINT")
    conn.execute("CREATE TABLE t (" + ", ".join(
        f"c{i} {kinds[0] if i % 2 else kinds[1]}" for i in range(columns)) + ")")
    print(f"one process: RSS above the process's start ({columns} columns, 10 rows per commit)")
    step = max(1, checkpoints // 4)
    for n in range(1, checkpoints + 1):
        _append(conn, rows)
        if n % step == 0:
            groups = conn.execute(
                "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')").fetchall()
            print(f"  after {n:>5} checkpoints ({groups[0][0]:>5} row groups) "
                  f"{_rss_mb() - base:7.1f} MB")
    conn.close()
    gc.collect()
    print(f"  {'closed':<34} {_rss_mb() - base:7.1f} MB")
    conn = duckdb.connect(str(path), config=_CONFIG)
    _touch(conn, rows, "reopened in the same process", base)
    conn.close()


def fresh(path: Path, columns: int) -> None:
    import duckdb

    rows = _rows(columns)
    base = _rss_mb()
    print("a fresh process opening the same file: RSS above its start")
    conn = duckdb.connect(str(path), config=_CONFIG)
    _touch(conn, rows, "opened", base)
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--fresh", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fresh is not None:
        fresh(args.fresh, args.columns)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rowgroups.duckdb"
        build(path, args.checkpoints, args.columns)
        subprocess.run([sys.executable, __file__, "--fresh", str(path),
                        "--columns", str(args.columns)], check=True)


if __name__ == "__main__":
    main()
