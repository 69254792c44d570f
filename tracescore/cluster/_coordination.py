"""The coordination protocol: how the nodes of a cluster agree on who scores which pair.

A *pair* is (trace id, target span id, scorer id, scorer version); its ``scoring_decisions``
row is the durable work queue. Live scoring today keeps that queue in the node's DuckDB file
and knows what is in flight from memory (``live/_scheduler.py``); across nodes the same steps
need the database to say who holds a pair. ``Coordination`` names those steps; a local
implementation (today's behaviour over ``Store``) and ``PgCoordination`` (PostgreSQL) provide
them. Phase B of issue 31 wires live's call sites to it (docs/cluster.md, "Coordination").

Rows are dicts keyed by column name, exactly the rows live builds today (``live/_rows.py``):
``decision_row``, ``score_row``, ``execution_rows``. Times are naive UTC.

Guarantees an implementation gives:

- A pair has one decision row, whoever writes first; a later writer's row is dropped
  (``record_decisions``: ``ON CONFLICT DO NOTHING``), and so is its score row.
- A claimed pair is held by one owner until its lease ends; the claim carries a *fence*
  (a number that grows with each claim of the pair). ``complete`` writes only if the pair is
  still held by that owner with that fence, in the same transaction as the score row: a node
  that lost its lease (paused, partitioned, killed) cannot write a second score.
- Judge executions are committed as they arrive, fenced or not: spend is money.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

Row = Mapping[str, Any]
PairId = tuple[str, str, str, str]
"""(trace id, span id, scorer id, scorer version)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A pair held by one owner until ``lease_until``; ``fence`` identifies this claim."""

    trace_id: str
    span_id: str
    scorer_id: str
    scorer_version: str
    decision: str
    """The decision the pair had when claimed: pending, retrying or over_budget."""
    attempts: int
    created_at: datetime | None
    session_id: str | None
    owner: str
    fence: int
    lease_until: datetime

    @property
    def pair(self) -> PairId:
        """The pair this claim holds."""
        return (self.trace_id, self.span_id, self.scorer_id, self.scorer_version)


@dataclass(frozen=True, slots=True)
class Spend:
    """Judge spend inside the budget windows (from ``judge_executions``)."""

    cost_usd_hour: float = 0.0
    cost_usd_day: float = 0.0
    tokens_hour: int = 0


class Coordination(Protocol):
    """The steps live scoring takes on the shared work queue (see the module docstring)."""

    def decided(self, trace_ids: Sequence[str]) -> set[tuple[str, str, str]]:
        """The (trace id, scorer id, version) combinations that already have a decision, for
        these traces (any node's). Live asks before expanding ready traces."""
        ...

    def record_decisions(self, decisions: Sequence[Row], scores: Sequence[Row] = ()
                         ) -> set[PairId]:
        """Insert new decision rows (trace-level filtered/sampled out, ``pending`` pairs,
        code scorers' final decisions) and the code scorers' score rows, in one transaction.
        A decision whose pair already has one is left as it is and a score row whose
        ``score_id`` is not that of a decision inserted here is not written. Returns the pairs
        inserted now."""
        ...

    def claim(self, versions: Sequence[tuple[str, str]], *, owner: str, now: datetime,
              limit: int, lease_s: float, steal_after_s: float = 0.0) -> list[Claim]:
        """Take up to ``limit`` due pairs of these (scorer id, version)s: ``pending``,
        ``retrying`` or ``over_budget`` whose ``next_attempt_at`` has come and whose lease, if
        any, has ended, oldest first, skipping pairs another transaction is claiming. Each
        gets ``owner``, a lease to ``now + lease_s`` and a new fence. A pair whose decision
        row names another ``home`` (the node that decided it, which holds its trace) is taken
        only once it has been due for ``steal_after_s``."""
        ...

    def claim_pairs(self, pairs: Sequence[PairId], *, owner: str, now: datetime,
                    lease_s: float) -> list[Claim]:
        """Take these open pairs (a backfill's, due or not) whose lease, if any, has ended;
        the pairs another node holds or decided, or another transaction is claiming, are
        left out."""
        ...

    def renew(self, claims: Sequence[Claim], *, now: datetime, lease_s: float) -> list[Claim]:
        """Extend the leases of claims still held (same owner and fence) to ``now +
        lease_s``; returns them with the new ``lease_until`` (claims lost are left out).
        Called while a judge call runs longer than part of its lease."""
        ...

    def record_executions(self, executions: Sequence[Row]) -> None:
        """Commit judge execution rows now (an id already stored is left as it is), whoever
        holds the pair: the provider has been paid."""
        ...

    def complete(self, claim: Claim, *, decision: Row, scores: Sequence[Row] = (),
                 executions: Sequence[Row] = ()) -> bool:
        """End a claimed pair: replace its decision with ``decision`` (scored, failed,
        not_scorable, retrying with ``next_attempt_at``, over_budget, …) and insert its score
        and execution rows, in one transaction, only if ``claim`` still holds the pair (same
        owner and fence); the lease is released either way. Returns False when the pair was
        taken over (only ``executions`` are written then)."""
        ...

    def complete_many(self, ends: Sequence[tuple[Claim, Row, Sequence[Row]]], *,
                      executions: Sequence[Row] = ()) -> list[int]:
        """``complete`` for several (claim, decision, scores) in one transaction, each fenced
        on its own claim, with ``executions`` (any pairs' rows) written either way; returns
        the indexes in ``ends`` of the claims that still held their pairs."""
        ...

    def release(self, claims: Sequence[Claim]) -> None:
        """Give claims back without deciding (a node stopping): others may claim them now."""
        ...

    def mark_over_budget(self, versions: Sequence[tuple[str, str]], *, reason: str,
                         now: datetime) -> None:
        """Mark the due ``pending``/``retrying`` pairs of these versions that no node holds
        ``over_budget`` with ``reason`` (the budget's cap is reached)."""
        ...

    def executions(self, score_id: str) -> list[dict[str, Any]]:
        """The judge executions stored for a pair's score id (execution id, status, error code,
        created_at and the usage and cost columns): earlier attempts' spend, and when its
        first failed call was."""
        ...

    def version_starts(self) -> dict[tuple[str, str], datetime]:
        """Each (scorer id, version)'s first decision (where its lookback starts)."""
        ...

    def open_stats(self, versions: Sequence[tuple[str, str]]) -> tuple[int, datetime | None]:
        """Traces with open decisions of these versions, and the oldest open decision."""
        ...

    def lead(self, role: str) -> bool:
        """True when this node does ``role`` (e.g. ``"monitors"``): the first node to ask takes
        it and keeps it while it runs; the others get False until it stops."""
        ...

    def spend(self, now: datetime) -> Spend:
        """Judge spend of the hour and the day before ``now``, over every node's executions
        (the budget snapshot)."""
        ...


__all__ = ["Claim", "Coordination", "PairId", "Row", "Spend"]
