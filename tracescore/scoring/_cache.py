"""The judge-call cache: what a prompt step's answer is keyed by, and the cache protocol.

A judge asked the same question twice should not be paid twice. The key is everything that
decides the answer: the model and where it is served (``api_base``), the full message list as
sent (system message, prompt, an injected schema), the output schema and how it is asked for
(native ``response_format`` or injected), every sampling setting (``temperature``, ``seed``,
``top_p``, ``max_tokens``, ...), whether log-probabilities are asked for, and an **epoch** (a
per-scorer setting: a new epoch asks afresh). Keys and ``timeout``-like settings that do not
change the answer are left out.

What is cached is a step's *answer*: the validated output (or the text, without a schema), the
reply it came from, its log-probabilities, and what the step's requests used and cost. Only
answers that passed validation are stored, so a rescore after a flaky judge is not answered by
the same broken reply. A hit is recorded as a judge execution with ``cached = True``, cost 0 and
``saved_cost`` the original cost.

By default the cache applies to judges whose ``model_settings`` say ``temperature = 0`` (an
answer that is meant to be the same every time); ``cache_mode = "on"`` caches every judge and
``"off"`` none (``JudgeOptions``). Implementations: ``MemoryJudgeCache`` here (one process), and
the database-backed cache of ``tracescore.store`` (shared by live scoring, backfill and
``run_evals``).
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import logging
import math
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from tracescore.model import JudgeCost, JudgeExecution, JudgeUsage

from ._judge import Judge
from ._options import CacheMode, JudgeOptions
from ._structured import OutputSchema, SchemaMismatch

logger = logging.getLogger(__name__)

CachedAnswer = dict[str, Any]
"""A cached answer: ``output``, ``raw_output``, ``logprobs``, ``finish_reason``, ``usage``
(the ``JudgeUsage`` fields), ``cost`` (USD or None), ``model`` (the judge's model)."""

_NOT_ANSWER_SETTINGS = frozenset({
    "api_key", "api_base", "base_url", "timeout", "request_timeout", "num_retries",
    "max_retries", "stream", "metadata", "user", "extra_headers", "headers",
})
"""``model_settings`` keys that do not change what the model answers."""


class JudgeCache(Protocol):
    """Where cached answers live (see the module docstring)."""

    async def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or None."""

    async def put(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` under ``key`` (it may be written later; ``flush`` waits)."""

    async def flush(self) -> None:
        """Wait until every ``put`` so far is stored."""


def caches(judge: Judge, mode: CacheMode) -> bool:
    """Whether answers of ``judge`` are cached under ``mode``."""
    if mode == "off":
        return False
    if mode == "on":
        return True
    temperature = (judge.model_settings or {}).get("temperature")
    return isinstance(temperature, int | float) and not isinstance(temperature, bool) and (
        temperature == 0)


def cache_key(
    judge: Judge,
    *,
    messages: Sequence[Mapping[str, Any]],
    schema: Mapping[str, Any] | None,
    native: bool,
    logprobs: int | bool | None,
    epoch: int,
) -> str:
    """The key of one prompt step's answer (a sha256 hex digest of everything listed in the
    module docstring, canonical JSON: key order does not matter)."""
    settings = {k: v for k, v in (judge.model_settings or {}).items()
                if k not in _NOT_ANSWER_SETTINGS}
    canonical = json.dumps(
        {"model": judge.model, "api_base": judge.api_base, "messages": list(messages),
         "schema": schema, "native": native, "settings": settings, "logprobs": logprobs,
         "epoch": epoch},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def logprob_confidence(logprobs: list[dict[str, Any]] | None) -> float | None:
    """A reply's confidence from its token log-probabilities: the probability of its least
    likely token (None without log-probabilities)."""
    values = [entry.get("logprob") for entry in logprobs or ()]
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    return math.exp(min(numbers)) if numbers else None


async def cached_answer(
    options: JudgeOptions, key: str, *, prompt: str, schema: OutputSchema | None,
    model_id: str, provider: str | None, started: float,
) -> tuple[Any, JudgeExecution, list[dict[str, Any]] | None] | None:
    """A cache hit as (output, execution, logprobs), or None (a miss, an answer that no longer
    validates, or a cache that failed: the judge is asked)."""
    assert options.cache is not None
    try:
        answer = await options.cache.get(key)
    except Exception as exc:  # noqa: BLE001 - a broken cache must not stop scoring
        logger.warning("judge cache lookup failed (%s); asking the judge", exc)
        return None
    if answer is None:
        return None
    output = answer.get("output")
    if schema is not None:
        try:
            output = schema.validate(output)
        except SchemaMismatch:
            return None
    saved = answer.get("cost")
    logprobs = answer.get("logprobs")
    execution = JudgeExecution(
        status="success", prompt=prompt, judge_model_id=model_id, judge_provider=provider,
        attempt_count=0, model_call_count=0,
        duration_ms=(time.perf_counter() - started) * 1000.0, output=output,
        raw_output=answer.get("raw_output"), usage=JudgeUsage(),
        cost=JudgeCost(amount=0.0, source="cache"), finish_reason=answer.get("finish_reason"),
        cached=True, saved_cost=float(saved) if isinstance(saved, int | float) else None,
        confidence=logprob_confidence(logprobs))
    return output, execution, logprobs


async def remember_answer(options: JudgeOptions, key: str, model: str | None,
                          execution: JudgeExecution,
                          logprobs: list[dict[str, Any]] | None) -> None:
    """Store a valid answer under ``key`` (a failing cache is logged, never raised)."""
    assert options.cache is not None
    answer: CachedAnswer = {
        "output": execution.output, "raw_output": execution.raw_output, "logprobs": logprobs,
        "finish_reason": execution.finish_reason, "model": model,
        "usage": (execution.usage or JudgeUsage()).model_dump(),
        "cost": execution.cost.amount if execution.cost is not None else None,
    }
    try:
        await options.cache.put(key, answer)
    except Exception as exc:  # noqa: BLE001 - a broken cache must not fail a scored step
        logger.warning("judge cache store failed (%s); the answer is not cached", exc)


_asking: weakref.WeakKeyDictionary[Any, dict[str, asyncio.Future[None]]] = (
    weakref.WeakKeyDictionary())
"""Per cache, the keys whose question is being asked now (and a future resolved when done)."""


async def wait_or_claim(cache: Any, key: str) -> Callable[[], None] | None:
    """Single flight: when the same question is being asked now (in this process, same event
    loop), wait for that answer and return None (look the cache up again); else claim the key
    and return the function that releases it once the answer is stored (or failed)."""
    try:
        asking = _asking.setdefault(cache, {})
    except TypeError:  # a cache object that cannot be weakly referenced: no single flight
        return lambda: None
    loop = asyncio.get_running_loop()
    waiting = asking.get(key)
    if waiting is not None and not waiting.done() and waiting.get_loop() is loop:
        await asyncio.shield(waiting)
        return None
    claim: asyncio.Future[None] = loop.create_future()
    asking[key] = claim

    def release() -> None:
        if asking.get(key) is claim:
            del asking[key]
        if not claim.done():
            claim.set_result(None)

    return release


class MemoryJudgeCache:
    """A judge-call cache in this process's memory (the newest ``max_entries`` answers); for
    scripts and ``run_evals`` runs without a database (``run_evals(judge_cache=...)``)."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self.max_entries = max_entries
        self._answers: collections.OrderedDict[str, CachedAnswer] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._answers)

    async def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``, or None."""
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
        return answer

    async def put(self, key: str, answer: CachedAnswer) -> None:
        """Store ``answer`` (the oldest answer goes when the cache is full)."""
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > self.max_entries:
            self._answers.popitem(last=False)

    async def flush(self) -> None:
        """Nothing to wait for: puts are stored at once."""


__all__ = ["CachedAnswer", "JudgeCache", "MemoryJudgeCache", "cache_key", "cached_answer",
           "caches", "logprob_confidence", "remember_answer", "wait_or_claim"]
