"""How the live scorer's judge calls run: cache, timeout, prices, the calls in flight.

``run_options(live, reg)`` is what the worker wraps each run of a judge scorer in
(``tracescore.scoring.judge_options``):

- the judge-call cache: the database's ``judge_cache`` table (``StoreJudgeCache``, bounded by
  ``[live] judge_cache_max_bytes`` and ``judge_cache_max_age_seconds``), shared with backfill,
  rescore and ``run_evals`` on the same database; per scorer ``judge_cache = true`` caches every
  judge, ``false`` none, unset the judges at temperature 0; ``judge_cache_epoch`` is part of
  the key;
- the timeout of each judge request: ``[[scorers]] judge_timeout_seconds``, else ``[live]
  judge_timeout_seconds`` (default 60 s), named in the error of a request that outlives it;
- prices: ``[pricing."MODEL"]`` first (``cost_source = 'config'``), then litellm's map; a judge
  with neither is ``unpriced``;
- a tracker per scorer counting its judge requests in flight and the oldest one's start
  (``tracescore scorers``, the Scorers page).

``unpriced_judges`` finds the judges no price is known for, which ``check_judge_prices`` refuses
when a USD budget is set (a cap that could never trigger), and the CLI and dashboard show as
``unpriced``.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._config import BudgetSettings, LiveSettings
from ._errors import ConfigError
from ._pricing import Pricing
from ._registry import RegisteredScorer, Registry

if TYPE_CHECKING:
    from tracescore.model import JudgeUsage

    from ._context import LiveContext


@dataclass
class JudgeCalls:
    """Judge requests in flight, per scorer (thread-safe; requests start on the event loop)."""

    _open: dict[str, dict[int, float]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def tracker(self, scorer_id: str) -> _Tracker:
        """The ``CallTracker`` of one scorer's runs."""
        return _Tracker(self, scorer_id)

    def status(self, scorer_id: str, *, now_s: float | None = None) -> tuple[int, float | None]:
        """(requests in flight, age in seconds of the oldest) of a scorer."""
        with self._lock:
            starts = list(self._open.get(scorer_id, {}).values())
        if not starts:
            return 0, None
        return len(starts), (time.monotonic() if now_s is None else now_s) - min(starts)

    def _start(self, scorer_id: str) -> int:
        with self._lock:
            token = next(self._ids)
            self._open.setdefault(scorer_id, {})[token] = time.monotonic()
            return token

    def _finish(self, scorer_id: str, token: int) -> None:
        with self._lock:
            self._open.get(scorer_id, {}).pop(token, None)


@dataclass(frozen=True, slots=True)
class _Tracker:
    calls: JudgeCalls
    scorer_id: str

    def started(self) -> int:
        return self.calls._start(self.scorer_id)

    def finished(self, token: Any) -> None:
        self.calls._finish(self.scorer_id, int(token))


def judge_price(pricing: Pricing) -> Any:
    """The ``PriceFn`` of ``judge_options`` for ``[pricing]``'s overrides (litellm's own map is
    asked by the judge call itself when this returns None)."""

    def price(model: str, provider: str | None, usage: JudgeUsage) -> tuple[float, str] | None:
        found = pricing.price(model, provider)
        if found is None or found[1] != "config":
            return None
        rates, source = found
        return rates.cost(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cached_input_tokens=usage.cached_input_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            reasoning_tokens=usage.reasoning_tokens), source

    return price


def run_options(live: LiveContext, reg: RegisteredScorer) -> dict[str, Any]:
    """The ``judge_options`` of one run of ``reg`` (see the module docstring)."""
    settings = live.settings
    if reg.judge_timeout_s is not None:
        timeout_s, setting = reg.judge_timeout_s, (
            f"[[scorers]] id {reg.id!r} judge_timeout_seconds = {reg.judge_timeout_s:g}")
    else:
        timeout_s, setting = settings.judge_timeout_seconds, (
            f"[live] judge_timeout_seconds = {settings.judge_timeout_seconds:g}")
    cache = live.judge_cache if reg.judge_cache is not False else None
    return {"cache": cache, "cache_mode": "on" if reg.judge_cache else "auto",
            "cache_epoch": reg.judge_cache_epoch, "timeout_s": timeout_s,
            "timeout_setting": setting, "price": live.judge_price,
            "tracker": live.judge_calls.tracker(reg.id)}


def unpriced_judges(registry: Registry, pricing: Pricing) -> list[tuple[str, str]]:
    """(scorer id, judge model) of every enabled judge no price is known for."""
    out = []
    for reg in registry.enabled():
        if not reg.uses_judge or reg.scorer is None:
            continue
        for model in sorted({j.model for j in reg.scorer.judges if j.model}):
            provider = model.split("/", 1)[0] if "/" in model else None
            if pricing.price(model, provider) is None:
                out.append((reg.id, model))
    return out


def check_judge_prices(registry: Registry, settings: LiveSettings, pricing: Pricing, *,
                       source: str = "the config file") -> None:
    """Refuse a USD budget over a judge no price is known for (``ConfigError``): its spend
    would count as $0 and the cap never trigger. A token budget alone is fine."""
    budget: BudgetSettings = settings.budget
    caps = [name for name in ("max_judge_cost_usd_per_hour", "max_judge_cost_usd_per_day")
            if getattr(budget, name)]
    unpriced = unpriced_judges(registry, pricing)
    if not caps or not unpriced:
        return
    scorer_id, model = unpriced[0]
    raise ConfigError(
        f"scorer {scorer_id!r} in {source}: judge model {model!r} has no known price, so the "
        f"USD budget ([live.budget] {' and '.join(caps)}) could never count its spend; add "
        f'[pricing."{model}"] with input_cost_per_token and output_cost_per_token, or set '
        f"{' and '.join(caps)} to 0 and cap tokens with max_judge_tokens_per_hour")


__all__ = ["JudgeCalls", "check_judge_prices", "judge_price", "run_options", "unpriced_judges"]
