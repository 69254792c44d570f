"""PostgreSQL's time for cluster mode's scoring statements: lz4 against pglz for long values, and
the current indexes against the previous schema's.

Three databases on one throwaway server, the schema of ``ensure`` in each: ``lz4`` as it is,
``pglz`` with its columns set back to PostgreSQL's default compression, ``earlier`` with the
index a newer schema retired (``decisions_trace`` on ``(trace_id)``, which the primary key
serves). The same work runs in all three, round by round: decisions with code scores written
in batches, judge pairs claimed and completed with their score and judge executions. The
score's input is a real scorer input (the Mastra turn-1 trace), the prompts a few kilobytes, as
judges send. ``--warm`` pairs go in first, then every table is vacuumed and analyzed (as in a
cluster that has run a while: on tables that start empty, the plans PostgreSQL caches first scan
whole tables until autovacuum analyzes them, docs/cluster.md), then ``--pairs`` pairs are
measured. Prints the mean execution time per statement kind in each database
(``pg_stat_statements``).

Run: ``make bench-cluster`` (or .venv-cluster/bin/python tests/bench/bench_pg_writes.py
[--pairs 600] [--warm 3000]); without psycopg (the cluster extra) it says so and exits 0.
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


BASELINES = {
    "pglz": "PostgreSQL's default compression of long values",
    "earlier": "the previous schema's decisions_trace index",
}
"""The databases each compared with ``lz4`` (the schema of ``ensure``), and what they keep."""


def database(pg: PostgresServer, name: str) -> tuple[str, Any]:
    """A database named ``bench_<name>`` with the schema of ``ensure`` (see ``BASELINES``), and
    its ``PgCoordination``."""
    import psycopg

    from tracescore.cluster import PgCoordination
    from tracescore.cluster._pg_schema import compressible_columns, ensure

    dsn = pg.create_database(f"bench_{name}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        ensure(conn)
        if any(how != "l" for _, _, how in compressible_columns(conn.cursor())):
            raise SystemExit("bench_pg_writes: this PostgreSQL was built without lz4")
        if name == "pglz":
            for table, column, _ in compressible_columns(conn.cursor()):
                conn.execute(f"ALTER TABLE tracescore.{table} ALTER COLUMN {column} "
                             "SET COMPRESSION pglz")
        if name == "earlier":
            conn.execute("CREATE INDEX decisions_trace ON tracescore.scoring_decisions "
                         "(trace_id)")
    return dsn, PgCoordination(lambda: psycopg.connect(dsn))


def rounds(node: Any, pairs: range, given: dict[str, Any]) -> None:
    """The scoring statements of ``pairs``: per six, a batch of code-scored pairs with their
    scores, a batch of judge pairs, then three claims of two completed with their scores and
    executions."""
    now = T0 + timedelta(seconds=1)
    for start in range(pairs.start, pairs.stop, 6):
        batch = range(start, start + 6)
        node.record_decisions([{**pair(n + 1_000_000), "decision": "scored"} for n in batch],
                              [score(n + 1_000_000, given) for n in batch])
        node.record_decisions([pair(n) for n in batch])
        for _ in range(3):
            claims = node.claim([VERSION], owner="a", now=now, limit=2, lease_s=30)
            node.complete_many(
                [(c, {**pair(int(c.trace_id, 16)), "decision": "scored", "attempts": 1},
                  [score(int(c.trace_id, 16), given)]) for c in claims],
                executions=[execution(int(c.trace_id, 16), step) for c in claims
                            for step in ("analyze", "generate_score")])


def statement_kind(query: str) -> str | None:
    """What a ``WITH`` statement of ``PgCoordination`` does, for the printout."""
    text = query.lstrip()
    if text.startswith("WITH decided"):
        return ("decisions of six code-scored pairs with their scores" if " score AS " in text
                else "decisions of six judge pairs (no score yet)")
    if text.startswith("WITH done"):
        return "completions (two pairs, their scores and four executions)"
    if text.startswith("WITH due"):
        return "claims"
    return None


def main() -> None:
    try:
        import psycopg
    except ImportError:
        print("bench_pg_writes: skipped, it needs psycopg (the cluster extra); run "
              "`make bench-cluster`")
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=600, help="measured judged pairs")
    parser.add_argument("--warm", type=int, default=3000,
                        help="judged pairs written before the tables are analyzed")
    args = parser.parse_args()
    given = scorer_input(Trace.from_rows(_rows("mastra-otel-exporter-protobuf", "turn1")))
    names = ("lz4", *BASELINES)
    with PostgresServer(settings={"shared_preload_libraries": "pg_stat_statements"}) as pg:
        pg.execute("CREATE EXTENSION pg_stat_statements")
        nodes = {name: database(pg, name) for name in names}
        warm = range(0, args.warm - args.warm % 6)
        measured = range(warm.stop, warm.stop + args.pairs - args.pairs % 6)
        for _, node in nodes.values():
            rounds(node, warm, given)
        for dsn, _ in nodes.values():
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
        pg.execute("SELECT pg_stat_statements_reset()")
        for start in range(measured.start, measured.stop, 6):  # the same work, round by round
            for _, node in nodes.values():
                rounds(node, range(start, start + 6), given)
        rows = pg.execute(
            "SELECT d.datname, s.calls, s.total_exec_time, s.rows, s.query "
            "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname LIKE 'bench_%' AND s.query ~ '^\\s*WITH'")
        for _, node in nodes.values():
            node.close()
    print(f"bench_pg_writes: {len(measured)} judged and {len(measured)} code-scored pairs per "
          f"database after {len(warm)} of each and VACUUM ANALYZE; a score's input "
          f"{len(json.dumps(given)):,} bytes, each prompt {len(PROMPT):,}")
    table: dict[str, dict[str, tuple[int, float]]] = {}
    for datname, calls, total_ms, _, query in rows:
        kind = statement_kind(query)
        if kind is not None:
            had = table.setdefault(kind, {}).get(datname, (0, 0.0))
            table[kind][datname] = (had[0] + calls, had[1] + total_ms)
    for kind, by_db in table.items():
        mean = {name: ms / calls if calls else float("nan")
                for name, (calls, ms) in ((n, by_db.get(f"bench_{n}", (0, 0.0))) for n in names)}
        print(f"  {kind} (lz4 {by_db.get('bench_lz4', (0, 0.0))[0]} calls): lz4 "
              f"{mean['lz4']:.3f} ms")
        for name, what in BASELINES.items():
            print(f"    against {name} ({what}): {mean[name]:.3f} ms, now "
                  f"{mean['lz4'] / mean[name]:.2f}x")


if __name__ == "__main__":
    main()
