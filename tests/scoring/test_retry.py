"""Judge retries and error classification, against real HTTP errors from the scripted server."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tracescore.scoring import (
    Judge,
    PromptStep,
    RetryProcessor,
    ScorerRunError,
    classify_error,
    create_scorer,
    retry_after_s,
)
from tracescore.testing import Reply, ScriptedLLMServer, error

FAST = RetryProcessor(delay_ms=1)


def _scorer(server: ScriptedLLMServer, **judge_kw: Any):  # type: ignore[no-untyped-def]
    judge = Judge("openai/scripted-judge", "Grade.", api_base=server.url, **judge_kw)
    return create_scorer("retry", judge=judge).generate_score(
        PromptStep("s", lambda run, results: "score it"))


async def _failure(server: ScriptedLLMServer, *replies: Reply, **judge_kw: Any) -> ScorerRunError:
    server.script(*replies)
    with pytest.raises(ScorerRunError) as info:
        await _scorer(server, **judge_kw).run(input="q", output="a")
    return info.value


async def test_transient_errors_are_retried_and_every_attempt_counted(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.script(error(500), error(503), Reply(content={"score": 0.7}, prompt_tokens=11))
    result = await _scorer(llm_server, error_processors=[FAST]).run(input="q", output="a")
    assert result.score == 0.7
    ex = result.judge["generate_score"].executions[0]
    assert (ex.attempt_count, ex.model_call_count) == (3, 1)
    assert ex.usage is not None and ex.usage.input_tokens == 11
    assert len(llm_server.requests) == 3


async def test_without_processors_a_500_is_sent_once(llm_server: ScriptedLLMServer) -> None:
    # litellm's retries and the OpenAI client's retries are off: one request, one attempt.
    err = await _failure(llm_server, error(500), Reply(content={"score": 1}))
    assert len(llm_server.requests) == 1
    ex = err.result.judge["generate_score"].executions[0]  # type: ignore[union-attr]
    assert (ex.status, ex.attempt_count, ex.model_call_count) == ("failed", 1, 0)
    assert ex.error is not None and ex.error.code == 500
    assert ex.error.name == "InternalServerError"
    assert classify_error(err) == "transient" and classify_error(err.cause) == "transient"


async def test_retry_after_is_respected(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(429, "slow down", retry_after=0.3), Reply(content={"score": 0.5}))
    started = time.monotonic()
    result = await _scorer(llm_server, error_processors=[RetryProcessor(delay_ms=0)]).run(
        input="q", output="a")
    waited_s = time.monotonic() - started
    assert result.score == 0.5
    assert waited_s >= 0.3  # delay_ms=0 alone would not wait at all
    assert result.judge["generate_score"].executions[0].attempt_count == 2


async def test_retry_after_is_read_and_cut_to_the_maximum(llm_server: ScriptedLLMServer) -> None:
    err = await _failure(llm_server, error(429, retry_after=120))
    assert classify_error(err) == "rate_limit"
    assert retry_after_s(err) == 120.0 and retry_after_s(err.cause) == 120.0  # type: ignore[arg-type]
    processor = RetryProcessor(max_retry_after_ms=250)
    assert processor.process_error(err.cause, 0) == 0.25  # type: ignore[arg-type]
    assert processor.process_error(err.cause, 2) is None  # max_retries=2 used up
    ex = err.result.judge["generate_score"].executions[0]  # type: ignore[union-attr]
    assert ex.error is not None and ex.error.code == 429


async def test_default_backoff_and_custom_delays(llm_server: ScriptedLLMServer) -> None:
    err = await _failure(llm_server, error(502))
    cause = err.cause
    assert cause is not None and retry_after_s(cause) is None
    default = RetryProcessor(max_retries=10)
    assert [default.process_error(cause, n) for n in (0, 1, 2, 5, 6)] == [1, 2, 4, 30, 30]
    assert RetryProcessor(delay_ms=50).process_error(cause, 1) == 0.05
    assert RetryProcessor(delay_ms=lambda n: 10 * (n + 1)).process_error(cause, 1) == 0.02


async def test_no_retry_on_auth_errors(llm_server: ScriptedLLMServer) -> None:
    err = await _failure(llm_server, error(401, "bad key"), Reply(content={"score": 1}),
                         error_processors=[FAST])
    assert len(llm_server.requests) == 1
    assert classify_error(err) == "auth"
    ex = err.result.judge["generate_score"].executions[0]  # type: ignore[union-attr]
    assert ex.attempt_count == 1 and ex.error is not None and ex.error.code == 401


async def test_no_retry_on_bad_request_or_context_length(llm_server: ScriptedLLMServer) -> None:
    err = await _failure(llm_server, error(400, "This model's maximum context length is 8192"),
                         error_processors=[FAST])
    assert len(llm_server.requests) == 1 and classify_error(err) == "permanent"
    llm_server.reset()
    err = await _failure(llm_server, error(400, "invalid value"), error_processors=[FAST])
    assert len(llm_server.requests) == 1 and classify_error(err) == "permanent"


async def test_matchers_make_an_error_retryable(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(400, "overloaded, try again"), Reply(content={"score": 0.4}))
    processor = RetryProcessor(delay_ms=1, matchers=[lambda exc: "try again" in str(exc)])
    result = await _scorer(llm_server, error_processors=[processor]).run(input="q", output="a")
    assert result.score == 0.4
    assert result.judge["generate_score"].executions[0].attempt_count == 2


async def test_retries_stop_at_max_retries_and_max_processor_retries(
    llm_server: ScriptedLLMServer,
) -> None:
    err = await _failure(llm_server, *[error(500)] * 6, error_processors=[FAST])
    ex = err.result.judge["generate_score"].executions[0]  # type: ignore[union-attr]
    assert ex.attempt_count == 3 and len(llm_server.requests) == 3  # 1 + max_retries=2
    llm_server.reset()
    err = await _failure(llm_server, *[error(500)] * 6,
                         error_processors=[RetryProcessor(max_retries=5, delay_ms=1)],
                         max_processor_retries=1)
    assert err.result.judge["generate_score"].executions[0].attempt_count == 2  # type: ignore[union-attr]


async def test_timeouts_are_transient_and_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"score": 0.1}, delay_s=0.5), Reply(content={"score": 0.9}))
    result = await _scorer(llm_server, timeout_s=0.1, error_processors=[FAST]).run(
        input="q", output="a")
    assert result.score == 0.9
    assert result.judge["generate_score"].executions[0].attempt_count == 2


async def test_a_plain_callable_error_processor(llm_server: ScriptedLLMServer) -> None:
    seen: list[tuple[str, int]] = []

    def once(exc: BaseException, retry_count: int) -> bool:
        seen.append((type(exc).__name__, retry_count))
        return retry_count == 0

    err = await _failure(llm_server, error(418), error(418), error(418), error_processors=[once])
    assert [count for _, count in seen] == [0, 1]
    assert err.result.judge["generate_score"].executions[0].attempt_count == 2  # type: ignore[union-attr]


async def test_only_the_failing_step_is_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"topic": "math"}), error(500), Reply(content={"score": 1}))
    judge = Judge("openai/scripted-judge", "Grade.", api_base=llm_server.url,
                  error_processors=[FAST])
    scorer = (create_scorer("steps", judge=judge)
              .analyze(PromptStep("a", lambda run, r: "topic?", output_schema={"type": "object"}))
              .generate_score(PromptStep("s", lambda run, r: "score?")))
    result = await scorer.run(input="q", output="a")
    assert result.judge["analyze"].executions[0].attempt_count == 1
    assert result.judge["generate_score"].executions[0].attempt_count == 2
    assert len(llm_server.requests) == 3


async def test_reason_failure_snapshot_keeps_score_zero_and_both_executions(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.script(Reply(content={"score": 0}, prompt_tokens=40), error(503, "down"))
    judge = Judge("openai/scripted-judge", "Grade.", api_base=llm_server.url)
    scorer = (create_scorer("snap", judge=judge)
              .generate_score(PromptStep("s", lambda run, r: "score?"))
              .generate_reason(PromptStep("r", lambda run, r, score: f"why {score}?")))
    with pytest.raises(ScorerRunError) as info:
        await scorer.run(input="q", output="a")
    err = info.value
    assert err.failed_step == "generate_reason"
    assert err.completed_steps == ["generate_score"]
    snapshot = err.result
    assert snapshot is not None and snapshot.score == 0.0 and snapshot.reason is None
    ok = snapshot.judge["generate_score"].executions
    failed = snapshot.judge["generate_reason"].executions
    assert [e.status for e in ok] == ["success"] and [e.status for e in failed] == ["failed"]
    assert failed[0].error is not None and failed[0].error.code == 503
    assert snapshot.generate_reason_prompt == "why 0.0?"
    assert snapshot.judge_usage().input_tokens == 40
    assert "result" not in err.to_dict() and err.to_dict()["cause"]["code"] == 503
    assert classify_error(err) == "transient"


def test_classify_plain_exceptions() -> None:
    assert classify_error(TimeoutError()) == "transient"
    assert classify_error(ConnectionResetError()) == "transient"
    assert classify_error(ValueError("bug")) == "permanent"
    assert retry_after_s(ValueError("x")) is None


async def test_malformed_provider_body_is_transient_and_retried(llm_server: ScriptedLLMServer
                                                               ) -> None:
    llm_server.script(Reply(raw_body=b'{"choices": [{"message": '), Reply(content={"score": 0.3}))
    result = await _scorer(llm_server, error_processors=[FAST]).run(input="q", output="a")
    assert result.score == 0.3
    ex = result.judge["generate_score"].executions[0]
    assert (ex.attempt_count, ex.model_call_count) == (2, 1)
