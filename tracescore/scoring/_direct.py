"""The direct route: judge requests to an OpenAI endpoint on one shared aiohttp session.

``litellm.acompletion`` spends about 4 ms of CPU per call on this 2-core machine around the HTTP
exchange (its logging object and success handlers, pricing every response, the OpenAI SDK's
parameter transform, httpx over aiohttp), all of it on the event loop. At 64 judge calls in
flight answering in 200 ms (320 calls/s) that alone is more than a core, so the live scorer
stalls on CPU long before the judge is busy. Measured here with 64 requests in flight: the
OpenAI SDK on its aiohttp transport costs about 1.1 ms a call (0.8 ms through ``client.post``),
one plain aiohttp session about 0.25 ms. This module sends the same JSON body on such a
session, one per (event loop, endpoint), with no connection cap (the live scheduler's
``concurrency`` is the cap) and the endpoint's proxy looked up once.

A judge takes this route only when litellm would send the request unchanged: litellm resolves
the model to its ``openai`` provider, the model is not one whose parameters litellm rewrites
(the o-series and gpt-5 reasoning models), every ``model_settings`` key is a plain Chat
Completions parameter, a key is at hand (the judge's or ``OPENAI_API_KEY``), and no litellm
callback, cache, alias map, global key or endpoint, ``drop_params`` or ``modify_params`` is set
(those belong to litellm's own path, and a user who registered a litellm callback keeps seeing
every call). Everything else goes through ``litellm.acompletion`` as before. An HTTP error, a
timeout or a refused connection becomes the exception litellm's OpenAI handler raises for it,
mapped by litellm's own ``exception_type`` (the same classes, messages, status codes and
``Retry-After`` headers), and cost comes from litellm's price map (``cost_per_token`` on the
reply's usage), so a judge execution records the same figures on either route
(``tests/scoring/test_direct.py`` compares them).

Sessions are closed when their event loop shuts down (``asyncio.run`` finalises async
generators first; one per loop holds the sessions), so ``run_sync`` in a loop leaks nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NoReturn

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
DEFAULT_TIMEOUT_S = 600.0
"""litellm's and the OpenAI SDK's default request timeout."""
CONNECT_TIMEOUT_S = 5.0


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
    try:
        from litellm.llms.openai.chat.gpt_reasoning_transformation import OpenAIGPT5Config

        reasoning = litellm.OpenAIO1Config().is_model_o_series_model(name) or (
            OpenAIGPT5Config.is_model_gpt_5_model(name))
    except Exception:  # noqa: BLE001 - a litellm without these checks: let it decide
        return None
    return None if reasoning else str(name)


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


class _LoopSessions:
    """The HTTP sessions of one event loop (with each endpoint's proxy), closed when the loop
    finalises its async generators (``asyncio.run`` does so before closing the loop)."""

    def __init__(self) -> None:
        self.sessions: dict[str, tuple[Any, str | None]] = {}
        self.closer: AsyncIterator[None] | None = None

    async def close_at_shutdown(self, loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
        try:
            yield
        finally:
            _by_loop.pop(loop, None)
            for session, _ in self.sessions.values():
                await session.close()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSessions] = (
    weakref.WeakKeyDictionary())


def _proxy_for(url: str) -> str | None:
    """The ``HTTP(S)_PROXY`` / ``NO_PROXY`` choice for ``url``, made once per endpoint (with
    ``trust_env`` aiohttp would look it up, and netrc, in a worker thread on every request)."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return proxy or None


async def _session(base_url: str) -> tuple[Any, str | None]:
    """The loop's shared session for ``base_url`` and the proxy to send through."""
    loop = asyncio.get_running_loop()
    held = _by_loop.get(loop)
    if held is None:
        held = _by_loop[loop] = _LoopSessions()
        held.closer = held.close_at_shutdown(loop)
        await held.closer.__anext__()  # registered with the loop's async-generator hooks
    found = held.sessions.get(base_url)
    if found is None:
        import aiohttp

        # No connection cap (the live scheduler's concurrency is the cap) and no cookies.
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                        cookie_jar=aiohttp.DummyCookieJar())
        found = held.sessions[base_url] = (session, _proxy_for(base_url))
    return found


async def direct_completion(route: DirectRoute, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Send one Chat Completions request; return the reply's JSON object. Failures raise the
    exception litellm raises for them (mapped by its ``exception_type``)."""
    import aiohttp
    import orjson

    body = {k: v for k, v in kwargs.items() if k not in _LITELLM_KEYS}
    body["model"] = route.model
    url = f"{route.base_url.rstrip('/')}/chat/completions"
    headers = {"Authorization": f"Bearer {route.api_key}", "Content-Type": "application/json",
               "Accept": "application/json"}
    total_s = route.timeout_s if route.timeout_s is not None else DEFAULT_TIMEOUT_S
    timeout = aiohttp.ClientTimeout(total=total_s, sock_connect=min(CONNECT_TIMEOUT_S, total_s))
    session, proxy = await _session(route.base_url)
    try:
        async with session.post(url, data=orjson.dumps(body), headers=headers, proxy=proxy,
                                timeout=timeout) as reply:
            raw = await reply.read()
            status, reply_headers = reply.status, dict(reply.headers)
    except TimeoutError as exc:
        _raise_mapped(route, _timeout_error(), exc)
    except aiohttp.ClientError as exc:
        _raise_mapped(route, _connection_error(exc), exc)
    if status >= 400:
        _raise_mapped(route, _status_error(status, raw, reply_headers), None)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        _raise_mapped(route, _status_error(500, raw, reply_headers,
                                           prefix="the provider's reply is not JSON: "), exc)
    if not isinstance(data, dict):
        _raise_mapped(route, _status_error(500, raw, reply_headers,
                                           prefix="the provider's reply is not an object: "),
                      None)
    return data


def _status_error(status: int, raw: bytes, headers: dict[str, str], *, prefix: str = ""
                  ) -> Exception:
    """What litellm's OpenAI handler raises for an HTTP error (the message as the OpenAI SDK
    words it), for ``exception_type`` to map."""
    from litellm.llms.openai.common_utils import OpenAIError

    text = raw.decode("utf-8", "replace").strip()
    body: Any = None
    try:
        body = json.loads(text)
        message = f"Error code: {status} - {body}"
    except ValueError:
        message = text or f"Error code: {status}"
    return OpenAIError(status_code=status, message=prefix + message, headers=headers,
                       body=body if isinstance(body, dict) else None)


def _timeout_error() -> Exception:
    from litellm.llms.openai.common_utils import OpenAIError

    return OpenAIError(status_code=408, message="Request timed out.")


def _connection_error(exc: BaseException) -> Exception:
    from litellm.llms.openai.common_utils import OpenAIError

    return OpenAIError(status_code=500, message=f"Connection error: {exc}")


def _raise_mapped(route: DirectRoute, error: Exception, cause: BaseException | None) -> NoReturn:
    from ._judge_call import load_litellm

    try:
        load_litellm().exception_type(model=route.model, original_exception=error,
                                      custom_llm_provider="openai")
    except Exception as mapped:
        raise mapped from (cause or error)
    raise error from cause


def direct_cost(route: DirectRoute, usage: dict[str, Any] | None) -> float | None:
    """The reply's cost from litellm's price map (None when the model has no price)."""
    if not isinstance(usage, dict):
        return None
    import orjson

    from ._judge_call import load_litellm

    prices = load_litellm().model_cost
    entry = prices.get(route.model) or prices.get(f"openai/{route.model}")
    return _priced(route.model, orjson.dumps(usage, option=orjson.OPT_SORT_KEYS), repr(entry))


@functools.lru_cache(maxsize=4096)
def _priced(model: str, usage_json: bytes, entry: str) -> float | None:
    """litellm's price of one reply's usage (its pricing takes ~0.5 ms a call; replies of a
    judge often repeat the same token counts). ``entry`` is the model's price-map entry as
    text, so a price registered later with litellm is not answered from the memo."""
    import orjson

    from ._judge_call import load_litellm

    litellm = load_litellm()
    usage = {k: v for k, v in orjson.loads(usage_json).items() if v is not None}
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, custom_llm_provider="openai", usage_object=litellm.Usage(**usage))
    except Exception:  # noqa: BLE001 - the model is not in litellm's price map
        return None
    return float(prompt + completion)


__all__ = ["DirectRoute", "direct_completion", "direct_cost", "direct_route"]
