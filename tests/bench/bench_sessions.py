"""The ``sessions`` view on 100k traces: is a view over the maintained ``traces`` table fast
enough, or does it need to be a maintained table?

Run: .venv/bin/python tests/bench/bench_sessions.py

Fills ``traces`` (through Arrow, totals computed) with 100,000 traces in 20,000 sessions of 5
turns, then times, best of several runs, each read against the same read on a table holding the
view's rows (what a maintained ``sessions`` table would cost): one session by id, the newest 50
sessions (the dashboard list), the count; and one tick of the live scheduler's session selection
(candidates of its window, then their quiet states), against the same query over every session.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.live import Registry
from tracescore.live._sessions import RECENT_SQL, SCAN_MARGIN, quiet_query
from tracescore.scoring import create_scorer
from tracescore.store import Store, rows_table

EPOCH = datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)


def fill(store: Store, traces: int, per_session: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)
    rows = []
    for index in range(traces):
        at = start + timedelta(seconds=index)
        rows.append({
            "trace_id": f"{index:032x}", "project": "default", "service_name": "agent",
            "root_span_id": f"{index:016x}", "root_span_name": "invoke_agent",
            "start_time": at, "end_time": at + timedelta(seconds=2), "duration_ms": 2000.0,
            "span_count": 8, "error_count": index % 7 == 0, "has_root": True,
            "root_ended": True, "first_received_at": at, "last_received_at": at,
            "model_call_count": 3, "tool_call_count": 2, "input_tokens": 600,
            "output_tokens": 60, "total_tokens": 660, "cost_usd": 0.0002,
            "unpriced_call_count": 0, "models": ["gpt-4o-mini"], "agent_name": "weather",
            "session_id": f"session-{index % (traces // per_session)}",
            "user_id": f"user-{index % 97}", "totals_received_at": at,
        })
    table = rows_table("traces", rows)

    def write(conn: Any) -> None:
        conn.register("bench_traces", table)
        conn.execute("INSERT INTO traces SELECT * FROM bench_traces")
        conn.unregister("bench_traces")

    store.write_sync(write)
    store.write_sync(lambda conn: conn.execute(
        "CREATE TABLE sessions_table AS SELECT * FROM sessions"))


def best_ms(store: Store, sql: str, params: list[Any], runs: int) -> float:
    store.read(sql, params)
    best = float("inf")
    for _ in range(runs):
        began = time.perf_counter()
        store.read(sql, params)
        best = min(best, time.perf_counter() - began)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--per-session", type=int, default=5)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        fill(store, args.traces, args.per_session)
        registry = Registry()
        reg = registry.register(create_scorer("s", "s").generate_score(lambda r, x: 1.0),
                                target="session")
        [last] = store.read("SELECT max(last_received_at) AS at FROM traces")
        now = last["at"] + timedelta(seconds=300)  # the newest trace just went quiet
        settled = now - timedelta(seconds=300)
        window = [settled - timedelta(seconds=2) - SCAN_MARGIN, settled]  # one tick's window
        candidates = [r["session_id"] for r in store.read(RECENT_SQL, window)]
        quiet_sql, quiet_params = quiet_query(reg, now=now, settle_s=300,
                                              since=EPOCH, limit=256,
                                              candidates=candidates)
        full_sql, full_params = quiet_query(reg, now=now, settle_s=300,
                                            since=EPOCH, limit=256)
        reads = [
            ("one session by id", "SELECT * FROM {t} WHERE session_id = ?", ["session-777"]),
            ("newest 50 sessions", "SELECT * FROM {t} ORDER BY last_trace_at DESC LIMIT 50", []),
            ("count of sessions", "SELECT count(*) FROM {t}", []),
        ]
        [count] = store.read("SELECT count(*) AS n FROM sessions")
        print(f"{args.traces} traces in {count['n']} sessions; best of {args.runs} runs")
        print(f"{'read':<28}{'view ms':>10}{'table ms':>10}{'ratio':>8}")
        for label, sql, params in reads:
            view = best_ms(store, sql.format(t="sessions"), params, args.runs)
            table = best_ms(store, sql.format(t="sessions_table"), params, args.runs)
            print(f"{label:<28}{view:>10.1f}{table:>10.1f}{view / table:>8.1f}")
        recent = best_ms(store, RECENT_SQL, window, args.runs)
        quiet = best_ms(store, quiet_sql, quiet_params, args.runs)
        full = best_ms(store, full_sql, full_params, args.runs)
        print(f"scheduler tick, {len(candidates)} candidate sessions: candidates "
              f"{recent:.1f} ms + quiet sessions {quiet:.1f} ms; without candidates "
              f"{full:.1f} ms")


if __name__ == "__main__":
    main()
