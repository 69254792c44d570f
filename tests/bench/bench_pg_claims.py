"""PostgreSQL's time for a judge claim as the open backlog grows, against the previous claim.

A cluster's backlog grows whenever judging falls behind (a provider down: pairs wait to be
retried; a budget spent: pairs wait ``over_budget``). Every claim a node makes runs while it
does, so a claim should cost what its batch costs, not what the backlog holds. For each
backlog size: two databases on one throwaway server, each with the same open pairs (two
scorer versions; a tenth waiting for a retry later, a tenth held by another node), one with
the schema of ``ensure`` and ``PgCoordination.claim``, the other with the previous index and
claim statement (``BASELINE_*`` below, the code before 2026-12-07). The same claims run in
both, alternating, each claim's pairs completed. Prints the mean execution time per claim
(``pg_stat_statements``) in each, and how many claims took other pairs than the previous
statement did (0: the same work).

Run: ``make bench-cluster`` (or .venv-cluster/bin/python tests/bench/bench_pg_claims.py
[--backlog 1000,20000,200000] [--claims 200]); without psycopg (the cluster extra) it says so
and exits 0.
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

FILL = """
INSERT INTO tracescore.scoring_decisions
  (trace_id, span_id, scorer_id, scorer_version, decision, attempts, next_attempt_at,
   owner, lease_until, home, created_at, updated_at)
SELECT lpad(to_hex(n), 32, '0'), lpad(to_hex(n), 16, '0'),
       (%(ids)s::text[])[1 + n %% 2], (%(versions)s::text[])[1 + n %% 2],
       CASE WHEN n %% 10 = 3 THEN 'retrying' ELSE 'pending' END,
       CASE WHEN n %% 10 = 3 THEN 1 ELSE 0 END,
       CASE WHEN n %% 10 = 3 THEN %(now)s + interval '10 minutes' END,
       CASE WHEN n %% 10 = 7 THEN 'node-2' END,
       CASE WHEN n %% 10 = 7 THEN %(now)s + interval '30 seconds' END,
       CASE WHEN n %% 3 = 0 THEN 'node-1' WHEN n %% 3 = 1 THEN 'node-2' END,
       %(now)s - (n * interval '10 milliseconds'), %(now)s
FROM generate_series(1, %(n)s) AS n
"""
"""The backlog: pending pairs of two versions created over the last minutes (a third homed on
each of two nodes, a third on none), every tenth waiting for a retry in ten minutes, every
tenth held by another node."""


def database(pg: PostgresServer, name: str, backlog: int, *, baseline: bool) -> Any:
    import psycopg

    from tracescore.cluster._pg_schema import ensure

    dsn = pg.create_database(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        ensure(conn)
        if baseline:
            conn.execute("DROP INDEX tracescore.decisions_due")
            conn.execute(BASELINE_INDEX)
        conn.execute(FILL, {"ids": [v[0] for v in VERSIONS],
                            "versions": [v[1] for v in VERSIONS], "now": NOW, "n": backlog})
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

    parser = argparse.ArgumentParser()
    parser.add_argument("--backlog", default="1000,20000,200000",
                        help="open pairs, comma-separated sizes")
    parser.add_argument("--claims", type=int, default=200, help="claims per database and size")
    parser.add_argument("--limit", type=int, default=8, help="pairs per claim")
    args = parser.parse_args()
    print(f"bench_pg_claims: {args.claims} claims of up to {args.limit} pairs per database, "
          f"{len(VERSIONS)} scorer versions; mean execution time per claim")
    with PostgresServer(settings={"shared_preload_libraries": "pg_stat_statements"}) as pg:
        pg.execute("CREATE EXTENSION pg_stat_statements")
        for backlog in (int(size) for size in args.backlog.split(",")):
            dsns = {kind: database(pg, f"claims_{kind}_{backlog}", backlog,
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
            rows = pg.execute(
                "SELECT d.datname, sum(s.calls)::float8, sum(s.total_exec_time) "
                "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                f"WHERE d.datname LIKE 'claims_%_{backlog}' AND s.query ~ '^\\s*WITH due' "
                "GROUP BY d.datname")
            node.close()
            before.close()
            mean = {name.split("_")[1]: float(ms) / float(calls) for name, calls, ms in rows}
            print(f"  backlog {backlog:>9,}: before {mean['before']:7.3f} ms  "
                  f"now {mean['now']:7.3f} ms  ({mean['now'] / mean['before']:.3f}x; pairs "
                  f"taken {taken['before']:,} / {taken['now']:,}, claims taking other pairs "
                  f"{differ})")


if __name__ == "__main__":
    main()
