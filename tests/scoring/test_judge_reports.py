"""A judge execution records what the provider reported: the model that answered and its
``system_fingerprint`` (judge drift checks read them), on the direct route and through litellm."""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.scoring import Judge, PromptStep, create_scorer, execution_rows
from tracescore.testing import Reply


@pytest.mark.parametrize("settings", [None, {"n": 1}], ids=["direct", "litellm"])
def test_the_reported_model_and_fingerprint_are_recorded(llm_server: Any,
                                                         settings: Any) -> None:
    llm_server.script(Reply(content={"score": 1}, model="gpt-4o-mini-2024-07-18",
                            system_fingerprint="fp_44709d6fcb"))
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=llm_server.url,
                  model_settings=settings)
    scorer = create_scorer("graded", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade: {run.output}"))
    result = scorer.run_sync(input="q", output="a")
    [execution] = result.judge["generate_score"].executions
    assert execution.judge_model_id == "gpt-4o-mini"
    assert execution.response_model == "gpt-4o-mini-2024-07-18"
    assert execution.system_fingerprint == "fp_44709d6fcb"
    [row] = execution_rows(result, score_id="s", trace_id=None, scorer_id="graded",
                           now=None, to_json=lambda v: v)  # type: ignore[arg-type]
    assert (row["response_model"], row["system_fingerprint"]) == (
        "gpt-4o-mini-2024-07-18", "fp_44709d6fcb")


def test_a_reply_without_a_fingerprint_records_none(llm_server: Any) -> None:
    llm_server.script(Reply(content={"score": 0}))
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=llm_server.url)
    scorer = create_scorer("graded", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Grade it."))
    [execution] = scorer.run_sync(input="q", output="a").judge["generate_score"].executions
    assert execution.response_model == "gpt-4o-mini" and execution.system_fingerprint is None
