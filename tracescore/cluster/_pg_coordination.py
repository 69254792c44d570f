"""``PgCoordination``: the coordination protocol on PostgreSQL (``tracescore`` schema).

Claims use ``FOR UPDATE SKIP LOCKED`` over the open decisions (a partial index holds them), so
nodes claiming at once take different pairs without waiting on each other; the claim sets
``owner``, ``lease_until`` and ``fence = fence + 1`` in the same statement. Every method is
one statement, committed on its own (the connection is in autocommit: no ``BEGIN``/``COMMIT``
round trips). Work on several tables uses ``WITH`` parts: ``complete`` is an ``UPDATE … WHERE
owner = %s AND fence = %s`` with the score's insert (only if the update found the row) and
the executions' (either way: they were paid for); ``record_decisions`` inserts the decisions
and the scores of those that were new. Methods are synchronous and thread-safe (one
connection behind a lock); call them from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from ._coordination import Claim, PairId, Row, Spend
from ._pg_rows import array_type, insert_rows, insert_sql, pg_value, row_arrays
from ._pg_schema import SCHEMA, PgTable, pg_tables

OPEN = ("pending", "retrying", "over_budget")

_TAKE = f"""
UPDATE {SCHEMA}.scoring_decisions d
SET owner = %(owner)s, lease_until = %(lease)s, fence = coalesce(d.fence, 0) + 1
FROM due
WHERE d.trace_id = due.trace_id AND d.span_id = due.span_id AND d.scorer_id = due.scorer_id
  AND d.scorer_version = due.scorer_version
RETURNING d.trace_id, d.span_id, d.scorer_id, d.scorer_version, d.decision, d.attempts,
          d.created_at, d.session_id, d.fence, coalesce(d.next_attempt_at, d.created_at)
"""
"""Takes the pairs a claim's ``due`` selected: a lease, a new fence, the claimed rows back
with their due time last (``RETURNING`` keeps no order: a claim sorts them)."""

_CLAIM_SQL = f"""
WITH due AS (
    SELECT o.trace_id, o.span_id, o.scorer_id, o.scorer_version
    FROM unnest(%(ids)s::text[], %(versions)s::text[]) AS v(scorer_id, scorer_version)
    CROSS JOIN LATERAL (
        SELECT d.trace_id, d.span_id, d.scorer_id, d.scorer_version, d.created_at,
               coalesce(d.next_attempt_at, d.created_at) AS due_at
        FROM {SCHEMA}.scoring_decisions d
        WHERE d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
          AND d.decision IN ('pending', 'retrying', 'over_budget')
          AND coalesce(d.next_attempt_at, d.created_at) <= %(now)s
          AND (d.lease_until IS NULL OR d.lease_until < %(now)s)
          AND (d.home IS NULL OR d.home = %(owner)s
               OR coalesce(d.next_attempt_at, d.created_at) <= %(steal)s)
        ORDER BY coalesce(d.next_attempt_at, d.created_at), d.created_at
        LIMIT %(limit)s
        FOR UPDATE OF d SKIP LOCKED
    ) o
    ORDER BY o.due_at, o.created_at
    LIMIT %(limit)s
)
""" + _TAKE
"""Up to ``limit`` due pairs of the versions, oldest due first: each version's are read in
``decisions_due`` order and the scan stops at ``limit`` (a claim costs its batch, not the
open backlog), then the versions' are merged. Due is ``coalesce(next_attempt_at,
created_at) <= now`` (a pair written by a node whose clock runs ahead waits that far)."""

_CLAIM_PAIRS_SQL = f"""
WITH due AS (
    SELECT d.trace_id, d.span_id, d.scorer_id, d.scorer_version
    FROM {SCHEMA}.scoring_decisions d
    JOIN unnest(%(t)s::text[], %(s)s::text[], %(i)s::text[], %(v)s::text[])
      AS p(trace_id, span_id, scorer_id, scorer_version)
      ON d.trace_id = p.trace_id AND d.span_id = p.span_id AND d.scorer_id = p.scorer_id
     AND d.scorer_version = p.scorer_version
    WHERE d.decision IN ('pending', 'retrying', 'over_budget')
      AND (d.lease_until IS NULL OR d.lease_until < %(now)s)
    FOR UPDATE OF d SKIP LOCKED
)
""" + _TAKE

_HELD = """d.trace_id = c.trace_id AND d.span_id = c.span_id AND d.scorer_id = c.scorer_id
  AND d.scorer_version = c.scorer_version AND d.owner = c.owner AND d.fence = c.fence"""

_CLAIMS = """unnest(%(t)s::text[], %(s)s::text[], %(i)s::text[], %(v)s::text[], %(o)s::text[],
                    %(f)s::bigint[]) AS c(trace_id, span_id, scorer_id, scorer_version, owner,
                                          fence)"""

_RENEW_SQL = f"""
UPDATE {SCHEMA}.scoring_decisions d SET lease_until = %(lease)s FROM {_CLAIMS}
WHERE {_HELD}
RETURNING d.trace_id, d.span_id, d.scorer_id, d.scorer_version
"""

_RELEASE_SQL = f"""
UPDATE {SCHEMA}.scoring_decisions d SET owner = NULL, lease_until = NULL FROM {_CLAIMS}
WHERE {_HELD}
"""

_CLAIMED = ("trace_id", "span_id", "scorer_id", "scorer_version", "owner", "fence")
"""A completion's columns taken from its claim: the pair, its owner and fence."""
_ENDS = (*_CLAIMED, "decision", "attempts", "last_error", "next_attempt_at", "score_id",
         "updated_at")
"""The columns of a completion: the claim's, and the new decision."""

_COMPLETE_SQL = f"""
WITH done AS (
UPDATE {SCHEMA}.scoring_decisions d
SET decision = c.decision, attempts = c.attempts, last_error = c.last_error,
    next_attempt_at = c.next_attempt_at, score_id = c.score_id, updated_at = c.updated_at,
    owner = NULL, lease_until = NULL
FROM unnest({{arrays}}) WITH ORDINALITY AS c({', '.join(_ENDS)}, n)
WHERE d.trace_id = c.trace_id AND d.span_id = c.span_id AND d.scorer_id = c.scorer_id
  AND d.scorer_version = c.scorer_version AND d.owner = c.owner AND d.fence = c.fence
RETURNING c.n
)"""
"""The fenced updates of ``complete_many`` (positional parameters: the inserts' follow)."""

_SCORED = ("u.score_id IN (SELECT s.score_id FROM unnest(%s::text[], %s::bigint[]) AS "
           "s(score_id, n) JOIN done ON done.n = s.n)")
"""A score row goes in only if its completion's update found the pair still held."""

_OVER_BUDGET_SQL = f"""
UPDATE {SCHEMA}.scoring_decisions d
SET decision = 'over_budget', last_error = %(reason)s, updated_at = %(now)s
FROM unnest(%(ids)s::text[], %(versions)s::text[]) AS v(scorer_id, scorer_version)
WHERE d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
  AND d.decision IN ('pending', 'retrying')
  AND coalesce(d.next_attempt_at, d.created_at) <= %(now)s
  AND (d.lease_until IS NULL OR d.lease_until < %(now)s)
"""
"""Marks the due pairs of versions over budget (``decisions_unmarked``: the pairs marked on an
earlier tick are not read again; due as in a claim)."""

_OPEN_STATS_SQL = f"""
SELECT count(DISTINCT d.trace_id), min(d.created_at)
FROM {SCHEMA}.scoring_decisions d
JOIN unnest(%(ids)s::text[], %(versions)s::text[]) AS v(scorer_id, scorer_version)
  ON d.scorer_id = v.scorer_id AND d.scorer_version = v.scorer_version
WHERE d.decision IN ('pending', 'retrying', 'over_budget')
"""

_EXECUTION_COLUMNS = ("execution_id", "status", "error_code", "created_at", "input_tokens",
                      "output_tokens", "total_tokens", "reasoning_tokens",
                      "cached_input_tokens", "cost_amount", "cost_source")

_LEAD_CLASS = 0x7474
"""First key of the session advisory lock of a role one node at a time takes (monitors)."""

_SPEND_SQL = f"""
SELECT
  coalesce(sum(cost_amount) FILTER (WHERE created_at >= %(hour)s
                                    AND coalesce(cost_unit, 'USD') = 'USD'), 0),
  coalesce(sum(cost_amount) FILTER (WHERE coalesce(cost_unit, 'USD') = 'USD'), 0),
  coalesce(sum(coalesce(total_tokens, coalesce(input_tokens, 0) + coalesce(output_tokens, 0)))
           FILTER (WHERE created_at >= %(hour)s), 0)
FROM {SCHEMA}.judge_executions WHERE created_at >= %(day)s
"""


def _claims_params(claims: Sequence[Claim]) -> dict[str, list[Any]]:
    return {"t": [c.trace_id for c in claims], "s": [c.span_id for c in claims],
            "i": [c.scorer_id for c in claims], "v": [c.scorer_version for c in claims],
            "o": [c.owner for c in claims], "f": [c.fence for c in claims]}


class PgCoordination:
    """``Coordination`` on PostgreSQL; ``connect`` opens a psycopg connection."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()
        self._tables: dict[str, PgTable] = pg_tables()
        self._leads: dict[str, Any] = {}
        """Role → the connection that holds, or asks for, its advisory lock."""
        self._held_roles: set[str] = set()

    @contextmanager
    def _statement(self) -> Iterator[Any]:
        """A cursor for one statement, committed on its own (no ``BEGIN``/``COMMIT`` round
        trips: every call here is one statement, many a second on a busy node)."""
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
                self._conn.autocommit = True
            try:
                with self._conn.cursor() as cur:
                    yield cur
            except Exception:
                if self._conn.broken:
                    self._conn.close()
                    self._conn = None
                raise

    def close(self) -> None:
        """Close the connections (the roles this node led go with them)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            for conn in self._leads.values():
                conn.close()
            self._leads.clear()
            self._held_roles.clear()

    def decided(self, trace_ids: Sequence[str]) -> set[tuple[str, str, str]]:
        """See ``Coordination.decided``."""
        with self._statement() as cur:
            cur.execute(f"SELECT DISTINCT trace_id, scorer_id, scorer_version FROM "
                        f"{SCHEMA}.scoring_decisions WHERE trace_id = ANY(%s::text[])",
                        [list(trace_ids)])
            return {(r[0], r[1], r[2]) for r in cur.fetchall()}

    def record_decisions(self, decisions: Sequence[Row], scores: Sequence[Row] = ()
                         ) -> set[PairId]:
        """See ``Coordination.record_decisions``."""
        if not decisions:
            return set()
        now = _utc_now()
        # One statement (its own transaction): a score goes in only with its pair's decision,
        # the ``WITH`` part's ``RETURNING`` says which decisions were new.
        table = self._tables["scoring_decisions"]
        columns, params = row_arrays(table, decisions, defaults={
            "attempts": 0, "created_at": now, "updated_at": now})
        parts = ["decided AS ({})".format(insert_sql(
            table, columns, returning=("trace_id", "span_id", "scorer_id", "scorer_version",
                                       "score_id")))]
        if scores:
            columns, arrays = row_arrays(self._tables["scores"], scores,
                                         defaults={"created_at": now})
            parts.append("score AS ({})".format(insert_sql(
                self._tables["scores"], columns,
                where="u.score_id IN (SELECT score_id FROM decided)")))
            params += arrays
        with self._statement() as cur:
            cur.execute(f"WITH {', '.join(parts)} SELECT trace_id, span_id, scorer_id, "
                        "scorer_version FROM decided", params)
            return {(r[0], r[1], r[2], r[3]) for r in cur.fetchall()}

    def claim(self, versions: Sequence[tuple[str, str]], *, owner: str, now: datetime,
              limit: int, lease_s: float, steal_after_s: float = 0.0) -> list[Claim]:
        """See ``Coordination.claim``."""
        if not versions or limit <= 0:
            return []
        lease = now + timedelta(seconds=lease_s)
        with self._statement() as cur:
            cur.execute(_CLAIM_SQL, {"ids": [v[0] for v in versions],
                                     "versions": [v[1] for v in versions], "now": now,
                                     "limit": limit, "owner": owner, "lease": lease,
                                     "steal": now - timedelta(seconds=steal_after_s)})
            rows = sorted(cur.fetchall(), key=lambda r: (r[9], r[6]))  # oldest due first
        return [Claim(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0), r[6], r[7], owner,
                      int(r[8]), lease) for r in rows]

    def claim_pairs(self, pairs: Sequence[PairId], *, owner: str, now: datetime,
                    lease_s: float) -> list[Claim]:
        """See ``Coordination.claim_pairs``."""
        if not pairs:
            return []
        lease = now + timedelta(seconds=lease_s)
        with self._statement() as cur:
            cur.execute(_CLAIM_PAIRS_SQL, {
                "t": [p[0] for p in pairs], "s": [p[1] for p in pairs],
                "i": [p[2] for p in pairs], "v": [p[3] for p in pairs], "now": now,
                "owner": owner, "lease": lease})
            rows = cur.fetchall()
        return [Claim(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0), r[6], r[7], owner,
                      int(r[8]), lease) for r in rows]

    def renew(self, claims: Sequence[Claim], *, now: datetime, lease_s: float) -> list[Claim]:
        """See ``Coordination.renew``."""
        if not claims:
            return []
        lease = now + timedelta(seconds=lease_s)
        with self._statement() as cur:
            cur.execute(_RENEW_SQL, {**_claims_params(claims), "lease": lease})
            held = {(r[0], r[1], r[2], r[3]) for r in cur.fetchall()}
        return [_with_lease(c, lease) for c in claims if c.pair in held]

    def record_executions(self, executions: Sequence[Row]) -> None:
        """See ``Coordination.record_executions``."""
        if not executions:
            return
        with self._statement() as cur:
            insert_rows(cur, self._tables["judge_executions"], executions, conflict="nothing")

    def complete(self, claim: Claim, *, decision: Row, scores: Sequence[Row] = (),
                 executions: Sequence[Row] = ()) -> bool:
        """See ``Coordination.complete``."""
        done = self.complete_many([(claim, decision, scores)], executions=executions)
        return bool(done)

    def complete_many(self, ends: Sequence[tuple[Claim, Row, Sequence[Row]]], *,
                      executions: Sequence[Row] = ()) -> list[int]:
        """``complete`` for several (claim, decision, scores) at once, in one statement (one
        round trip, one transaction): each decision fenced on its claim's owner and fence,
        the scores of the claims still held, every execution (paid for, whoever holds the
        pair). Returns the indexes in ``ends`` of the claims that were still held."""
        if not ends:
            self.record_executions(executions)
            return []
        now = _utc_now()
        table = self._tables["scoring_decisions"]
        rows = [{"attempts": 0, **decision, **{name: getattr(claim, name) for name in _CLAIMED},
                 "updated_at": decision.get("updated_at") or now}
                for claim, decision, _ in ends]
        params: list[Any] = [[pg_value(table.type_of(name), row.get(name)) for row in rows]
                             for name in _ENDS]
        sql = _COMPLETE_SQL.format(arrays=", ".join(
            f"%s::{array_type(table, name, table.type_of(name))}" for name in _ENDS))
        # One statement, so one round trip and its own transaction: a score goes in only
        # with its fenced update (``_SCORED``), the executions whoever holds the pair now.
        scored = [(n, row) for n, (_, _, score_rows) in enumerate(ends, 1) for row in score_rows]
        if scored:
            columns, arrays = row_arrays(self._tables["scores"], [row for _, row in scored])
            sql += f", score AS ({insert_sql(self._tables['scores'], columns, where=_SCORED)})"
            params += [*arrays, [row.get("score_id") for _, row in scored],
                       [n for n, _ in scored]]
        if executions:
            spend = self._tables["judge_executions"]
            columns, arrays = row_arrays(spend, executions)
            sql += f", spend AS ({insert_sql(spend, columns)})"
            params += arrays
        with self._statement() as cur:
            cur.execute(sql + " SELECT n FROM done", params)
            return sorted(int(row[0]) - 1 for row in cur.fetchall())

    def release(self, claims: Sequence[Claim]) -> None:
        """See ``Coordination.release``."""
        if claims:
            with self._statement() as cur:
                cur.execute(_RELEASE_SQL, _claims_params(claims))

    def mark_over_budget(self, versions: Sequence[tuple[str, str]], *, reason: str,
                         now: datetime) -> None:
        """See ``Coordination.mark_over_budget``."""
        if versions:
            with self._statement() as cur:
                cur.execute(_OVER_BUDGET_SQL, {"ids": [v[0] for v in versions],
                                               "versions": [v[1] for v in versions],
                                               "reason": reason, "now": now})

    def executions(self, score_id: str) -> list[dict[str, Any]]:
        """See ``Coordination.executions``."""
        with self._statement() as cur:
            cur.execute(f"SELECT {', '.join(_EXECUTION_COLUMNS)} FROM "
                        f"{SCHEMA}.judge_executions WHERE score_id = %s", [score_id])
            return [dict(zip(_EXECUTION_COLUMNS, row, strict=True)) for row in cur.fetchall()]

    def version_starts(self) -> dict[tuple[str, str], datetime]:
        """See ``Coordination.version_starts``."""
        with self._statement() as cur:
            cur.execute(f"SELECT scorer_id, scorer_version, min(created_at) FROM "
                        f"{SCHEMA}.scoring_decisions GROUP BY 1, 2")
            return {(r[0], r[1]): r[2] for r in cur.fetchall()}

    def open_stats(self, versions: Sequence[tuple[str, str]]) -> tuple[int, datetime | None]:
        """See ``Coordination.open_stats``."""
        if not versions:
            return 0, None
        with self._statement() as cur:
            cur.execute(_OPEN_STATS_SQL, {"ids": [v[0] for v in versions],
                                          "versions": [v[1] for v in versions]})
            row = cur.fetchone()
        return int(row[0] or 0), row[1]

    def lead(self, role: str) -> bool:
        """See ``Coordination.lead``: a session advisory lock on the role, on a connection of
        its own kept while this node runs. A node that does not hold the lock asks again on
        the same connection (opening a PostgreSQL session each tick costs PostgreSQL far more
        than the question)."""
        conn = self._leads.get(role)
        if conn is not None and not conn.closed:
            try:
                if role in self._held_roles:
                    conn.execute("SELECT 1").fetchone()
                    return True
                return self._try_lock(conn, role)
            except Exception:  # noqa: BLE001 - the connection (and any lock) is gone
                conn.close()
                del self._leads[role]
                self._held_roles.discard(role)
        conn = self._connect()
        conn.autocommit = True
        self._leads[role] = conn
        return self._try_lock(conn, role)

    def _try_lock(self, conn: Any, role: str) -> bool:
        got = bool(conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                                [_LEAD_CLASS, role]).fetchone()[0])
        if got:
            self._held_roles.add(role)
        return got

    def spend(self, now: datetime) -> Spend:
        """See ``Coordination.spend``."""
        with self._statement() as cur:
            cur.execute(_SPEND_SQL, {"hour": now - timedelta(hours=1),
                                     "day": now - timedelta(days=1)})
            row = cur.fetchone()
        return Spend(float(row[0]), float(row[1]), int(row[2]))


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _with_lease(claim: Claim, lease: datetime) -> Claim:
    return Claim(claim.trace_id, claim.span_id, claim.scorer_id, claim.scorer_version,
                 claim.decision, claim.attempts, claim.created_at, claim.session_id,
                 claim.owner, claim.fence, lease)


__all__ = ["OPEN", "PgCoordination"]
