"""PostgreSQL's time for judge claims and over-budget marks as the open backlog grows,
against the statements and index before 2026-12-07.

A cluster's backlog grows whenever judging falls behind (a provider down: pairs wait to be
retried; a budget spent: pairs wait ``over_budget``). The claims and, while a budget is
spent, the marks run every tick on every node, so each should cost what its batch costs, not
what the backlog holds. For each backlog size: two databases on one throwaway server, each
with the same pairs decided before and the same open pairs (two scorer versions; a tenth
waiting for a retry later, one in 500 held by another node), one with the schema of
``ensure`` and ``PgCoordination``, the other with the previous index and statements
(``BASELINE_*`` below). The same work runs in both, alternating: claims, each claim's pairs
completed; then the budget spent: the backlog marked once (then vacuumed, as autovacuum
soon does), then marks with a few new pairs each. Prints the mean execution time per claim
and per mark (``pg_stat_statements``, the first mark not counted), and how many claims took
other pairs than the previous statement did (0: the same work).

Run: ``make bench-cluster`` (or .venv-cluster/bin/python tests/bench/bench_pg_claims.py
[--backlog 1000,20000,200000] [--claims 200] [--decided 500000] [--marks 50]); without
psycopg (the cluster extra) it says so and exits 0.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from tracescore.testing import PostgresServer

NOW = datetime(2026, 12, 1, 12, 0, 0)  # noqa: DTZ001 - naive UTC, as the tables store
VERSIONS = [("relevancy", "v1"), ("faithfulness", "v2")]

BASELINE_INDEX = """CREATE INDEX decisions_open ON tracescore.scoring_decisions
(scorer_id, scorer_version, next_attempt_at)
WHERE decision IN ('pending', 'retrying', 'over_budget')"""
"""The open-decisions index before 2026-12-07."""

BASELINE_CLAIM = """
WITH due AS (
    SELECT d.trace_id, d.span_id, d.scorer_id, d.scorer_version
    FROM tracescore.scoring_decisions d
    JOIN unnest(%(ids)s::text[], %(versions)s::text[]) AS v(scorer_id, scorer_version)
      ON d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
    WHERE d.decision IN ('pending', 'retrying', 'over_budget')
      AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= %(now)s)
      AND (d.lease_until IS NULL OR d.lease_until < %(now)s)
      AND (d.home IS NULL OR d.home = %(owner)s
           OR coalesce(d.next_attempt_at, d.created_at) <= %(steal)s)
    ORDER BY coalesce(d.next_attempt_at, d.created_at), d.created_at
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE tracescore.scoring_decisions d
SET owner = %(owner)s, lease_until = %(lease)s, fence = coalesce(d.fence, 0) + 1
FROM due
WHERE d.trace_id = due.trace_id AND d.span_id = due.span_id AND d.scorer_id = due.scorer_id
  AND d.scorer_version = due.scorer_version
RETURNING d.trace_id, d.span_id, d.scorer_id, d.scorer_version, d.fence
"""
"""The claim statement before 2026-12-07 (the pairs' fields it returned aside)."""

BASELINE_OVER_BUDGET = """
UPDATE tracescore.scoring_decisions d
SET decision = 'over_budget', last_error = %(reason)s, updated_at = %(now)s
FROM unnest(%(ids)s::text[], %(versions)s::text[]) AS v(scorer_id, scorer_version)
WHERE d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
  AND d.decision IN ('pending', 'retrying')
  AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= %(now)s)
  AND (d.lease_until IS NULL OR d.lease_until < %(now)s)
"""
"""Marking the due pairs of versions over budget, before 2026-12-07."""

DECIDED = """
INSERT INTO tracescore.scoring_decisions
  (trace_id, span_id, scorer_id, scorer_version, decision, attempts, created_at, updated_at)
SELECT 'd' || lpad(to_hex(n), 31, '0'), lpad(to_hex(n), 16, '0'),
       (%(ids)s::text[])[1 + n %% 2], (%(versions)s::text[])[1 + n %% 2], 'scored', 1,
       %(now)s - interval '1 day' - (n * interval '10 milliseconds'), %(now)s
FROM generate_series(1, %(n)s) AS n
"""
"""Pairs decided before: the table's history, which no claim should read."""

FILL = """
INSERT INTO tracescore.scoring_decisions
  (trace_id, span_id, scorer_id, scorer_version, decision, attempts, next_attempt_at,
   owner, lease_until, home, created_at, updated_at)
SELECT lpad(to_hex(n), 32, '0'), lpad(to_hex(n), 16, '0'),
       (%(ids)s::text[])[1 + n %% 2], (%(versions)s::text[])[1 + n %% 2],
       CASE WHEN n %% 10 = 3 THEN 'retrying' ELSE 'pending' END,
       CASE WHEN n %% 10 = 3 THEN 1 ELSE 0 END,
       CASE WHEN n %% 10 = 3 THEN %(now)s + interval '10 minutes' END,
       CASE WHEN n %% 500 = 7 THEN 'node-2' END,
       CASE WHEN n %% 500 = 7 THEN %(now)s + interval '30 seconds' END,
       CASE WHEN n %% 3 = 0 THEN 'node-1' WHEN n %% 3 = 1 THEN 'node-2' END,
       %(now)s - (n * interval '10 milliseconds'), %(now)s
FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS n
"""
"""The backlog: pending pairs of two versions created over the last minutes (a third homed on
each of two nodes, a third on none), every tenth waiting for a retry in ten minutes, one in
500 held by another node (a node holds only the pairs it runs soon)."""


def database(pg: PostgresServer, name: str, backlog: int, decided: int, *,
             baseline: bool) -> Any:
    import psycopg

    from tracescore.cluster._pg_schema import ensure

    dsn = pg.create_database(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ensure(conn)
        if baseline:
            conn.execute("DROP INDEX tracescore.decisions_due")
            conn.execute("DROP INDEX tracescore.decisions_unmarked")
            conn.execute(BASELINE_INDEX)
        versions = {"ids": [v[0] for v in VERSIONS], "versions": [v[1] for v in VERSIONS],
                    "now": NOW}
        conn.execute(DECIDED, {**versions, "n": decided})
        conn.execute(FILL, {**versions, "first": 1, "last": backlog})
        conn.execute("VACUUM ANALYZE tracescore.scoring_decisions")
    return dsn


def main() -> None:
    try:
        import psycopg
    except ImportError:
        print("bench_pg_claims: skipped, it needs psycopg (the cluster extra); run "
              "`make bench-cluster`")
        return
    from tracescore.cluster import PgCoordination
    from tracescore.cluster._pg_coordination import _OPEN_STATS_SQL

    parser = argparse.ArgumentParser()
    parser.add_argument("--backlog", default="1000,20000,200000",
                        help="open pairs, comma-separated sizes")
    parser.add_argument("--claims", type=int, default=200, help="claims per database and size")
    parser.add_argument("--limit", type=int, default=8, help="pairs per claim")
    parser.add_argument("--decided", type=int, default=500_000,
                        help="pairs decided before, in each database")
    parser.add_argument("--marks", type=int, default=50,
                        help="over-budget marks per database and size")
    args = parser.parse_args()
    print(f"bench_pg_claims: {args.decided:,} pairs decided before, then per backlog size "
          f"{args.claims} claims of up to {args.limit} pairs per database, "
          f"{len(VERSIONS)} scorer versions; then the budget spent: the pairs marked once, "
          f"then {args.marks} marks with 8 new pairs each; mean execution times")
    with PostgresServer(settings={"shared_preload_libraries": "pg_stat_statements"}) as pg:
        pg.execute("CREATE EXTENSION pg_stat_statements")
        for backlog in (int(size) for size in args.backlog.split(",")):
            dsns = {kind: database(pg, f"claims_{kind}_{backlog}", backlog, args.decided,
                                   baseline=kind == "before")
                    for kind in ("before", "now")}
            node = PgCoordination(partial(psycopg.connect, dsns["now"]))
            before = psycopg.connect(dsns["before"], autocommit=True)
            params = {"ids": [v[0] for v in VERSIONS], "versions": [v[1] for v in VERSIONS],
                      "now": NOW, "limit": args.limit, "owner": "node-1",
                      "lease": NOW + timedelta(seconds=30), "steal": NOW - timedelta(seconds=60)}
            pg.execute("SELECT pg_stat_statements_reset()")
            taken = {"before": 0, "now": 0}
            differ = 0
            for _ in range(args.claims):
                got = before.execute(BASELINE_CLAIM, params).fetchall()
                taken["before"] += len(got)
                before.execute("UPDATE tracescore.scoring_decisions SET decision = 'scored', "
                               "owner = NULL, lease_until = NULL WHERE owner = 'node-1'")
                claims = node.claim(VERSIONS, owner="node-1", now=NOW, limit=args.limit,
                                    lease_s=30, steal_after_s=60)
                taken["now"] += len(claims)
                differ += {r[0] for r in got} != {c.trace_id for c in claims}
                node.complete_many(
                    [(c, {"trace_id": c.trace_id, "span_id": c.span_id,
                          "scorer_id": c.scorer_id, "scorer_version": c.scorer_version,
                          "decision": "scored", "attempts": 1, "updated_at": NOW}, [])
                     for c in claims])
            claims_ms = _means(pg, backlog, "WITH due")
            spent = {**params, "reason": "daily budget spent"}
            now_conn = psycopg.connect(dsns["now"], autocommit=True)
            for n in range(args.marks + 1):  # the first marks the backlog: not counted
                if n == 1:  # the first mark's dead rows gone, as autovacuum has them soon
                    for conn in (before, now_conn):
                        conn.execute("VACUUM ANALYZE tracescore.scoring_decisions")
                    pg.execute("SELECT pg_stat_statements_reset()")
                first = 10**9 + 8 * n  # eight new pairs since the last mark
                fresh = {"ids": params["ids"], "versions": params["versions"], "now": NOW,
                         "first": first, "last": first + 7}
                for conn in (before, now_conn):
                    conn.execute(FILL, fresh)
                before.execute(BASELINE_OVER_BUDGET, spent)
                node.mark_over_budget(VERSIONS, reason=spent["reason"], now=NOW)
            now_conn.close()
            marks_ms = _means(pg, backlog, "UPDATE tracescore.scoring_decisions d\\s+SET decision")
            pg.execute("SELECT pg_stat_statements_reset()")
            for _ in range(5):  # the gauges' read, the same statement in both
                before.execute(_OPEN_STATS_SQL, params).fetchall()
                node.open_stats(VERSIONS)
            stats_ms = _means(pg, backlog, "SELECT count\\(DISTINCT")
            node.close()
            before.close()
            print(f"  backlog {backlog:>9,}: a claim before {claims_ms['before']:7.3f} ms, now "
                  f"{claims_ms['now']:7.3f} ms ({claims_ms['now'] / claims_ms['before']:.3f}x; "
                  f"pairs taken {taken['before']:,} / {taken['now']:,}, claims taking other "
                  f"pairs {differ}); a mark over budget before {marks_ms['before']:7.3f} ms, "
                  f"now {marks_ms['now']:7.3f} ms "
                  f"({marks_ms['now'] / marks_ms['before']:.3f}x); the gauges' count of the "
                  f"open backlog before {stats_ms['before']:7.3f} ms, now "
                  f"{stats_ms['now']:7.3f} ms")


def _means(pg: PostgresServer, backlog: int, starts: str) -> dict[str, float]:
    """Mean execution time (ms) of the statements starting with the pattern ``starts``, in
    the databases of this backlog size, by kind (``before``, ``now``)."""
    rows = pg.execute(
        "SELECT d.datname, sum(s.calls)::float8, sum(s.total_exec_time) "
        "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
        f"WHERE d.datname LIKE 'claims_%_{backlog}' AND s.query ~ '^\\s*{starts}' "
        "GROUP BY d.datname")
    return {name.split("_")[1]: float(ms) / float(calls) for name, calls, ms in rows}


if __name__ == "__main__":
    main()
