"""The direct route (one shared aiohttp session) against litellm's own path: the same requests
on the wire, the same execution records, the same errors; and when litellm keeps the call."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tracescore.model import JudgeExecution
from tracescore.scoring import (
    Judge,
    PromptStep,
    ScorerRunError,
    classify_error,
    create_scorer,
    load_litellm,
    retry_after_s,
)
from tracescore.testing import Reply, ScriptedLLMServer, error


class _Counting:
    """A litellm callback a user might register: it sees each call litellm makes."""

    def __init__(self) -> None:
        from litellm.integrations.custom_logger import CustomLogger

        calls = self.calls = []

        class Logger(CustomLogger):  # type: ignore[misc]
            async def async_log_success_event(self, kwargs: Any, response_obj: Any,
                                              start_time: Any, end_time: Any) -> None:
                calls.append(kwargs.get("model"))

        self.logger = Logger()


HOOKS = ("callbacks", "success_callback", "failure_callback", "input_callback",
         "_async_success_callback", "_async_failure_callback", "_async_input_callback")


def _unregister(logger: Any) -> None:
    """Take the callback out of every list litellm copies registered callbacks into."""
    litellm = load_litellm()
    for name in HOOKS:
        setattr(litellm, name, [c for c in getattr(litellm, name) if c is not logger])


@pytest.fixture
def litellm_callback() -> Iterator[_Counting]:
    """A registered litellm callback: while it is set, every judge call goes through litellm."""
    litellm = load_litellm()
    counting = _Counting()
    litellm.callbacks = [*litellm.callbacks, counting.logger]
    try:
        yield counting
    finally:
        _unregister(counting.logger)


def _scorer(server: ScriptedLLMServer, model: str, **judge: Any) -> Any:
    return create_scorer("direct", judge=Judge(model, "Grade.", api_base=server.url, **judge)
                         ).generate_score(PromptStep("s", lambda run, results: "score it"))


def _record(execution: JudgeExecution) -> dict[str, Any]:
    """An execution's fields that must not depend on the route (timing aside)."""
    return execution.model_dump(exclude={"duration_ms"})


async def _run(server: ScriptedLLMServer, reply: Reply, model: str, **judge: Any
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    server.reset()
    server.script(reply)
    result = await _scorer(server, model, **judge).run(input="q", output="a")
    (request,) = server.requests
    return request, _record(result.judge["generate_score"].executions[0])


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/scripted-judge"])
async def test_both_routes_send_the_same_request_and_record_the_same_execution(
    llm_server: ScriptedLLMServer, litellm_callback: _Counting, model: str,
) -> None:
    reply = Reply(content={"score": 0.5}, prompt_tokens=1200, completion_tokens=30,
                  reasoning_tokens=7, cached_tokens=1024)
    settings = {"temperature": 0, "max_tokens": 50, "seed": 7}
    via_litellm = await _run(llm_server, reply, model, model_settings=settings)
    for _ in range(200):  # litellm runs success callbacks on its logging worker, soon after
        if litellm_callback.calls:
            break
        await asyncio.sleep(0.01)
    assert litellm_callback.calls, "the call with a litellm callback registered went elsewhere"
    _unregister(litellm_callback.logger)
    seen = len(litellm_callback.calls)
    direct = await _run(llm_server, reply, model, model_settings=settings)
    await asyncio.sleep(0.1)
    assert len(litellm_callback.calls) == seen  # the direct route did not go through litellm
    assert direct[0] == via_litellm[0]  # the same JSON body on the wire
    assert direct[1] == via_litellm[1]  # usage, cost, output, finish reason, counts
    if model == "openai/gpt-4o-mini":
        assert direct[1]["cost"] is not None and direct[1]["cost"]["amount"] > 0


@pytest.mark.parametrize("failure", [error(429, "slow down", retry_after=3), error(503),
                                     error(400, "bad"), error(401, "no key")])
async def test_both_routes_raise_the_same_errors(
    llm_server: ScriptedLLMServer, litellm_callback: _Counting, failure: Reply,
) -> None:
    async def failed() -> tuple[ScorerRunError, dict[str, Any]]:
        llm_server.reset()
        llm_server.script(failure)
        with pytest.raises(ScorerRunError) as info:
            await _scorer(llm_server, "openai/scripted-judge").run(input="q", output="a")
        assert info.value.result is not None
        return info.value, _record(info.value.result.judge["generate_score"].executions[0])

    via_litellm, record_litellm = await failed()
    assert litellm_callback.calls == []  # failures reach no success callback, but went there
    _unregister(litellm_callback.logger)
    direct, record_direct = await failed()
    assert type(direct.cause) is type(via_litellm.cause)
    assert str(direct.cause) == str(via_litellm.cause)
    assert record_direct == record_litellm  # error name, message and code recorded alike
    assert classify_error(direct) == classify_error(via_litellm)
    assert retry_after_s(direct) == retry_after_s(via_litellm)
    if failure.status == 429:
        assert retry_after_s(direct) == 3


async def test_settings_litellm_translates_keep_the_litellm_route(
    llm_server: ScriptedLLMServer,
) -> None:
    # drop_params is litellm's own setting: never sent, and the call stays on litellm's path.
    request, record = await _run(llm_server, Reply(content={"score": 1}), "openai/scripted-judge",
                                 model_settings={"drop_params": True, "temperature": 0})
    assert "drop_params" not in request and request["temperature"] == 0
    assert record["status"] == "success"


def test_run_sync_closes_its_clients_with_its_loop(llm_server: ScriptedLLMServer) -> None:
    llm_server.set_default(lambda body: Reply(content={"score": 1}))
    code = (
        "import gc, warnings; warnings.simplefilter('error', ResourceWarning)\n"
        "from tracescore.scoring import Judge, PromptStep, create_scorer\n"
        f"judge = Judge('openai/scripted-judge', 'Grade.', api_base={llm_server.url!r})\n"
        "scorer = create_scorer('s', judge=judge).generate_score(PromptStep('s', "
        "lambda run, results: 'x'))\n"
        "for _ in range(3):\n"
        "    assert scorer.run_sync(input='q', output='a').score == 1\n"
        "gc.collect(); print('done')\n"
    )
    done = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True,
                          text=True, timeout=120, env={**_env(), "OPENAI_API_KEY": "sk-x"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert "Unclosed" not in done.stderr and "unclosed" not in done.stderr, done.stderr
    assert len(llm_server.requests) == 3


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("case", ["timeout", "refused"])
async def test_timeouts_and_refused_connections_fail_alike(
    llm_server: ScriptedLLMServer, litellm_callback: _Counting, case: str,
) -> None:
    async def failed() -> ScorerRunError:
        llm_server.reset()
        llm_server.script(Reply(content={"score": 1}, delay_s=1.0))
        base = llm_server.url if case == "timeout" else f"http://127.0.0.1:{_free_port()}/v1"
        judge = Judge("openai/scripted-judge", "Grade.", api_base=base, timeout_s=0.2)
        scorer = create_scorer("t", judge=judge).generate_score(
            PromptStep("s", lambda run, results: "score it"))
        with pytest.raises(ScorerRunError) as info:
            await scorer.run(input="q", output="a")
        return info.value

    via_litellm = await failed()
    _unregister(litellm_callback.logger)
    direct = await failed()
    assert type(direct.cause) is type(via_litellm.cause)
    assert classify_error(direct) == classify_error(via_litellm) == "transient"


async def test_a_price_registered_with_litellm_later_is_used(llm_server: ScriptedLLMServer,
                                                             ) -> None:
    # A model name of this test's own: litellm keeps registered models in several places.
    litellm = load_litellm()
    reply = Reply(content={"score": 1}, prompt_tokens=10, completion_tokens=5)
    _, before = await _run(llm_server, reply, "openai/scripted-judge-priced-later")
    assert before["cost"] is None  # no price for this model yet
    litellm.register_model({"scripted-judge-priced-later": {
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
        "litellm_provider": "openai", "mode": "chat"}})
    _, after = await _run(llm_server, reply, "openai/scripted-judge-priced-later")
    assert after["cost"]["amount"] == pytest.approx(10 * 1e-6 + 5 * 2e-6)
    assert after["usage"] == before["usage"]
