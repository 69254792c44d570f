"""Cost-aware sampling: sample rates per segment of traffic, and a daily judge-spend target.

**Segments.** ``[[scorers]] sample = [{ where = "...", rate = 0.1 }, ...]``: each ``where`` is a
SQL predicate over the ``traces`` table; a trace takes the rate of the first segment it matches,
and ``sample_rate`` when it matches none. One read per tick and scorer classifies the tick's
traces (``segment_query``: a ``CASE`` over the predicates, for the listed trace ids).

**Daily spend target.** ``daily_spend_target_usd`` paces a scorer through the UTC day: its rates
are multiplied by a factor in [0, 1] recomputed every tick (``paced_factor``) from what the day
has shown so far:

- the spend so far and how many traces it judged (so the cost of one judged trace), read from
  ``judge_executions`` each tick;
- the traces offered to its sampler so far, and in the last hour;
- the traffic still to come, estimated as the smaller of two projections over the rest of the
  day: the last hour's rate, and the day's average rate. Traffic that rises makes the first
  too high and the second too low, traffic that falls the reverse; the smaller one keeps the
  target from being spent before the traffic arrives, and the factor is recomputed every tick,
  so an estimate that was low is corrected as the day goes on.

factor = (target − spent) / (rate × traffic to come × cost per judged trace), at most 1 (pacing
never samples above the configured rates) and 0 once the target is spent. Before the day's first
judged trace the factor is 1. Which traces are scored stays deterministic by trace id: a trace is
in when the hash of its id is below rate × factor, so a lower factor keeps a subset.

On a replayed day of traffic (``tests/live/test_segments.py``: diurnal, evening-heavy and flat
traffic, costs varying per trace) the day's spend ends within 5 % of the target. What it cannot
do: spend a target larger than the configured rates would spend, or catch up when the traffic
after a peak falls away faster than the last hour showed; a target far above the day's traffic
is then under-spent, never over-spent (beyond the runs in flight when it is reached).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

DAY_S = 86_400.0
RECENT_S = 3_600.0
"""The window of the recent-rate projection."""
MIN_ELAPSED_S = 300.0
"""Projections treat the day as at least this old (the first minutes say little)."""


def segment_query(segments: Sequence[tuple[str, float]],
                  trace_ids: Sequence[str]) -> tuple[str, list[Any]]:
    """Each listed trace's first matching segment (its index, or -1), over ``traces``."""
    cases = " ".join(f"WHEN ({where}) THEN {index}" for index, (where, _) in enumerate(segments))
    return (f"SELECT trace_id, CASE {cases} ELSE -1 END AS segment FROM traces "
            "WHERE list_contains(?::VARCHAR[], trace_id)", [list(trace_ids)])


def segment_rate(segments: Sequence[tuple[str, float]], index: int | None,
                 default: float) -> tuple[float, str]:
    """The rate of segment ``index`` (``default``, the entry's ``sample_rate``, for -1/None)
    and the words ``sampled_out`` decisions give for it."""
    if index is None or index < 0 or index >= len(segments):
        return default, f"sample_rate {default:g}"
    where, rate = segments[index]
    return rate, f"sample rate {rate:g} of segment {index + 1} ({where})"


def paced_factor(*, target_usd: float, spent_usd: float, judged: int, offered: float,
                 recent_offered: float, recent_s: float, elapsed_s: float,
                 rate: float) -> float:
    """The factor a scorer's rates are multiplied by (see the module docstring)."""
    if spent_usd >= target_usd:
        return 0.0
    if judged <= 0 or offered <= 0 or rate <= 0:
        return 1.0
    elapsed = min(max(elapsed_s, MIN_ELAPSED_S), DAY_S)
    left_s = DAY_S - elapsed
    by_day = offered / elapsed * left_s
    # A window shorter than MIN_ELAPSED_S (just after a restart) says too little: the day's.
    by_recent = (recent_offered / recent_s * left_s if recent_s >= MIN_ELAPSED_S
                 else by_day)
    to_come = max(min(by_day, by_recent), 1.0)
    per_judged = spent_usd / judged
    return min(1.0, max(0.0, (target_usd - spent_usd) / (rate * to_come * per_judged)))


def day_start(now: datetime) -> datetime:
    """Midnight (UTC, naive like the tables) of ``now``'s day."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass
class _Day:
    start: datetime
    offered: float = 0.0
    spent_usd: float = 0.0
    judged: int = 0
    marks: collections.deque[tuple[datetime, float]] = field(default_factory=collections.deque)
    """(time, offered then) about once a minute over the last hour."""

    def recent(self, now: datetime) -> tuple[float, float]:
        """(traces offered in the last hour, or since the first mark, and that window's
        seconds)."""
        if not self.marks or (now - self.marks[-1][0]).total_seconds() >= 60:
            self.marks.append((now, self.offered))
        while len(self.marks) > 1 and (now - self.marks[0][0]).total_seconds() > RECENT_S:
            self.marks.popleft()
        since, then = self.marks[0]
        return self.offered - then, (now - since).total_seconds()


class SpendPacer:
    """The pacing state of the scorers with a daily spend target (one ``_Day`` each)."""

    def __init__(self) -> None:
        self._days: dict[str, _Day] = {}

    def day(self, scorer_id: str, now: datetime) -> tuple[_Day, bool]:
        """The scorer's state for ``now``'s day, and whether it is new (read its past then)."""
        start = day_start(now)
        found = self._days.get(scorer_id)
        if found is not None and found.start == start:
            return found, False
        found = self._days[scorer_id] = _Day(start)
        return found, True

    def start_day(self, scorer_id: str, *, offered: float, now: datetime) -> None:
        """Begin the scorer's day with the traces already offered today (read back after a
        restart; 0 at midnight)."""
        state = self.day(scorer_id, now)[0]
        state.offered = offered
        state.marks.clear()
        state.marks.append((state.start if offered == 0 else now, offered))

    def offer(self, scorer_id: str, traces: float, now: datetime) -> None:
        """Count ``traces`` offered to the scorer's sampler (weighted by their sample rate)."""
        self.day(scorer_id, now)[0].offered += traces

    def set_spend(self, scorer_id: str, *, spent_usd: float, judged: int,
                  now: datetime) -> None:
        """The day's judge spend of the scorer so far and the traces it judged."""
        state = self.day(scorer_id, now)[0]
        state.spent_usd, state.judged = spent_usd, judged

    def factor(self, scorer_id: str, *, target_usd: float, rate: float,
               now: datetime) -> float:
        """The factor on the scorer's rates now."""
        state = self.day(scorer_id, now)[0]
        recent, window_s = state.recent(now)
        return paced_factor(target_usd=target_usd, spent_usd=state.spent_usd,
                            judged=state.judged, offered=state.offered, recent_offered=recent,
                            recent_s=window_s,
                            elapsed_s=(now - state.start).total_seconds(), rate=rate)

    def spent(self, scorer_id: str, now: datetime) -> float:
        """The day's spend the pacer knows of."""
        return self.day(scorer_id, now)[0].spent_usd


SPEND_TODAY_SQL = """
SELECT scorer_id, coalesce(sum(cost_amount), 0) AS spent,
       count(DISTINCT score_id) FILTER (WHERE coalesce(cost_amount, 0) > 0) AS judged
FROM judge_executions
WHERE created_at >= ? AND list_contains(?::VARCHAR[], scorer_id)
GROUP BY scorer_id
"""
OFFERED_TODAY_SQL = """
SELECT count(DISTINCT trace_id) AS offered FROM scoring_decisions
WHERE created_at >= ? AND scorer_id = ? AND scorer_version = ?
"""




async def refresh_pacing(live: Any, scorers: Sequence[Any], now: datetime) -> None:
    """Read the day's spend (and, on a new day or after a restart, the traces already offered)
    of the scorers with a daily spend target into ``live.pacer``."""
    paced = [reg for reg in scorers if reg.daily_spend_target_usd]
    if not paced:
        return
    start = day_start(now)
    for reg in paced:
        if live.pacer.day(reg.id, now)[1]:
            [row] = await live.read(OFFERED_TODAY_SQL, [start, reg.id, reg.version])
            live.pacer.start_day(reg.id, offered=int(row["offered"] or 0) * reg.sample_rate,
                                 now=now)
    found = {row["scorer_id"]: row
             for row in await live.read(SPEND_TODAY_SQL, [start, [reg.id for reg in paced]])}
    for reg in paced:
        row = found.get(reg.id, {})
        live.pacer.set_spend(reg.id, spent_usd=float(row.get("spent") or 0.0),
                             judged=int(row.get("judged") or 0), now=now)


Rates = dict[str, dict[str, tuple[float, str]]]
"""Per scorer id, per trace id: (sample rate, why) (``classify``'s ``rates``)."""


async def sample_rates(live: Any, trace_ids: Sequence[str], scorers: Sequence[Any],
                       now: datetime) -> tuple[Rates, dict[str, dict[str, float]]]:
    """Per scorer with segments or a spend target, each trace's sample rate and why, and its
    rate before pacing."""
    out: Rates = {}
    bases: dict[str, dict[str, float]] = {}
    for reg in scorers:
        target = reg.daily_spend_target_usd
        if not reg.sample and not target:
            continue
        segment: dict[str, int] = {}
        if reg.sample and trace_ids:
            rows = await live.read(*segment_query(reg.sample, trace_ids))
            segment = {row["trace_id"]: int(row["segment"]) for row in rows}
        factor = live.pacer.factor(reg.id, target_usd=target, rate=1.0, now=now) if target \
            else 1.0
        spent = live.pacer.spent(reg.id, now) if target else 0.0
        per: dict[str, tuple[float, str]] = {}
        base: dict[str, float] = {}
        for trace_id in trace_ids:
            rate, why = segment_rate(reg.sample, segment.get(trace_id), reg.sample_rate)
            if target:
                why = (f"{why} x {factor:.3g} (daily_spend_target_usd {target:g}: "
                       f"${spent:.4f} spent today)")
            per[trace_id], base[trace_id] = (rate * factor, why), rate
        out[reg.id], bases[reg.id] = per, base
    return out, bases


def count_offered(live: Any, out: Any, bases: dict[str, dict[str, float]],
                  scorers: Sequence[Any], now: datetime) -> None:
    """Tell the pacer how much traffic reached each paced scorer's sampler in a classification
    (the sum of the traces' rates before pacing: traces it would judge at factor 1)."""
    for reg in scorers:
        if not reg.daily_spend_target_usd:
            continue
        reached = {row["trace_id"] for row in out.decisions
                   if row["scorer_id"] == reg.id and row["decision"] == "sampled_out"}
        reached |= {trace_id for trace_id, regs in out.to_load.items() if reg in regs}
        base = bases.get(reg.id, {})
        live.pacer.offer(reg.id, sum(base.get(t, reg.sample_rate) for t in reached), now)


__all__ = ["OFFERED_TODAY_SQL", "SPEND_TODAY_SQL", "Rates", "SpendPacer", "count_offered",
           "day_start", "paced_factor", "refresh_pacing", "sample_rates",
           "segment_query", "segment_rate"]
