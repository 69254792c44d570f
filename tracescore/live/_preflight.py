"""Start-up checks of the judge scorers, and ``tracescore check``'s one tiny call per judge.

A judge scorer set up slightly wrong used to say "running" and never score. At start-up
``check_judges(registry)`` asks litellm, without sending a request, two things of every enabled
judge scorer's judges:

- does the model string name a provider (``litellm.get_llm_provider``)? If not, the config is
  wrong: ``ConfigError`` with one sentence (``gpt4o-mini`` → write ``openai/gpt-4o-mini``);
- are the provider's credentials there (``litellm.validate_environment``, or an ``api_key`` on
  the judge)? If not, the scorer starts ``paused`` with the reason, and a WARNING is logged.

``probe_judges(registry)`` sends one tiny real request through each distinct judge (model,
``api_base``, key) and reports what came back, for ``tracescore check``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigError
from ._registry import Registry

logger = logging.getLogger(__name__)

PROBE_PROMPT = "Reply with the single word OK."
"""What ``probe_judges`` asks each judge (a few tokens in, at most ``PROBE_MAX_TOKENS`` out)."""
PROBE_MAX_TOKENS = 5
# Keys that only name where the provider is, not who the caller is.
_ADDRESS_SUFFIXES = ("_API_BASE", "_BASE_URL", "_ENDPOINT", "_HOST")


@dataclass(frozen=True, slots=True)
class JudgeProbe:
    """The answer of one judge to ``PROBE_PROMPT``."""

    scorer_ids: tuple[str, ...]
    model: str
    api_base: str | None
    ok: bool
    message: str
    """The reply's first words when ``ok``; else what failed and what to do."""
    duration_ms: float


def _judges_of(registry: Registry) -> Iterable[tuple[str, Any]]:
    """(scorer id, judge) for every judge of every enabled scorer."""
    for reg in registry.enabled():
        if not reg.uses_judge or reg.scorer is None:
            continue
        seen: set[tuple[Any, ...]] = set()
        for judge in reg.scorer.judges:
            key = (judge.model, judge.api_base, judge.api_key)
            if judge.model and key not in seen:
                seen.add(key)
                yield reg.id, judge


def _has_key(judge: Any) -> bool:
    settings = judge.model_settings or {}
    return bool(judge.api_key or settings.get("api_key"))


def missing_credentials(litellm: Any, judge: Any) -> list[str]:
    """The environment variables litellm says the judge's provider needs and does not have."""
    if _has_key(judge):
        return []
    try:
        found = litellm.validate_environment(model=judge.model, api_base=judge.api_base)
    except Exception:  # noqa: BLE001 - a provider litellm cannot check is not refused
        return []
    # Only credentials count: an address (OLLAMA_API_BASE) has a default or comes as api_base,
    # and a wrong one shows at the first call (``tracescore check``).
    missing = map(str, found.get("missing_keys") or ())
    return [k for k in missing if not k.endswith(_ADDRESS_SUFFIXES)]


def _check_provider(litellm: Any, scorer_id: str, judge: Any, source: str) -> None:
    try:
        litellm.get_llm_provider(judge.model, api_base=judge.api_base)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError; any failure means the same
        raise ConfigError(
            f"scorer {scorer_id!r} in {source}: judge model {judge.model!r} names no provider "
            "litellm knows; write it as provider/model, e.g. 'openai/gpt-4o-mini' or "
            "'ollama/llama3.1' (TRACESCORE_JUDGE_MODEL or [live] judge_model for the built-in "
            "judge scorers)"
        ) from None


def check_judges(registry: Registry, *, source: str = "the config file",
                 warn: bool = True) -> dict[str, str]:
    """Check every enabled judge scorer without a request; returns scorer id → why it must
    start paused (missing credentials), logged as a WARNING when ``warn``. Raises
    ``ConfigError`` for a model string litellm cannot route. Imports litellm (≈3.5 s) only
    when there is a judge scorer."""
    judged = list(_judges_of(registry))
    if not judged:
        return {}
    from tracescore.scoring import load_litellm

    litellm = load_litellm()
    paused: dict[str, str] = {}
    for scorer_id, judge in judged:
        _check_provider(litellm, scorer_id, judge, source)
        missing = missing_credentials(litellm, judge)
        if missing and scorer_id not in paused:
            names = " and ".join(missing)
            paused[scorer_id] = (
                f"judge {judge.model} has no credentials: set {names} in the server's "
                "environment (or give the judge an api_key), then restart tracescore"
            )
            if warn:
                logger.warning("scorer %s starts paused: %s", scorer_id, paused[scorer_id])
    return paused


def start_paused(scheduler: Any, paused: dict[str, str]) -> None:
    """Mark the scorers ``check_judges`` found unusable as paused on ``scheduler``."""
    for scorer_id, reason in paused.items():
        scheduler.control.paused.setdefault(scorer_id, reason)


async def probe_judges(registry: Registry, *, timeout_s: float = 30.0,
                       skip: Iterable[str] = ()) -> list[JudgeProbe]:
    """One tiny real request through each distinct judge of the enabled scorers (not of the
    scorers in ``skip``, e.g. those ``check_judges`` already found without credentials)."""
    skipped = set(skip)
    groups: dict[tuple[Any, ...], tuple[list[str], Any]] = {}
    for scorer_id, judge in _judges_of(registry):
        if scorer_id in skipped:
            continue
        key = (judge.model, judge.api_base, judge.api_key)
        groups.setdefault(key, ([], judge))[0].append(scorer_id)
    if not groups:
        return []
    from tracescore.scoring import load_litellm

    litellm = await asyncio.to_thread(load_litellm)
    return list(await asyncio.gather(*(
        _probe(litellm, ids, judge, timeout_s) for ids, judge in groups.values())))


async def _probe(litellm: Any, scorer_ids: list[str], judge: Any,
                 timeout_s: float) -> JudgeProbe:
    from tracescore.scoring import classify_error

    started = time.perf_counter()
    extra: dict[str, Any] = {}
    if judge.api_base:
        extra["api_base"] = judge.api_base
    if judge.api_key:
        extra["api_key"] = judge.api_key
    try:
        response = await litellm.acompletion(
            model=judge.model, messages=[{"role": "user", "content": PROBE_PROMPT}],
            max_tokens=PROBE_MAX_TOKENS, timeout=judge.timeout_s or timeout_s, num_retries=0,
            **extra)
    except Exception as exc:  # noqa: BLE001 - every failure is reported as a sentence
        kind = classify_error(exc)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        advice = {
            "auth": "check the provider key",
            "rate_limit": "the provider is rate limiting; try again later",
            "transient": "the provider did not answer; check api_base and that it is up",
        }.get(kind, "check the model name and api_base")
        return JudgeProbe(tuple(scorer_ids), judge.model, judge.api_base, False,
                          f"{kind}: {first}; {advice}", _ms(started))
    try:
        text = str(response.choices[0].message.content or "").strip()
    except (AttributeError, IndexError):
        text = ""
    return JudgeProbe(tuple(scorer_ids), judge.model, judge.api_base, True,
                      f"answered {text[:40]!r}", _ms(started))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


__all__ = ["PROBE_PROMPT", "JudgeProbe", "check_judges", "missing_credentials",
           "probe_judges", "start_paused"]
