"""create_rubric_scorer: rubric parsing, the gating score, the reason, and runs against the
scripted judge."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message

from tracescore.scorers import RubricCriterion, create_rubric_scorer
from tracescore.scorers._rubric import (
    NO_RUBRIC,
    RubricGrades,
    parse_rubric,
    rubric_reason,
    rubric_score,
)
from tracescore.scoring import Judge, ScorerRunError
from tracescore.testing import Reply, error

TASK = "Research AI in education and write a short report."
REPORT = "## Analysis\nAI tutors adapt to each student.\n## Recommendations\nPilot one tutor."


def judge(server: Any) -> Judge:
    return Judge(model="openai/scripted-judge", api_base=server.url)


def grades(*satisfied: bool) -> dict[str, Any]:
    return {"criteria": [{"criterion": f"c{i}", "satisfied": s, "reasoning": f"because {i}"}
                         for i, s in enumerate(satisfied)],
            "overall_assessment": "graded"}


def rubric(*required: bool) -> list[dict[str, Any]]:
    return [{"id": None, "description": f"criterion {i}", "required": r}
            for i, r in enumerate(required)]


def test_parse_rubric_string_strips_list_markers() -> None:
    parsed = parse_rubric("- Has an analysis\n* Has recommendations\n\n• Cites a source\n"
                          "1. Under 300 words\n2) Uses headings\nPlain line")
    assert [c.description for c in parsed] == ["Has an analysis", "Has recommendations",
                                               "Cites a source", "Under 300 words",
                                               "Uses headings", "Plain line"]
    assert all(c.required for c in parsed)


def test_parse_rubric_list() -> None:
    parsed = parse_rubric([RubricCriterion(description="a", required=False),
                           {"id": "b", "description": "b"}, "c"])
    assert [(c.id, c.description, c.required) for c in parsed] == [
        (None, "a", False), ("b", "b", True), (None, "c", True)]
    with pytest.raises(ValueError, match="needs a description"):
        parse_rubric([{"description": " "}])


@pytest.mark.parametrize(("required", "satisfied", "expected"), [
    ((True, True, False), (True, True, False), 1.0),    # the optional one may fail
    ((True, True, False), (True, False, True), 0.0),    # a required one failed
    ((False, False), (True, False), 0.0),               # none required: all gate
    ((False, False), (True, True), 1.0),
    ((True, True), (True,), 0.0),                       # a criterion left ungraded
])
def test_rubric_score(required: tuple[bool, ...], satisfied: tuple[bool, ...],
                      expected: float) -> None:
    assert rubric_score(rubric(*required), RubricGrades.model_validate(grades(*satisfied))) \
        == expected


def test_no_rubric_scores_one_unscaled() -> None:
    assert rubric_score([], None) == 1.0
    assert rubric_reason([], None, 1.0) == NO_RUBRIC


def test_reason_lists_unmet_criteria() -> None:
    text = rubric_reason(rubric(True, False), RubricGrades.model_validate(grades(False, False)),
                         0.0)
    assert text.startswith("❌ Rubric not satisfied (score: 0): 0 of 2 criteria met.")
    assert "- criterion 0 (required): because 0" in text
    assert "- criterion 1 (optional): because 1" in text


def test_static_rubric_run(llm_server: Any) -> None:
    llm_server.script(Reply(content=grades(True, True, False), prompt_tokens=200))
    scorer = create_rubric_scorer(judge(llm_server), [
        {"description": "Includes an analysis section"},
        {"description": "Includes concrete recommendations"},
        {"description": "Cites at least one study", "required": False}], scale=10)
    result = scorer.run_sync(input=agent_input(TASK), output=[message(REPORT)])
    assert result.score == 10.0
    assert result.preprocess_step_result["criteria"][2] == {
        "id": None, "description": "Cites at least one study", "required": False}
    assert result.reason is not None and result.reason.startswith(
        "✅ Rubric satisfied (score: 10): 2 of 3 criteria met.")
    assert "Cites at least one study (optional)" in result.reason
    prompt = result.analyze_prompt or ""
    assert "1. [required] Includes an analysis section" in prompt
    assert "3. [optional] Cites at least one study" in prompt
    assert TASK in prompt and "Pilot one tutor." in prompt
    assert list(result.judge) == ["analyze"]
    assert (scorer.id, scorer.name) == ("rubric-scorer", "Rubric (LLM)")


def test_dynamic_rubric_from_request_context_then_input(llm_server: Any) -> None:
    llm_server.script(grades(False), grades(True))
    scorer = create_rubric_scorer(judge(llm_server))
    from_context = scorer.run_sync(input=TASK, output=REPORT,
                                   request_context={"rubric": "- Mentions cost"})
    assert from_context.score == 0.0
    assert "1. [required] Mentions cost" in prompt_text(llm_server, 0)
    from_input = scorer.run_sync(input={"text": TASK, "rubric": ["Uses headings"]},
                                 output=REPORT)
    assert from_input.score == 1.0
    assert "1. [required] Uses headings" in prompt_text(llm_server, 1)


def prompt_text(server: Any, i: int) -> str:
    return str(server.requests[i]["messages"][-1]["content"])


def test_no_rubric_passes_without_a_judge_call(llm_server: Any) -> None:
    scorer = create_rubric_scorer(judge(llm_server), "\n  \n", scale=5)
    result = scorer.run_sync(input=TASK, output=REPORT)
    assert (result.score, result.reason) == (1.0, NO_RUBRIC)
    assert result.judge == {} and llm_server.requests == []


def test_failed_judge_call_keeps_the_snapshot(llm_server: Any) -> None:
    llm_server.script(error(400, "bad"))
    with pytest.raises(ScorerRunError) as info:
        create_rubric_scorer(judge(llm_server), "- Uses headings").run_sync(input=TASK,
                                                                            output=REPORT)
    assert info.value.failed_step == "analyze"
    assert info.value.completed_steps == ["preprocess"]
    assert info.value.result is not None
    assert info.value.result.preprocess_step_result["criteria"][0]["description"] == \
        "Uses headings"


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="scale must be a positive number"):
        create_rubric_scorer("openai/x", "- a", scale=-1)
    with pytest.raises(TypeError, match="unknown option"):
        create_rubric_scorer("openai/x", options={"rubric": "- a"})
    with pytest.raises(ValueError, match="needs a description"):
        create_rubric_scorer("openai/x", [{"description": ""}])
