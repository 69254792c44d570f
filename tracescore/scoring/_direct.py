"""The direct route: judge requests to an OpenAI endpoint through one shared ``openai`` client.

``litellm.acompletion`` spends about 4 ms of CPU per call on this 2-core machine before and after
the HTTP exchange (its logging object and success handlers, pricing every response, the
OpenAI SDK's request building, an httpx layer over aiohttp), all of it on the event loop. At 64
judge calls in flight answering in 200 ms (320 calls/s) that alone is more than a core, so the
live scorer stalls on CPU long before the judge is busy. The same request through the official
``openai`` SDK, with one ``AsyncOpenAI`` client per (event loop, endpoint) on its aiohttp
transport, costs about 1.1 ms.

A judge takes this route only when litellm would do nothing the SDK does not: litellm resolves
the model to its ``openai`` provider, the model is not one whose parameters litellm rewrites
(the o-series and gpt-5 reasoning models), every ``model_settings`` key is a plain Chat
Completions parameter, a key is at hand (the judge's or ``OPENAI_API_KEY``), and no litellm
callback, cache, alias map or global endpoint is set (those belong to litellm's own path, and a
user who registered a litellm callback keeps seeing every call). Everything else goes through
``litellm.acompletion`` as before. Errors are mapped by litellm's own ``exception_type`` (the
same classes, messages, status codes and headers as its path), and cost comes from litellm's
price map (``cost_per_token`` with the reply's usage), so a judge execution records the same
figures on either route.

Clients are closed when their event loop shuts down (``asyncio.run`` finalises async
generators first; one per loop holds the clients), so ``run_sync`` in a loop leaks nothing.
"""

from __future__ import annotations

import asyncio
import functools
import os
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ._judge import Judge

PLAIN_SETTINGS = frozenset({
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop",
    "presence_penalty", "frequency_penalty", "logit_bias", "user",
})
"""``model_settings`` keys litellm passes to an OpenAI model unchanged."""
_REQUEST_KEYS = frozenset({"model", "messages", "response_format", "logprobs", "top_logprobs"})
_LITELLM_KEYS = frozenset({"api_base", "api_key", "timeout", "num_retries", "max_retries"})
_HOOKS = ("callbacks", "success_callback", "failure_callback", "input_callback",
          "_async_success_callback", "_async_failure_callback", "_async_input_callback")
DEFAULT_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True, slots=True)
class DirectRoute:
    """Where a judge's requests go on the direct route."""

    model: str
    """The model name sent (litellm's provider prefix removed)."""
    base_url: str
    api_key: str
    timeout_s: float | None


@functools.lru_cache(maxsize=256)
def _openai_model(model: str, api_base: str | None) -> str | None:
    """The model name when litellm routes ``model`` to plain OpenAI Chat Completions."""
    from ._judge_call import load_litellm

    litellm = load_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model, api_base=api_base)
    except Exception:  # noqa: BLE001 - unknown to litellm: its own path reports it
        return None
    if provider != "openai":
        return None
    from litellm.llms.openai.chat.gpt_reasoning_transformation import OpenAIGPT5Config

    if litellm.OpenAIO1Config().is_model_o_series_model(name) or (
            OpenAIGPT5Config.is_model_gpt_5_model(name)):
        return None
    return str(name)


def direct_route(judge: Judge, kwargs: dict[str, Any]) -> DirectRoute | None:
    """The direct route for this request, or None when litellm must send it."""
    if not judge.model or set(kwargs) - _REQUEST_KEYS - _LITELLM_KEYS - PLAIN_SETTINGS:
        return None
    from ._judge_call import load_litellm

    litellm = load_litellm()
    if (litellm.cache is not None or litellm.model_alias_map or litellm.api_base
            or litellm.api_key or litellm.openai_key or litellm.drop_params
            or litellm.modify_params or any(getattr(litellm, hook, None) for hook in _HOOKS)):
        return None
    model = _openai_model(judge.model, judge.api_base)
    if model is None:
        return None
    key = judge.api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        return None  # litellm's path raises its missing-key error
    base = (judge.api_base or os.environ.get("OPENAI_BASE_URL")
            or os.environ.get("OPENAI_API_BASE") or DEFAULT_BASE)
    return DirectRoute(model, base, key, judge.timeout_s)


class _LoopClients:
    """The clients of one event loop, closed when the loop finalises its async generators."""

    def __init__(self) -> None:
        self.clients: dict[tuple[str, str, float | None], Any] = {}
        self.closer: AsyncIterator[None] | None = None

    async def close_at_shutdown(self, loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
        try:
            yield
        finally:
            _by_loop.pop(loop, None)
            for client in self.clients.values():
                await client.close()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = (
    weakref.WeakKeyDictionary())


async def _client(route: DirectRoute) -> Any:
    loop = asyncio.get_running_loop()
    held = _by_loop.get(loop)
    if held is None:
        held = _by_loop[loop] = _LoopClients()
        held.closer = held.close_at_shutdown(loop)
        await held.closer.__anext__()  # registered with the loop's async-generator hooks
    key = (route.base_url, route.api_key, route.timeout_s)
    client = held.clients.get(key)
    if client is None:
        import openai

        options: dict[str, Any] = {"base_url": route.base_url, "api_key": route.api_key,
                                   "max_retries": 0, "http_client": openai.DefaultAioHttpClient()}
        if route.timeout_s is not None:
            options["timeout"] = route.timeout_s
        client = held.clients[key] = openai.AsyncOpenAI(**options)
    return client


async def direct_completion(route: DirectRoute, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Send one Chat Completions request; return the reply's JSON object (failures raise
    litellm's exception for them)."""
    body = {k: v for k, v in kwargs.items() if k not in _LITELLM_KEYS}
    body["model"] = route.model
    client = await _client(route)
    try:
        # The SDK's documented call for any endpoint: the body is sent as given (``create``
        # re-validates every parameter first) and the reply comes back as its JSON object.
        reply: dict[str, Any] = await client.post("/chat/completions", cast_to=object,
                                                  body=body)
        return reply
    except Exception as exc:
        from ._judge_call import load_litellm

        try:
            load_litellm().exception_type(model=route.model, original_exception=exc,
                                          custom_llm_provider="openai")
        except Exception as mapped:
            raise mapped from exc
        raise


def direct_cost(route: DirectRoute, usage: dict[str, Any] | None) -> float | None:
    """The reply's cost from litellm's price map (None when the model has no price)."""
    if not isinstance(usage, dict):
        return None
    from ._judge_call import load_litellm

    litellm = load_litellm()
    try:
        prompt, completion = litellm.cost_per_token(
            model=route.model, custom_llm_provider="openai",
            usage_object=litellm.Usage(**{k: v for k, v in usage.items() if v is not None}))
    except Exception:  # noqa: BLE001 - the model is not in litellm's price map
        return None
    return float(prompt + completion)


__all__ = ["DirectRoute", "direct_completion", "direct_cost", "direct_route"]
