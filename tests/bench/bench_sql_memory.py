"""Benchmark: the server's peak RSS while it answers one large SQL query (issue 27 item 4).

Run: .venv/bin/python tests/bench/bench_sql_memory.py [--src DIR]

A real ``tracescore serve`` (default config: ``sql_max_bytes`` 32 MiB) answers queries whose
rows are far larger than the cap; its RSS is sampled every 2 ms. Printed per query: the RSS
before, the peak growth, the answer's size and how long it took; and, as the baseline of the
same run, DuckDB's own floor: the peak growth of a bare DuckDB connection (same
``memory_limit``) that produces the query's first 2,048-row vector and fetches one row of it,
which no client of DuckDB can go below. ``--src DIR`` runs the server from another checkout
(e.g. ``--src /work/main`` for the code before), to compare two versions in one run.

Then the same floor several times over: ``CONCURRENT`` statements of one 2,048-row vector each
posted at once, with ``sql_max_concurrent`` 0 (no limit: every statement holds its vector at
the same time, the baseline), 1 and the default 4 (the statements past the limit wait their
turn), peak growth and wall time of the whole batch.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from server_process import ServerProcess, free_port, peak_rss_growth  # noqa: E402

QUERIES = [
    ("2,048 rows of 1 MB", "SELECT repeat('x', 1000000) AS v FROM range(2048)"),
    ("20,000 rows of 100 KB", "SELECT repeat('x', 100000) AS v FROM range(20000)"),
    ("200,000 rows of 1 KB", "SELECT repeat('x', 1000) AS v FROM range(200000)"),
]
CONCURRENT = 6
CONCURRENT_SQL = "SELECT repeat('x', 250000) AS v FROM range(2048)"  # one ~500 MB vector

_FLOOR = """
import duckdb, psutil, sys, threading, time
process = psutil.Process()
peak = [process.memory_info().rss]
def watch():
    while True:
        peak[0] = max(peak[0], process.memory_info().rss)
        time.sleep(0.002)
threading.Thread(target=watch, daemon=True).start()
conn = duckdb.connect(config={"memory_limit": "256MB"})
before = process.memory_info().rss
cursor = conn.cursor()
cursor.execute(sys.argv[1])
cursor.fetchmany(1)
time.sleep(0.05)
print(peak[0] - before)
"""


def floor_mb(sql: str) -> float:
    """DuckDB's own peak growth for producing the first vector of ``sql``."""
    out = subprocess.run([sys.executable, "-c", _FLOOR, sql], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip()) / 2**20


def measure(server: ServerProcess, sql: str) -> tuple[float, float, float, float]:
    """(RSS before MB, peak growth MB, answer MB, seconds) of one /api/sql request."""
    assert server.process is not None
    before = psutil.Process(server.process.pid).memory_info().rss
    started = time.perf_counter()
    response, growth = peak_rss_growth(server.process.pid, lambda: httpx.post(
        f"{server.url}/api/sql", json={"sql": sql}, timeout=600))
    seconds = time.perf_counter() - started
    assert response.status_code == 200, response.text[:300]
    return before / 2**20, growth / 2**20, len(response.content) / 2**20, seconds


def main() -> None:
    """Start the server, measure each query, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--src", help="run the server from this checkout (PYTHONPATH)")
    options = parser.parse_args()
    env = {"PYTHONPATH": options.src} if options.src else {}
    print(f"server code: {options.src or 'this checkout'}; sql_max_bytes 32 MiB; a fresh "
          "server per query")
    print(f"{'query':24} {'RSS before':>11} {'peak growth':>12} {'DuckDB floor':>13} "
          f"{'answer':>9} {'time':>7}")
    for label, sql in QUERIES:
        with tempfile.TemporaryDirectory(prefix="bench-sql-memory-") as root:
            server = ServerProcess(db=Path(root) / "bench.duckdb", http_port=free_port(),
                                   grpc_port=free_port(), args=("--config", _config(root)),
                                   env=env)
            server.start()
            try:
                before, growth, answer, seconds = measure(server, sql)
            finally:
                server.stop()
        print(f"{label:24} {before:9.0f}MB {growth:10.0f}MB {floor_mb(sql):11.0f}MB "
              f"{answer:7.1f}MB {seconds:6.2f}s")
    print(f"\n{CONCURRENT} statements at once, each one 2,048-row vector of 250 KB values "
          f"(DuckDB floor {floor_mb(CONCURRENT_SQL):.0f} MB each)")
    print(f"{'sql_max_concurrent':20} {'peak growth':>12} {'time':>7}")
    for limit in (0, 1, 4):
        growth, seconds = _at_once(env, limit)
        label = f"{limit} (no limit)" if limit == 0 else str(limit)
        print(f"{label:20} {growth:10.0f}MB {seconds:6.2f}s")


def _at_once(env: dict[str, str], limit: int) -> tuple[float, float]:
    """(peak growth MB, seconds) of ``CONCURRENT`` statements posted together to a fresh
    server with ``sql_max_concurrent = limit``."""
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory(prefix="bench-sql-memory-") as root:
        server = ServerProcess(db=Path(root) / "bench.duckdb", http_port=free_port(),
                               grpc_port=free_port(),
                               args=("--config", _config(root, f"sql_max_concurrent = {limit}")),
                               env=env)
        server.start()
        assert server.process is not None

        def post(_: int) -> int:
            return httpx.post(f"{server.url}/api/sql", json={"sql": CONCURRENT_SQL},
                              timeout=600).status_code

        def batch() -> list[int]:
            with ThreadPoolExecutor(CONCURRENT) as pool:
                return list(pool.map(post, range(CONCURRENT)))

        try:
            started = time.perf_counter()
            statuses, growth = peak_rss_growth(server.process.pid, batch)
            seconds = time.perf_counter() - started
        finally:
            server.stop()
    assert statuses == [200] * CONCURRENT, statuses
    return growth / 2**20, seconds


def _config(root: str, server_lines: str = "") -> str:
    path = os.path.join(root, "bench.toml")
    Path(path).write_text(f"[server]\n{server_lines}\n[live]\nenabled = false\n")
    return path


if __name__ == "__main__":
    main()
