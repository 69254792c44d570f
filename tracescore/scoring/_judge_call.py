"""One prompt step's judge work through litellm, recorded as a ``JudgeExecution``.

Requests to a plain OpenAI model go through one shared HTTP session instead of
``litellm.acompletion`` (the same request, errors and prices for a tenth of the CPU; see
``_direct``).

Every request sent for the step counts in ``attempt_count`` (retries and the structured-output
fallback included); litellm's and the OpenAI client's own retries are off so nothing is sent
uncounted. Usage is summed over the requests that returned; cost comes from the price function
of ``judge_options`` (``[pricing]``) when it knows the model, else from litellm's price map, and
is left out otherwise (the row then says ``unpriced``).

``judge_options`` (``_options``) also brings the cache (a step's answer is looked up before any
request and stored after a valid one, ``_cache``), the timeout of each request (past it the
attempt fails with ``JudgeTimeoutError`` naming the setting) and the in-flight tracker.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import time
from typing import Any, Literal

from tracescore.model import JudgeCost, JudgeError, JudgeExecution, JudgeUsage

from ._cache import (
    cache_key,
    cached_answer,
    caches,
    logprob_confidence,
    remember_answer,
    wait_or_claim,
)
from ._direct import direct_completion, direct_cost, direct_route
from ._errors import JudgeOutputError, JudgeTimeoutError, _error_code
from ._judge import Judge
from ._options import JudgeOptions, current_judge_options
from ._retry import decide_retry, error_kind
from ._steps import StepCallable
from ._structured import (
    OutputSchema,
    SchemaMismatch,
    correction_message,
    parse_json_reply,
    response_format,
    schema_instruction,
)

logger = logging.getLogger(__name__)


def load_litellm() -> Any:
    """Import litellm (once, quietly, with the bundled price map), then take the objects alive
    at that point out of the cycle collector's full passes (``freeze_heap``)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    if not getattr(litellm, "_tracescore_configured", False):
        litellm.suppress_debug_info = True
        # Each run_sync() has its own event loop; litellm's logging worker warns on every switch.
        logging.getLogger("LiteLLM").addFilter(_drop_loop_change_warning)
        litellm._tracescore_configured = True
        freeze_heap()
    return litellm


def freeze_heap() -> None:
    """Collect garbage once, then move every object alive now to the collector's permanent
    generation (``gc.freeze``).

    Importing litellm leaves about a million container objects (its provider classes, pydantic
    models and price map) that live as long as the process. CPython's full (generation 2)
    collection walks every tracked object, so with them each one took about 0.4 s here, holding
    the GIL: a live scorer judging 320 traces/s ran into one every couple of seconds, stalling
    every judge call in flight. Frozen objects are still freed by reference counting; only a
    reference cycle among them would never be collected, hence the collection first."""
    import gc

    gc.collect()
    gc.freeze()


def _drop_loop_change_warning(record: logging.LogRecord) -> bool:
    return "event loop changed" not in str(record.msg)


class JudgeCallFailed(Exception):  # noqa: N818 - internal carrier, never leaves the room
    """Carries the failed step's execution record and the original exception."""

    def __init__(self, execution: JudgeExecution, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.execution = execution
        self.cause = cause


@functools.lru_cache(maxsize=256)
def _provider_of(model: str, api_base: str | None) -> tuple[str, str | None]:
    try:
        name, provider, _, _ = load_litellm().get_llm_provider(model, api_base=api_base)
        return str(name), provider
    except Exception:  # noqa: BLE001 - unknown provider: report the string as given
        head, _, tail = model.partition("/")
        return (tail, head) if tail else (model, None)


@functools.lru_cache(maxsize=256)
def supports_logprobs(model: str) -> bool:
    """Whether litellm lists ``logprobs`` among the parameters ``model`` takes (unknown: yes)."""
    try:
        params = load_litellm().get_supported_openai_params(model=model)
    except Exception:  # noqa: BLE001 - unknown provider: let the provider decide
        return True
    return params is None or "logprobs" in params


def token_logprobs(choice: Any) -> list[dict[str, Any]] | None:
    """A reply's token log-probabilities as plain dicts, or None when it has none."""
    content = _field(_field(choice, "logprobs"), "content")
    if not content:
        return None
    return [
        {
            "token": _field(entry, "token"),
            "logprob": _field(entry, "logprob"),
            "top_logprobs": [{"token": _field(top, "token"), "logprob": _field(top, "logprob")}
                             for top in _field(entry, "top_logprobs") or ()],
        }
        for entry in content
    ]


@functools.lru_cache(maxsize=256)
def supports_native_schema(model: str) -> bool:
    """Whether litellm says ``model`` accepts a JSON-schema ``response_format``."""
    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:  # noqa: BLE001 - unknown models: assume not
        return False


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def normalise_usage(usage: Any) -> JudgeUsage:
    """litellm/OpenAI/Anthropic usage → ``JudgeUsage`` (missing figures are 0)."""
    if usage is None:
        return JudgeUsage()
    input_tokens = int(_field(usage, "prompt_tokens") or _field(usage, "input_tokens") or 0)
    output_tokens = int(_field(usage, "completion_tokens") or _field(usage, "output_tokens") or 0)
    total = int(_field(usage, "total_tokens") or input_tokens + output_tokens)
    reasoning = _field(_field(usage, "completion_tokens_details"), "reasoning_tokens")
    cached = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    if not cached:
        cached = _field(usage, "cache_read_input_tokens")
    creation = _field(usage, "cache_creation_input_tokens")
    return JudgeUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        reasoning_tokens=int(reasoning or 0),
        cached_input_tokens=int(cached or 0),
        cache_creation_input_tokens=int(creation or 0),
    )


def _cost_of(litellm: Any, response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        cost = hidden.get("response_cost")
    else:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # noqa: BLE001 - the model is not in litellm's price map
            cost = None
    return float(cost) if isinstance(cost, int | float) else None


class _StepCall:
    """The requests of one step: counts, usage, cost, retries."""

    def __init__(self, judge: Judge, *, step: str, top_logprobs: int | None = None) -> None:
        self.judge = judge
        self.step = step
        self.options = current_judge_options()
        self.top_logprobs = top_logprobs
        self.wants_logprobs = top_logprobs is not None or self.options.logprobs
        self.logprobs: list[dict[str, Any]] | None = None
        self.litellm = load_litellm()
        self.attempts = 0
        self.model_calls = 0
        self.retries = 0
        self.usage = JudgeUsage()
        self.cost: float | None = None
        self.finish_reason: str | None = None
        self.raw_output: str | None = None
        self.response_model: str | None = None
        self.system_fingerprint: str | None = None

    def _kwargs(self, messages: list[dict[str, Any]], fmt: dict[str, Any] | None) -> dict[str, Any]:
        judge = self.judge
        kwargs: dict[str, Any] = dict(judge.model_settings or {})
        kwargs.pop("stream", None)  # a step needs the whole reply (and its usage)
        kwargs.update(model=judge.model, messages=messages, num_retries=0, max_retries=0)
        if judge.api_base:
            kwargs["api_base"] = judge.api_base
        if judge.api_key:
            kwargs["api_key"] = judge.api_key
        if judge.timeout_s is not None:
            kwargs["timeout"] = judge.timeout_s
        if fmt is not None:
            kwargs["response_format"] = fmt
        if self.wants_logprobs and supports_logprobs(judge.model or ""):
            kwargs["logprobs"] = True
            if self.top_logprobs is not None:
                kwargs["top_logprobs"] = self.top_logprobs
        return kwargs

    async def _send(self, kwargs: dict[str, Any]) -> Any:
        """One request to the provider, within the options' timeout, told to the tracker."""
        route = direct_route(self.judge, kwargs)
        options = self.options
        token = options.tracker.started() if options.tracker is not None else None
        try:
            if options.timeout_s is None:
                return route, await self._post(route, kwargs)
            deadline = asyncio.timeout(options.timeout_s)
            try:
                async with deadline:
                    return route, await self._post(route, kwargs)
            except TimeoutError:
                if not deadline.expired():
                    raise
                raise JudgeTimeoutError.after(
                    model=self.judge.model, api_base=self.judge.api_base,
                    timeout_s=options.timeout_s, setting=options.timeout_setting) from None
        finally:
            if options.tracker is not None:
                options.tracker.finished(token)

    async def _post(self, route: Any, kwargs: dict[str, Any]) -> Any:
        if route is None:
            return await self.litellm.acompletion(**kwargs)
        return await direct_completion(route, kwargs)

    async def request(self, messages: list[dict[str, Any]], fmt: dict[str, Any] | None) -> str:
        """Send one logical request (retrying as the error processors say); return its text."""
        for processor in self.judge.input_processors:
            changed = await StepCallable.of(processor, what="input processor").call(messages)
            if changed is not None:
                messages = list(changed)
        limit = self.judge.processor_retry_limit
        while True:
            self.attempts += 1
            kwargs = self._kwargs(messages, fmt)
            try:
                route, response = await self._send(kwargs)
            except Exception as exc:
                wait_s = None
                if self.judge.error_processors and self.retries < limit:
                    wait_s = await decide_retry(self.judge.error_processors, exc, self.retries)
                if wait_s is None:
                    raise
                logger.info("judge %s step %s: retry %d in %.3fs after %s", self.judge.model,
                            self.step, self.retries + 1, wait_s, type(exc).__name__)
                self.retries += 1
                await asyncio.sleep(wait_s)
                continue
            self.model_calls += 1
            usage = _field(response, "usage")
            cost = _cost_of(self.litellm, response) if route is None else direct_cost(route, usage)
            self.usage = self.usage + normalise_usage(usage)
            if cost is not None:
                self.cost = (self.cost or 0.0) + cost
            choices = _field(response, "choices")
            choice = choices[0] if choices else None
            message = _field(choice, "message")
            text = _field(message, "content")
            self.finish_reason = _field(choice, "finish_reason")
            self.response_model = _field(response, "model") or self.response_model
            self.system_fingerprint = (_field(response, "system_fingerprint")
                                       or self.system_fingerprint)
            self.raw_output = text if isinstance(text, str) else None
            if self.wants_logprobs:
                self.logprobs = token_logprobs(choice)
            text = text if isinstance(text, str) else ""
            for processor in self.judge.output_processors:
                text = await StepCallable.of(processor, what="output processor").call(text)
                if not isinstance(text, str):
                    raise TypeError("an output processor must return text")
            return text

    def execution(
        self,
        *,
        status: Literal["success", "failed"],
        prompt: str,
        started: float,
        output: Any = None,
        error: BaseException | None = None,
    ) -> JudgeExecution:
        model_id, provider = _provider_of(self.judge.model or "", self.judge.api_base)
        cost = JudgeCost(amount=self.cost) if self.cost is not None else None
        if self.options.price is not None and self.model_calls:
            found = self.options.price(self.judge.model or "", provider, self.usage)
            if found is not None:
                cost = JudgeCost(amount=found[0], source=found[1])
        return JudgeExecution(
            status=status,
            prompt=prompt,
            judge_model_id=model_id,
            judge_provider=provider,
            attempt_count=self.attempts,
            model_call_count=self.model_calls,
            duration_ms=(time.perf_counter() - started) * 1000.0,
            output=output,
            raw_output=self.raw_output,
            usage=self.usage,
            cost=cost,
            finish_reason=self.finish_reason,
            error=None if error is None else JudgeError(
                name=type(error).__name__, message=str(error)[:2000], code=_error_code(error)),
            confidence=logprob_confidence(self.logprobs),
            response_model=self.response_model,
            system_fingerprint=self.system_fingerprint,
        )


def _messages(judge: Judge, prompt: str, schema: OutputSchema | None, inject: str | None
              ) -> list[dict[str, Any]]:
    system = judge.instructions or ""
    user = prompt
    if schema is not None and inject == "system":
        injected = schema_instruction(schema)
        system = f"{system}\n\n{injected}" if system else injected
    elif schema is not None and inject == "inline":
        user = f"{prompt}\n\n{schema_instruction(schema)}"
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    return messages


def _structured_plan(judge: Judge) -> tuple[bool, str]:
    """(use native output first, injection mode for injected attempts)."""
    mode = judge.json_prompt_injection
    if mode is False:
        return True, "inline"
    if mode == "system":
        return False, "system"
    if mode is True or mode == "inline":
        return False, "inline"
    return supports_native_schema(judge.model or ""), "inline"


async def call_judge(judge: Judge, *, prompt: str, schema: OutputSchema | None, step: str
                     ) -> tuple[Any, JudgeExecution]:
    """Ask the judge; return (validated output or text, execution) or raise ``JudgeCallFailed``.

    With a schema the first attempt uses native structured output or injection (per
    ``json_prompt_injection``); when it brings no valid object, one fallback attempt injects
    the schema and says what was wrong.
    """
    output, execution, _ = await call_judge_logprobs(judge, prompt=prompt, schema=schema,
                                                     step=step)
    return output, execution


async def call_judge_logprobs(
    judge: Judge, *, prompt: str, schema: OutputSchema | None, step: str,
    top_logprobs: int | None = None,
) -> tuple[Any, JudgeExecution, list[dict[str, Any]] | None]:
    """``call_judge``, also returning the token log-probabilities of the reply that gave the
    output when ``top_logprobs`` asks for them (None when not asked or none came back)."""
    if "litellm" not in sys.modules:
        # The first import takes seconds: keep the event loop free meanwhile.
        await asyncio.to_thread(load_litellm)
    started = time.perf_counter()
    options = current_judge_options()
    key = _cache_key(judge, options, prompt=prompt, schema=schema, top_logprobs=top_logprobs)
    release = None
    if key is not None:
        model_id, provider = _provider_of(judge.model or "", judge.api_base)
        while release is None:  # the same question being asked now: wait for its answer
            hit = await cached_answer(options, key, prompt=prompt, schema=schema,
                                      model_id=model_id, provider=provider, started=started)
            if hit is not None:
                return hit
            release = await wait_or_claim(options.cache, key)
        # Claimed. The answer may have been stored while the lookup above ran (a question
        # asked and answered meanwhile, its claim already released): look once more.
        hit = await cached_answer(options, key, prompt=prompt, schema=schema,
                                  model_id=model_id, provider=provider, started=started)
        if hit is not None:
            release()
            return hit
    try:
        return await _ask(judge, prompt=prompt, schema=schema, step=step,
                          top_logprobs=top_logprobs, started=started, options=options, key=key)
    finally:
        if release is not None:
            release()


async def _ask(judge: Judge, *, prompt: str, schema: OutputSchema | None, step: str,
               top_logprobs: int | None, started: float, options: JudgeOptions,
               key: str | None) -> tuple[Any, JudgeExecution, list[dict[str, Any]] | None]:
    """Send the step's requests; store a valid answer under ``key``."""
    call = _StepCall(judge, step=step, top_logprobs=top_logprobs)
    try:
        if schema is None:
            text = await call.request(_messages(judge, prompt, None, None), None)
            output: Any = text.strip()
        else:
            output = await _structured(call, judge, prompt, schema)
    except Exception as exc:
        execution = call.execution(status="failed", prompt=prompt, started=started, error=exc)
        raise JudgeCallFailed(execution, exc) from exc
    execution = call.execution(status="success", prompt=prompt, started=started, output=output)
    if key is not None:
        await remember_answer(options, key, judge.model, execution, call.logprobs)
    return output, execution, call.logprobs


def _cache_key(judge: Judge, options: JudgeOptions, *, prompt: str,
               schema: OutputSchema | None, top_logprobs: int | None) -> str | None:
    """The step's cache key, or None when its answers are not cached here."""
    if options.cache is None or not caches(judge, options.cache_mode):
        return None
    native, inject = _structured_plan(judge) if schema is not None else (False, "inline")
    first = _messages(judge, prompt, schema, None if native or schema is None else inject)
    return cache_key(judge, messages=first,
                     schema=schema.json_schema if schema is not None else None, native=native,
                     logprobs=top_logprobs if top_logprobs is not None else options.logprobs,
                     epoch=options.cache_epoch)


async def _structured(call: _StepCall, judge: Judge, prompt: str, schema: OutputSchema) -> Any:
    native, inject_mode = _structured_plan(judge)
    first_messages = _messages(judge, prompt, schema, None if native else inject_mode)
    try:
        text = await call.request(first_messages, response_format(schema) if native else None)
    except Exception as exc:
        # A provider refusing response_format: retry once with the schema in the prompt.
        if not native or error_kind(exc) != "bad_request":
            raise
        logger.info("judge %s refused native structured output (%s); injecting the schema",
                    judge.model, exc)
        text = await call.request(_messages(judge, prompt, schema, inject_mode), None)
        return _validated(schema, text)
    try:
        return schema.validate(parse_json_reply(text))
    except SchemaMismatch as problem:
        fallback = _messages(judge, prompt, schema, inject_mode)
        fallback.append({"role": "assistant", "content": text})
        fallback.append({"role": "user", "content": correction_message(str(problem))})
        return _validated(schema, await call.request(fallback, None))


def _validated(schema: OutputSchema, text: str) -> Any:
    try:
        return schema.validate(parse_json_reply(text))
    except SchemaMismatch as problem:
        raise JudgeOutputError(
            f"the judge's reply does not match the {schema.name} schema: {problem}",
            raw_output=text[:2000],
        ) from None
