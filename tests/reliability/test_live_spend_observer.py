"""The parts behind issue 12 defect 9, in one process: the execution observer and the retry cap.

``observe_judge_executions`` must report each judge execution before the run goes on (that is
what lets the live scorer store spend before a crash can lose it); ``RetryPolicy`` must end
rate limits and transient errors at the deadline and leave other failures to ``max_attempts``.
The judge is the scripted OpenAI-compatible server over real HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.live import RetryPolicy
from tracescore.scoring import Judge, PromptStep, create_scorer, observe_judge_executions
from tracescore.testing import Reply, error

VERDICT = {"type": "object", "properties": {"verdict": {"type": "string"}},
           "required": ["verdict"]}


def two_steps(api_base: str) -> Any:
    judge = Judge(model="openai/gpt-4o-mini", instructions="Judge.", api_base=api_base)
    return (create_scorer("two", "analyze then grade", judge=judge)
            .analyze(PromptStep("analyze", lambda run, results: "ANALYZE " + str(run.output),
                                output_schema=VERDICT))
            .generate_score(PromptStep("grade", lambda run, results: "GRADE")))


async def test_each_execution_is_reported_before_the_run_goes_on(llm_server: Any) -> None:
    heard: list[tuple[str, int, int]] = []

    def observer(step: str, execution: Any) -> None:
        heard.append((step, execution.usage.input_tokens, len(llm_server.requests)))

    llm_server.script(Reply(content={"verdict": "ok"}, prompt_tokens=11),
                      Reply(content={"score": 0.5}, prompt_tokens=22))
    with observe_judge_executions(observer):
        result = await two_steps(llm_server.url).run(input="q", output="a")
    assert result.score == 0.5
    # analyze was reported when only its own request had been sent
    assert heard == [("analyze", 11, 1), ("generate_score", 22, 2)]


async def test_a_failed_step_is_reported_and_a_failing_observer_changes_nothing(
        llm_server: Any) -> None:
    heard: list[str] = []

    def observer(step: str, execution: Any) -> None:
        heard.append(f"{step}:{execution.status}")
        raise RuntimeError("the observer itself is broken")

    llm_server.script(Reply(content={"verdict": "ok"}), error(503))
    with observe_judge_executions(observer), pytest.raises(Exception) as caught:
        await two_steps(llm_server.url).run(input="q", output="a")
    assert heard == ["analyze:success", "generate_score:failed"]
    assert "503" in str(caught.value) or "ServiceUnavailable" in repr(caught.value.__cause__)
    heard.clear()
    llm_server.script(Reply(content={"verdict": "ok"}), Reply(content={"score": 1}))
    assert (await two_steps(llm_server.url).run(input="q", output="a")).score == 1.0
    assert heard == []  # outside the block nobody is told


@pytest.mark.parametrize("kind", ["transient", "rate_limit"])
def test_transient_retries_end_at_the_deadline(kind: Any) -> None:
    policy = RetryPolicy(transient_deadline_s=60.0)
    going = policy.decide(kind, attempts=0, transient_streak=30, transient_elapsed_s=59.9)
    assert not going.final and going.attempts == 0 and going.delay_s > 0
    done = policy.decide(kind, attempts=0, transient_streak=31, transient_elapsed_s=60.0)
    assert done.final and done.attempts == 1 and done.delay_s == 0


def test_other_failures_still_end_by_attempts_not_time() -> None:
    policy = RetryPolicy(max_attempts=3, transient_deadline_s=1.0)
    assert not policy.decide("permanent", attempts=0, transient_elapsed_s=99).final
    assert policy.decide("permanent", attempts=2).final
    assert policy.decide("auth", attempts=0, transient_elapsed_s=99).pause_scorer
