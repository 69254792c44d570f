"""The judge-call cache under ``run_evals``: a second identical run asks the judge nothing.

The judge is the scripted OpenAI-compatible server over real HTTP; it records every request, so
"no call" is counted, not assumed. The cache lives in the database given as ``store=`` (or in a
file of its own, or in memory), and every hit is a ``judge_executions`` row with ``cached``,
cost 0 and the cost it saved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tracescore.evals import EvalValidationError, run_evals
from tracescore.model import get_user_message
from tracescore.scoring import Judge, MemoryJudgeCache, PromptStep, create_scorer
from tracescore.store import Store
from tracescore.testing import Reply

ITEMS = [{"input": f"question {i}"} for i in range(4)]


def graded(url: str, *, temperature: float | None = 0.0) -> Any:
    settings = {"temperature": temperature} if temperature is not None else None
    judge = Judge(model="openai/gpt-4o-mini", instructions="You grade answers.", api_base=url,
                  model_settings=settings)
    return create_scorer("graded", "an LLM judge at temperature 0", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade the answer to "
                                                 f"{get_user_message(run.input)}"))


def answer_by_prompt(request: dict[str, Any]) -> Reply:
    """A different score per item (the prompt names it), so a wrong hit would show."""
    prompt = request["messages"][-1]["content"]
    digit = int(prompt.rsplit(" ", 1)[-1])
    return Reply(content={"score": digit / 10}, prompt_tokens=100, completion_tokens=10)


async def test_a_repeated_run_is_answered_from_the_database_at_no_cost(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.set_default(answer_by_prompt)
    db = str(tmp_path / "evals.duckdb")
    first = await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url)], store=db)
    calls_first = len(llm_server.requests)
    second = await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url)], store=db)

    assert calls_first == len(ITEMS)
    assert len(llm_server.requests) == calls_first  # the second run asked the judge nothing
    assert [i.scorer_results["graded"].score for i in second.items] == [
        i.scorer_results["graded"].score for i in first.items] == [0.0, 0.1, 0.2, 0.3]
    with Store(db) as store:
        rows = store.read(
            "SELECT s.eval_run_id = ? AS second, e.cached, e.cost_amount, e.cost_source, "
            "e.saved_cost, e.input_tokens, s.judge_cost, s.cost_source AS score_source "
            "FROM judge_executions e JOIN scores s USING (score_id)", [second.eval_run_id])
        cached_rows = store.read("SELECT count(*) AS n, sum(bytes) AS bytes FROM judge_cache")
    paid = [r for r in rows if not r["second"]]
    free = [r for r in rows if r["second"]]
    assert len(paid) == len(free) == len(ITEMS)
    assert all(not r["cached"] and r["cost_amount"] > 0 and r["cost_source"] == "litellm"
               for r in paid)
    assert all(r["cached"] and r["cost_amount"] == 0 and r["cost_source"] == "cache"
               and r["input_tokens"] == 0 and r["judge_cost"] == 0
               and r["score_source"] == "cache" for r in free)
    assert sorted(r["saved_cost"] for r in free) == sorted(r["cost_amount"] for r in paid)
    assert cached_rows[0]["n"] == len(ITEMS) and cached_rows[0]["bytes"] > 0


async def test_judges_above_temperature_zero_are_not_cached_unless_asked(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.set_default(answer_by_prompt)
    db = str(tmp_path / "evals.duckdb")
    for _ in range(2):
        await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url, temperature=None)],
                        store=db)
    assert len(llm_server.requests) == 2 * len(ITEMS)
    for _ in range(2):
        await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url, temperature=None)],
                        store=db, judge_cache_mode="on")
    assert len(llm_server.requests) == 3 * len(ITEMS)


async def test_without_a_database_the_cache_is_a_file_or_an_object_given(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.set_default(answer_by_prompt)
    async def twice(**options: Any) -> None:
        for _ in range(2):
            await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url)], **options)

    await twice(judge_cache=str(tmp_path / "judge-cache.duckdb"))
    assert len(llm_server.requests) == len(ITEMS)
    memory = MemoryJudgeCache()
    await twice(judge_cache=memory)
    assert len(llm_server.requests) == 2 * len(ITEMS) and len(memory) == len(ITEMS)
    await twice()  # no store, no cache given: nothing is cached
    assert len(llm_server.requests) == 4 * len(ITEMS)
    with pytest.raises(EvalValidationError, match="judge_cache=True needs store="):
        await run_evals(lambda q: q, ITEMS, scorers=[graded(llm_server.url)], judge_cache=True)


async def test_an_invalid_answer_is_not_cached(tmp_path: Path, llm_server: Any) -> None:
    llm_server.script(Reply(content="not json"), Reply(content="still not json"))
    llm_server.set_default(answer_by_prompt)
    db = str(tmp_path / "evals.duckdb")
    item = [{"input": "question 5"}]
    failed = await run_evals(lambda q: q, item, scorers=[graded(llm_server.url)], store=db)
    assert "graded" not in failed.items[0].scorer_results and failed.items[0].error
    again = await run_evals(lambda q: q, item, scorers=[graded(llm_server.url)], store=db)
    assert again.items[0].scorer_results["graded"].score == 0.5
    assert len(llm_server.requests) == 3  # the failed answer (and its retry) and a fresh one


class LateLookupCache(MemoryJudgeCache):
    """A cache whose first lookup answers late with what it read when asked (a slow database
    read): the question is asked and answered by another run in the meantime."""

    def __init__(self) -> None:
        super().__init__()
        self.late = True

    async def get(self, key: str) -> Any:
        answer = await super().get(key)
        if self.late:
            self.late = False
            await asyncio.sleep(1.0)
        return answer


async def test_a_question_answered_during_a_slow_lookup_is_not_asked_again(
    llm_server: Any
) -> None:
    llm_server.set_default(answer_by_prompt)
    twice = [{"input": "question 7"}, {"input": "question 7"}]
    result = await run_evals(lambda q: q, twice, scorers=[graded(llm_server.url)],
                             judge_cache=LateLookupCache(), concurrency=2)
    assert len(llm_server.requests) == 1  # the late run found the answer before asking
    assert [i.scorer_results["graded"].score for i in result.items] == [0.7, 0.7]
