"""PostgreSQL's time for cluster mode's scoring statements with long values, lz4 against pglz.

Two databases on one throwaway server, the schema of ``ensure`` in both, one with its columns
set back to PostgreSQL's default compression (pglz). The same work runs in both, round by
round: decisions with code scores written in batches, judge pairs claimed and completed with
their score and judge executions. The score's input is a real scorer input (the Mastra turn-1
trace), the prompts a few kilobytes, as judges send. Prints the mean execution time per
statement kind in each database (``pg_stat_statements``).

Run: ``make bench-cluster`` (or .venv-cluster/bin/python tests/bench/bench_pg_writes.py
[--pairs 600]); without psycopg (the cluster extra) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_traces import _rows  # noqa: E402

from tracescore.testing import PostgresServer  # noqa: E402
from tracescore.traces import Trace, scorer_input  # noqa: E402

T0 = datetime(2026, 12, 1, 12, 0, 0)  # noqa: DTZ001 - naive UTC, as the tables store
VERSION = ("relevancy", "v1")
PROMPT = "Judge whether the answer addresses the user's question; say why. " * 45


def pair(n: int) -> dict[str, Any]:
    return {"trace_id": f"{n:032x}", "span_id": f"{n:016x}", "scorer_id": VERSION[0],
            "scorer_version": VERSION[1], "decision": "pending", "attempts": 0,
            "score_id": f"score-{n}", "created_at": T0, "updated_at": T0}


def score(n: int, given: dict[str, Any]) -> dict[str, Any]:
    return {"score_id": f"score-{n}", "trace_id": f"{n:032x}", "span_id": f"{n:016x}",
            "scorer_id": VERSION[0], "scorer_version": VERSION[1], "status": "success",
            "score": 0.5, "source": "live", "input": given, "output": given["output"],
            "reason": "The answer gives the weather the user asked for. " * 8,
            "analyze_step_result": {"verdicts": [{"verdict": "yes", "reason": "ok " * 30}] * 3},
            "analyze_prompt": PROMPT, "generate_score_prompt": PROMPT,
            "generate_reason_prompt": PROMPT, "created_at": T0}


def execution(n: int, step: str) -> dict[str, Any]:
    return {"execution_id": f"exec-{n}-{step}", "score_id": f"score-{n}",
            "trace_id": f"{n:032x}", "scorer_id": VERSION[0], "step": step,
            "status": "success", "prompt": PROMPT, "output": {"verdicts": [{"verdict": "yes"}]},
            "raw_output": '{"verdicts": [{"verdict": "yes"}]}', "cost_amount": 0.001,
            "cost_unit": "USD", "total_tokens": 900, "created_at": T0}


def database(pg: PostgresServer, name: str, compression: str) -> Any:
    import psycopg

    from tracescore.cluster import PgCoordination
    from tracescore.cluster._pg_schema import compressible_columns, ensure

    dsn = pg.create_database(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ensure(conn)
        if compression == "lz4" and any(
                how != "l" for _, _, how in compressible_columns(conn.cursor())):
            raise SystemExit("bench_pg_writes: this PostgreSQL was built without lz4")
        if compression != "lz4":
            for table, column, _ in compressible_columns(conn.cursor()):
                conn.execute(f"ALTER TABLE tracescore.{table} ALTER COLUMN {column} "
                             f"SET COMPRESSION {compression}")
    return PgCoordination(lambda: psycopg.connect(dsn))


def main() -> None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        print("bench_pg_writes: skipped, it needs psycopg (the cluster extra); run "
              "`make bench-cluster`")
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=600, help="judged pairs per database")
    args = parser.parse_args()
    given = scorer_input(Trace.from_rows(_rows("mastra-otel-exporter-protobuf", "turn1")))
    with PostgresServer(settings={"shared_preload_libraries": "pg_stat_statements"}) as pg:
        pg.execute("CREATE EXTENSION pg_stat_statements")
        nodes = {c: database(pg, f"bench_{c}", c) for c in ("pglz", "lz4")}
        pg.execute("SELECT pg_stat_statements_reset()")
        now = T0 + timedelta(seconds=1)
        for start in range(0, args.pairs, 6):
            batch = range(start, start + 6)
            for node in nodes.values():
                # six code-scored pairs with their scores, six judge pairs left pending
                node.record_decisions([{**pair(n + 1_000_000), "decision": "scored"}
                                       for n in batch],
                                      [score(n + 1_000_000, given) for n in batch])
                node.record_decisions([pair(n) for n in batch])
                for _ in range(3):
                    claims = node.claim([VERSION], owner="a", now=now, limit=2, lease_s=30)
                    node.complete_many(
                        [(c, {**pair(int(c.trace_id, 16)), "decision": "scored", "attempts": 1},
                          [score(int(c.trace_id, 16), given)]) for c in claims],
                        executions=[execution(int(c.trace_id, 16), step) for c in claims
                                    for step in ("analyze", "generate_score")])
        rows = pg.execute(
            "SELECT d.datname, s.calls, s.total_exec_time, s.rows, s.query "
            "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname LIKE 'bench_%' AND s.query ~ '^\\s*WITH'")
        for node in nodes.values():
            node.close()
    print(f"bench_pg_writes: {args.pairs} judged and {args.pairs} code-scored pairs per database; "
          f"a score's input {len(json.dumps(given)):,} bytes, each prompt {len(PROMPT):,}")
    kinds = {"WITH decided": "decisions (every other batch with six scores)",
             "WITH done": "completions",
             "WITH due": "claims"}
    table: dict[str, dict[str, tuple[int, float]]] = {}
    for datname, calls, total_ms, _, query in rows:
        kind = next((k for p, k in kinds.items() if query.lstrip().startswith(p)), None)
        if kind is not None:
            had = table.setdefault(kind, {}).get(datname, (0, 0.0))
            table[kind][datname] = (had[0] + calls, had[1] + total_ms)
    for kind, by_db in table.items():
        pglz, lz4 = (by_db.get(f"bench_{c}", (0, 0.0)) for c in ("pglz", "lz4"))
        mean = [ms / calls if calls else float("nan") for calls, ms in (pglz, lz4)]
        print(f"  {kind:<48} pglz {mean[0]:.3f} ms  lz4 {mean[1]:.3f} ms  "
              f"({pglz[0]} / {lz4[0]} calls): lz4 {mean[1] / mean[0]:.2f}x")


if __name__ == "__main__":
    main()
