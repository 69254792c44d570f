"""The daily spend target on a replayed day of traffic: the day's judge spend ends within 5 %.

A day of traces is replayed tick by tick (a tick a minute) through ``SpendPacer``, the object the
live scheduler keeps, and the same deterministic sampler (``is_sampled`` on the trace id at rate
× factor). Each trace sampled in costs what its judge call would (a lognormal cost around
$0.002, different per trace), and the spend is fed back as the scheduler feeds it (the day's sum
from ``judge_executions`` each tick). Traffic shapes: flat, diurnal (a peak at noon, a trough at
midnight) and evening-heavy; targets a quarter and a twentieth of what scoring every trace
would cost.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from tracescore.live import SpendPacer, is_sampled, paced_factor

DAY = 86_400
MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC).replace(tzinfo=None)  # naive UTC, as stored
TRACES = 20_000


def replay(shape: str, target_usd: float, *, rate: float = 1.0, seed: int = 11
           ) -> tuple[float, float]:
    """(the day's spend under pacing, what scoring every trace at ``rate`` would cost)."""
    rng = random.Random(seed)
    arrivals: list[float] = []
    while len(arrivals) < TRACES:
        at = rng.uniform(0, DAY)
        weight = {"flat": 1.0,
                  "diurnal": (1 + 0.8 * math.sin(2 * math.pi * at / DAY - math.pi / 2)) / 1.8,
                  "evening": 0.2 if at < 18 * 3600 else 1.0}[shape]
        if rng.random() < weight:
            arrivals.append(at)
    arrivals.sort()
    traces = [(at, f"{rng.getrandbits(128):032x}", rng.lognormvariate(math.log(0.002), 0.5))
              for at in arrivals]
    full = sum(cost for _, trace_id, cost in traces if is_sampled(trace_id, rate))
    pacer = SpendPacer()
    pacer.start_day("judge", offered=0, now=MIDNIGHT)
    spent, judged, index = 0.0, 0, 0
    for minute in range(DAY // 60):
        now = MIDNIGHT + timedelta(minutes=minute)
        pacer.set_spend("judge", spent_usd=spent, judged=judged, now=now)
        factor = pacer.factor("judge", target_usd=target_usd, rate=rate, now=now)
        offered = 0
        while index < len(traces) and traces[index][0] < (minute + 1) * 60:
            _, trace_id, cost = traces[index]
            offered += 1
            if is_sampled(trace_id, rate * factor):
                spent += cost
                judged += 1
            index += 1
        pacer.offer("judge", offered, now)
    return spent, full


@pytest.mark.parametrize("shape", ["flat", "diurnal", "evening"])
@pytest.mark.parametrize("share", [0.25, 0.05])
def test_a_replayed_day_spends_within_five_percent_of_the_target(shape: str,
                                                                  share: float) -> None:
    _, full = replay(shape, 1.0)
    target = share * full
    spent, _ = replay(shape, target)
    assert abs(spent - target) / target < 0.05, (shape, share, spent, target)


def test_pacing_never_samples_above_the_configured_rate() -> None:
    spent, full = replay("flat", 1_000.0, rate=0.5)  # a target far above what 0.5 spends
    assert spent == pytest.approx(full)


def test_the_factor_is_zero_once_the_target_is_spent_and_one_before_any_cost() -> None:
    common = {"offered": 100, "recent_offered": 10, "recent_s": 3600.0, "elapsed_s": 7200.0,
              "rate": 1.0}
    assert paced_factor(target_usd=1.0, spent_usd=1.0, judged=5, **common) == 0.0
    assert paced_factor(target_usd=1.0, spent_usd=0.0, judged=0, **common) == 1.0
    half = paced_factor(target_usd=1.0, spent_usd=0.5, judged=50, **common)
    assert 0.0 < half < 1.0
