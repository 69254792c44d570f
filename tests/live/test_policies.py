"""Pure policies: deterministic sampling, retry/backoff decisions, budget caps."""

from __future__ import annotations

import random
import uuid

from tracescore.live import (
    BudgetGuard,
    BudgetSettings,
    BudgetUsage,
    RetryPolicy,
    is_sampled,
    sample_fraction,
)


def test_sampling_is_stable_and_nested() -> None:
    ids = [uuid.UUID(int=random.Random(7).getrandbits(128) + i).hex for i in range(2000)]
    half = {t for t in ids if is_sampled(t, 0.5)}
    assert half == {t for t in ids if is_sampled(t, 0.5)}
    assert 850 < len(half) < 1150
    quarter = {t for t in ids if is_sampled(t, 0.25)}
    assert quarter < half
    assert all(0 <= sample_fraction(t) < 1 for t in ids)
    assert sample_fraction(ids[0].upper()) == sample_fraction(ids[0])
    assert not any(is_sampled(t, 0.0) for t in ids) and all(is_sampled(t, 1.0) for t in ids)


def test_transient_errors_do_not_spend_attempts_and_honour_retry_after() -> None:
    policy = RetryPolicy(max_attempts=3, retry_base_s=30, jitter=0)
    d = policy.decide("rate_limit", attempts=1, retry_after_s=7)
    assert (d.final, d.attempts, d.delay_s) == (False, 1, 7)
    d = policy.decide("transient", attempts=0, transient_streak=3)
    assert (d.final, d.attempts, d.delay_s) == (False, 0, 8)
    d = policy.decide("transient", attempts=0, transient_streak=30)
    assert d.delay_s == policy.transient_max_s


def test_permanent_errors_spend_attempts_with_doubling_backoff() -> None:
    policy = RetryPolicy(max_attempts=3, retry_base_s=30, jitter=0)
    first = policy.decide("permanent", attempts=0)
    second = policy.decide("permanent", attempts=1)
    third = policy.decide("permanent", attempts=2)
    assert (first.attempts, first.delay_s, first.final) == (1, 30, False)
    assert (second.attempts, second.delay_s, second.final) == (2, 60, False)
    assert (third.attempts, third.final) == (3, True)


def test_auth_errors_pause_the_scorer() -> None:
    d = RetryPolicy().decide("auth", attempts=0)
    assert d.pause_scorer and not d.final and d.attempts == 0


def test_budget_caps() -> None:
    guard = BudgetGuard(BudgetSettings(max_judge_cost_usd_per_hour=1.0,
                                       max_judge_tokens_per_hour=1000))
    assert guard.active and guard.exceeded() is None
    guard.begin_snapshot()
    guard.set_snapshot(BudgetUsage(cost_usd_hour=0.5, cost_usd_day=0.5, tokens_hour=100))
    guard.add(cost_usd=0.25, tokens=100)
    assert guard.exceeded() is None
    guard.add(cost_usd=None, tokens=800)
    reason = guard.exceeded()
    assert reason is not None and "max_judge_tokens_per_hour" in reason
    guard.begin_snapshot()
    guard.set_snapshot(BudgetUsage(cost_usd_hour=1.2, cost_usd_day=1.2, tokens_hour=0))
    reason = guard.exceeded()
    assert reason is not None and "max_judge_cost_usd_per_hour" in reason
    guard.begin_snapshot()
    guard.set_snapshot(BudgetUsage())
    assert guard.exceeded() is None


def test_spend_counted_while_the_budget_is_read_is_kept() -> None:
    guard = BudgetGuard(BudgetSettings(max_judge_tokens_per_hour=20))
    guard.add(cost_usd=None, tokens=15)  # stored before the read begins: the read holds it
    guard.begin_snapshot()
    guard.add(cost_usd=None, tokens=15)  # answered while the read runs: not in what it sees
    guard.set_snapshot(BudgetUsage(tokens_hour=15))
    assert guard.usage().tokens_hour == 30
    reason = guard.exceeded()
    assert reason is not None and "max_judge_tokens_per_hour" in reason
    no_caps = BudgetSettings(max_judge_cost_usd_per_hour=0, max_judge_cost_usd_per_day=None,
                             max_judge_tokens_per_hour=0)
    assert not BudgetGuard(no_caps).active
