"""The maintained ``traces`` table against the view it replaced, on 100k traces / 1M spans.

Run: ``.venv/bin/python tests/bench/bench_traces_table.py [--traces 100000] [--spans 10]``

Builds one database through the store's writer (group commits of 32k spans, each folding its
batch into ``traces``; the same spans are also committed by a writer without the hook, for the
ingest cost of the hook), then times, in the same run and on the same data:

- the traces list: ``select * from traces order by start_time desc limit 50``
- a group-by: traces, spans, errors and mean duration per service
- a point lookup of one trace's summary

on the table and on the old view (``TRACES_VIEW`` under another name), printing each ratio;
the upgrade migration's fill of ``traces`` from the spans (on the copy written without the hook);
then the totals maintainer's per-tick costs: the ready-traces query, and loading 200 recent
traces' spans with and without the arrival-time bound. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

SERVICES = ("checkout-agent", "support-bot", "search", "planner", "router")


def span_batches(traces: int, per_trace: int, batch: int) -> Any:
    """Column dicts of span rows: ``per_trace`` spans per trace (a root and its children)."""
    import random

    rng = random.Random(7)
    base = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1e9)
    columns: dict[str, list[Any]] = {}

    def flush() -> dict[str, list[Any]]:
        nonlocal columns
        out, columns = columns, {}
        return out

    for t in range(traces):
        trace_id = f"{rng.getrandbits(128):032x}"
        start = base + t * 1_000_000_000
        root = f"{rng.getrandbits(64):016x}"
        service = SERVICES[t % len(SERVICES)]
        for s in range(per_trace):
            span_id = root if s == 0 else f"{rng.getrandbits(64):016x}"
            begin = start + s * 1_000_000
            end = start + 500_000_000 if s == 0 else begin + 900_000
            row = {
                "trace_id": trace_id, "span_id": span_id,
                "parent_span_id": None if s == 0 else root, "project": "default",
                "service_name": service, "name": "agent.run" if s == 0 else f"step-{s}",
                "kind": "INTERNAL", "start_time_ns": begin, "end_time_ns": end,
                "duration_ms": (end - begin) / 1e6,
                "status_code": "ERROR" if (t + s) % 97 == 0 else "OK", "status_message": None,
                "attributes": '{"gen_ai.operation.name":"chat","gen_ai.usage.input_tokens":42}',
                "resource_attributes": f'{{"service.name":"{service}"}}', "events": "[]",
                "links": "[]", "scope_name": "bench", "scope_version": "1",
            }
            for key, value in row.items():
                columns.setdefault(key, []).append(value)
            if len(columns["trace_id"]) >= batch:
                yield flush()
    if columns:
        yield flush()


def write_all(store: Any, traces: int, per_trace: int) -> float:
    """Seconds spent in the writer (commits only, not building the rows)."""
    spent = 0.0
    for columns in span_batches(traces, per_trace, 32_768):
        started = time.perf_counter()
        store.write_spans_sync(columns)
        spent += time.perf_counter() - started
    return spent


def timed(fn: Any, repeat: int = 5) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` runs (after one warm-up)."""
    fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--spans", type=int, default=10, help="spans per trace")
    args = parser.parse_args()

    from tracescore.store import Store, ready_query
    from tracescore.store._schema import TRACES_VIEW

    total = args.traces * args.spans
    with tempfile.TemporaryDirectory() as tmp:
        plain = Store(Path(tmp) / "plain.duckdb", memory_limit="1GB", max_pending_rows=400_000)
        plain.open()
        assert plain._writer is not None
        plain._writer._span_hook = None
        without_hook = write_all(plain, args.traces, args.spans)
        # This store's traces table is empty (no hook): fill it as the upgrade migration does.
        from tracescore.store._traces_table import fill_from_spans_sql

        started = time.perf_counter()
        plain.write_sync(lambda conn: conn.execute(fill_from_spans_sql()))
        migration_s = time.perf_counter() - started
        plain.close()
        store = Store(Path(tmp) / "bench.duckdb", memory_limit="1GB", max_pending_rows=400_000)
        store.open()
        with_hook = write_all(store, args.traces, args.spans)
        print(f"{args.traces:,} traces, {total:,} spans")
        print(f"ingest through the writer: {total / with_hook:,.0f} spans/s with the traces "
              f"hook, {total / without_hook:,.0f} spans/s without "
              f"(hook costs {with_hook / without_hook:.2f}x)")
        print(f"upgrade migration: traces filled from {total:,} spans in {migration_s:.1f} s")

        store.write_sync(lambda conn: conn.execute(
            TRACES_VIEW.replace("VIEW traces AS", "VIEW traces_view AS")))
        some_trace = store.read("SELECT trace_id FROM traces LIMIT 1 OFFSET 777")[0]["trace_id"]
        queries = {
            "list (order by start_time desc limit 50)":
                "SELECT * FROM {t} ORDER BY start_time DESC LIMIT 50",
            "group-by service":
                "SELECT service_name, count(*), sum(span_count), sum(error_count), "
                "avg(duration_ms) FROM {t} GROUP BY 1",
            "one trace's summary": "SELECT * FROM {t} WHERE trace_id = '" + some_trace + "'",
        }
        for label, sql in queries.items():
            table_ms = timed(lambda sql=sql: store.read(sql.format(t="traces")))
            view_ms = timed(lambda sql=sql: store.read(sql.format(t="traces_view")), repeat=3)
            print(f"{label}: table {table_ms:.1f} ms, view {view_ms:.1f} ms "
                  f"({view_ms / table_ms:.0f}x faster)")

        now = datetime.now(UTC).replace(tzinfo=None)
        sql, params = ready_query(settled_before=now, waited_before=now - timedelta(hours=1),
                                  limit=200)
        ready_ms = timed(lambda: store.read(sql, params))
        print(f"maintainer: ready-traces query over {args.traces:,} stale traces "
              f"{ready_ms:.1f} ms per tick")
        recent = store.read("SELECT trace_id, first_received_at FROM traces "
                            "ORDER BY first_received_at DESC LIMIT 200")
        ids = [r["trace_id"] for r in recent]
        since = min(r["first_received_at"] for r in recent)
        bounded = timed(lambda: store.fetch_recent_spans(ids, since=since))
        epoch = datetime(2000, 1, 1, tzinfo=UTC).replace(tzinfo=None)
        unbounded = timed(lambda: store.fetch_recent_spans(ids, since=epoch), repeat=3)
        print(f"maintainer: spans of 200 recent traces {bounded:.1f} ms with the arrival "
              f"bound, {unbounded:.1f} ms without ({unbounded / bounded:.1f}x)")
        store.close()


if __name__ == "__main__":
    main()
