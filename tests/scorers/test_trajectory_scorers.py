"""create_trajectory_accuracy_scorer_code and create_trajectory_scorer_code (Mastra's cases)."""

from __future__ import annotations

from typing import Any

import pytest
from mastra_shapes import agent_input, message, step, tool_invocation, traj

from tracescore.model import ExpectedStep, TrajectoryExpectation
from tracescore.scorers import (
    create_trajectory_accuracy_scorer_code,
    create_trajectory_scorer_code,
)
from tracescore.scoring import ScorerRunError

EXPECTED = {"steps": [step("search"), step("summarize")]}


def run(scorer: Any, trajectory: Any, expected: Any = None) -> Any:
    return scorer.run_sync({"input": agent_input("Do the task"), "output": trajectory,
                            "expected_trajectory": expected})


def tools(*calls: tuple[str, bool] | str, **fields: Any) -> dict[str, Any]:
    steps = []
    for call in calls:
        name, success = (call, None) if isinstance(call, str) else call
        steps.append(step(name, success=success, **fields))
    return {"steps": steps}


class TestAccuracy:
    def test_id_name_type(self) -> None:
        scorer = create_trajectory_accuracy_scorer_code(EXPECTED)
        assert scorer.id == "code-trajectory-accuracy-scorer"
        assert scorer.name == "Trajectory Accuracy Scorer"
        assert scorer.type == "trajectory"
        assert "search → summarize" in scorer.description

    def test_exact_match(self) -> None:
        result = run(create_trajectory_accuracy_scorer_code(EXPECTED), traj("search", "summarize"))
        assert result.score == 1
        comparison = result.preprocess_step_result["comparison"]
        assert comparison["matched_steps"] == 2
        assert comparison["missing_steps"] == [] and comparison["extra_steps"] == []

    def test_relaxed_cases(self) -> None:
        scorer = create_trajectory_accuracy_scorer_code(EXPECTED)
        between = run(scorer, traj("search", "validate", "summarize"))
        assert between.score == 1
        assert between.preprocess_step_result["comparison"]["extra_steps"] == ["validate"]
        half = run(scorer, traj("search"))
        assert half.score == 0.5
        assert half.preprocess_step_result["comparison"]["missing_steps"] == ["summarize"]
        none = run(scorer, traj("translate", "format"))
        assert none.score == 0
        swapped = run(scorer, traj("summarize", "search"))
        assert swapped.score == 0.5
        assert "summarize" in swapped.preprocess_step_result["comparison"]["out_of_order_steps"]

    def test_repeats(self) -> None:
        actual = traj("search", "search", "summarize")
        assert run(create_trajectory_accuracy_scorer_code(EXPECTED), actual).score == 1
        strict_repeats = create_trajectory_accuracy_scorer_code(EXPECTED,
                                                                allow_repeated_steps=False)
        result = run(strict_repeats, actual)
        assert result.score == 0.9
        assert result.preprocess_step_result["comparison"]["repeated_steps"] == ["search"]

    def test_strict(self) -> None:
        scorer = create_trajectory_accuracy_scorer_code(EXPECTED, ordering="strict")
        assert run(scorer, traj("search", "summarize")).score == 1
        extra = run(scorer, traj("search", "summarize", "format"))
        assert extra.score == 0.75
        assert extra.preprocess_step_result["comparison"]["extra_steps"] == ["format"]
        assert run(scorer, traj("summarize", "search")).score < 0.5
        missing = run(scorer, traj("search"))
        assert missing.score == 0.5
        assert missing.preprocess_step_result["comparison"]["missing_steps"] == ["summarize"]
        legacy = create_trajectory_accuracy_scorer_code(
            EXPECTED, comparison_options={"strictOrder": True})
        assert run(legacy, traj("search", "summarize", "format")).score == 0.75

    def test_step_data(self) -> None:
        expected = {"steps": [step("search", tool_args={"query": "test"}),
                              step("summarize", tool_args={"maxLength": 100})]}
        scorer = create_trajectory_accuracy_scorer_code(expected)
        good = {"steps": [step("search", tool_args={"query": "test"}),
                          step("summarize", tool_args={"maxLength": 100})]}
        assert run(scorer, good).score == 1
        one = create_trajectory_accuracy_scorer_code(
            {"steps": [step("search", tool_args={"query": "test"})]})
        assert run(one, {"steps": [step("search", tool_args={"query": "different"})]}).score == 0
        by_result = create_trajectory_accuracy_scorer_code(
            {"steps": [step("search", tool_result={"count": 5})]})
        assert run(by_result, {"steps": [step("search", tool_result={"count": 5})]}).score == 1
        by_type = create_trajectory_accuracy_scorer_code({"steps": [step("gpt4",
                                                                         "model_generation")]})
        assert run(by_type, {"steps": [step("gpt4")]}).score == 0

    def test_empty_actual(self) -> None:
        result = run(create_trajectory_accuracy_scorer_code(EXPECTED), traj())
        assert result.score == 0
        assert result.preprocess_step_result["comparison"]["missing_steps"] == ["search",
                                                                                "summarize"]

    def test_preprocess_result_structure(self) -> None:
        result = run(create_trajectory_accuracy_scorer_code(EXPECTED), traj("search", "summarize"))
        pre = result.preprocess_step_result
        assert len(pre["actual_trajectory"]["steps"]) == 2
        assert pre["expected_trajectory"] == {"steps": [
            {"name": "search", "step_type": "tool_call"},
            {"name": "summarize", "step_type": "tool_call"}]}
        assert pre["actual_step_names"] == ["search", "summarize"]
        assert pre["expected_step_names"] == ["search", "summarize"]
        assert {"score", "matched_steps", "missing_steps", "extra_steps"} <= set(pre["comparison"])
        assert result.reason is not None and "Matched 2 of 2" in result.reason

    def test_mixed_step_types(self) -> None:
        steps = {"steps": [step("plan", "model_generation"), step("search"),
                           step("synthesize", "model_generation")]}
        assert run(create_trajectory_accuracy_scorer_code(steps), steps).score == 1

    def test_expected_steps_from_the_run(self) -> None:
        scorer = create_trajectory_accuracy_scorer_code()
        item = TrajectoryExpectation(steps=[ExpectedStep(name="b"), ExpectedStep(name="a")],
                                     ordering="unordered")
        assert run(scorer, traj("a", "b"), item).score == 1
        assert run(scorer, traj("a", "b"), {"steps": [{"name": "b"}, {"name": "a"}]}).score == 0.5
        assert run(scorer, traj("a", "b"), [{"name": "a"}, {"name": "b"}]).score == 1

    def test_constructor_steps_win_over_the_run(self) -> None:
        scorer = create_trajectory_accuracy_scorer_code([{"name": "a"}])
        assert run(scorer, traj("a"), {"steps": [{"name": "zzz"}]}).score == 1

    def test_no_expected_steps_scores_zero_with_the_reason(self) -> None:
        result = run(create_trajectory_accuracy_scorer_code(), traj("a"))
        assert result.score == 0
        assert "No expected trajectory" in result.preprocess_step_result["error"]
        assert result.preprocess_step_result["comparison"] is None
        assert result.reason is not None and "No expected trajectory" in result.reason

    def test_agent_messages_are_turned_into_a_trajectory(self) -> None:
        output = [message("x", tool_invocations=[tool_invocation("search", tool_call_id="1"),
                                                 tool_invocation("summarize", tool_call_id="2")])]
        result = create_trajectory_accuracy_scorer_code(EXPECTED).run_sync(input="q",
                                                                           output=output)
        assert result.score == 1


class TestUnified:
    def test_all_dimensions_pass(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={
            "steps": [step("search"), step("summarize")], "max_steps": 5,
            "no_redundant_calls": True})
        assert run(scorer, tools(("search", True), ("summarize", True))).score == 1

    def test_blacklisted_tool_hard_fails(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"blacklisted_tools": ["deleteAll"]})
        result = run(scorer, tools(("search", True), ("deleteAll", True)))
        assert result.score == 0
        assert "deleteAll" in (result.reason or "")

    def test_blacklisted_sequence_hard_fails(self) -> None:
        scorer = create_trajectory_scorer_code(
            defaults={"blacklistedSequences": [["escalate", "admin"]]})
        assert run(scorer, tools(("escalate", True), ("admin", True))).score == 0

    def test_redundant_calls(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"no_redundant_calls": True})
        actual = tools(("search", True), ("search", True), tool_args={"q": "test"})
        assert run(scorer, actual).score == 0.8

    def test_step_budget(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"max_steps": 2})
        # efficiency = mean(steps 1 - (4-2)/2 = 0, no redundant calls 1) = 0.5
        assert run(scorer, tools("a", "b", "c", "d")).score == 0.5
        scorer3 = create_trajectory_scorer_code(defaults={"max_steps": 3})
        assert run(scorer3, tools("a", "b", "c", "d")).score == 0.83

    def test_item_overrides_defaults(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [step("search"),
                                                                   step("summarize")]})
        result = run(scorer, tools("fetch", "format"), {"steps": [step("fetch"), step("format")]})
        assert result.preprocess_step_result["accuracy"]["score"] == 1
        assert result.score == 1

    def test_weighted_combination(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={
            "steps": [step("search")], "max_steps": 1, "no_redundant_calls": True})
        result = run(scorer, tools(("search", True), ("extra", True)))
        # accuracy 1 (w .4); efficiency mean(step 0, redundancy 1) = 0.5 (w .3) -> 0.7/0.7*...
        assert result.score == pytest.approx(round((0.4 * 1 + 0.3 * 0.5) / 0.7, 2))
        assert 0 < result.score < 1

    def test_custom_weights(self) -> None:
        scorer = create_trajectory_scorer_code(
            defaults={"steps": [step("search")], "max_steps": 1, "no_redundant_calls": True},
            weights={"accuracy": 1, "efficiency": 1})
        assert run(scorer, tools(("search", True), ("extra", True))).score == 0.75

    def test_nothing_configured_scores_one(self) -> None:
        assert run(create_trajectory_scorer_code(), tools(("search", True))).score == 1

    def test_tool_failures_count_only_when_retried(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [step("search")],
                                                         "max_retries_per_tool": 0})
        retried = run(scorer, tools(("search", False), ("search", False), ("search", True)))
        # accuracy 1 (w .4), tool failures 1 - 0.2*2 = 0.6 (w .2) -> (0.4 + 0.12) / 0.6
        assert retried.score == 0.87
        assert retried.preprocess_step_result["tool_failures"]["total_retries"] == 2

    def test_per_item_blacklist(self) -> None:
        scorer = create_trajectory_scorer_code()
        assert run(scorer, tools("search", "deleteAll"),
                   {"blacklisted_tools": ["deleteAll"]}).score == 0

    def test_expected_step_matching(self) -> None:
        by_name = create_trajectory_scorer_code(defaults={"steps": [{"name": "search"},
                                                                    {"name": "summarize"}]})
        result = run(by_name, tools("search", "summarize"))
        assert result.preprocess_step_result["accuracy"]["matched_steps"] == 2
        by_type = create_trajectory_scorer_code(defaults={"steps": [{"name": "search",
                                                                     "stepType": "tool_call"}]})
        result = run(by_type, {"steps": [step("search", "model_generation")]})
        assert result.preprocess_step_result["accuracy"]["matched_steps"] == 0

    def test_legacy_data_comparison(self) -> None:
        defaults = {"steps": [{"name": "search", "stepType": "tool_call",
                               "data": {"input": {"query": "hello"}}}], "compareStepData": True}
        scorer = create_trajectory_scorer_code(defaults=defaults)
        good = run(scorer, {"steps": [step("search", tool_args={"query": "hello"})]})
        bad = run(scorer, {"steps": [step("search", tool_args={"query": "wrong"})]})
        assert good.preprocess_step_result["accuracy"]["matched_steps"] == 1
        assert bad.preprocess_step_result["accuracy"]["matched_steps"] == 0

    def test_missing_token_measurement_fails_the_run(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"max_total_tokens": 100})
        with pytest.raises(ScorerRunError, match="max_total_tokens") as info:
            run(scorer, tools("a"))
        assert info.value.failed_step == "preprocess"

    def test_bad_weights(self) -> None:
        with pytest.raises(ValueError):
            create_trajectory_scorer_code(weights={"speed": 1})
        with pytest.raises(ValueError):
            create_trajectory_scorer_code(weights={"accuracy": -1})


class TestNested:
    def test_children_are_evaluated(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [{
            "name": "agent-run", "stepType": "agent_run",
            "children": {"ordering": "strict", "steps": [{"name": "tool-a"}, {"name": "tool-b"}]},
        }]})
        actual = {"steps": [step("agent-run", "agent_run", agent_id="agent-1",
                                 children=[step("tool-a"), step("tool-b")])]}
        result = run(scorer, actual)
        assert result.score == 1
        nested = result.preprocess_step_result["nested"]
        assert len(nested) == 1
        assert nested[0]["step_name"] == "agent-run"
        assert nested[0]["accuracy"]["matched_steps"] == 2

    def test_children_with_their_own_ordering(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"ordering": "strict", "steps": [{
            "name": "orchestrator", "stepType": "agent_run",
            "children": {"ordering": "unordered", "steps": [{"name": "fetch"},
                                                            {"name": "validate"}]}}]})
        actual = {"steps": [step("orchestrator", "agent_run",
                                 children=[step("validate"), step("fetch")])]}
        result = run(scorer, actual)
        assert result.preprocess_step_result["nested"][0]["accuracy"]["matched_steps"] == 2
        assert result.score == 1

    def test_missing_children_lower_the_score(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [{
            "name": "agent-run", "children": {"steps": [{"name": "tool-a"}, {"name": "tool-b"},
                                                        {"name": "tool-c"}]}}]})
        actual = {"steps": [step("agent-run", "agent_run", children=[step("tool-a")])]}
        result = run(scorer, actual)
        nested = result.preprocess_step_result["nested"][0]
        assert "tool-b" in nested["accuracy"]["missing_steps"]
        assert "tool-c" in nested["accuracy"]["missing_steps"]
        # top level 1.0; nested accuracy 0.33 -> 0.7 + 0.3 * 0.33
        assert result.score == 0.8

    def test_nested_blacklist(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [{
            "name": "agent-run", "children": {"blacklistedTools": ["dangerous-tool"],
                                              "steps": [{"name": "safe-tool"}]}}]})
        actual = {"steps": [step("agent-run", "agent_run",
                                 children=[step("safe-tool"), step("dangerous-tool")])]}
        result = run(scorer, actual)
        nested = result.preprocess_step_result["nested"][0]
        assert nested["blacklist"]["score"] == 0
        assert nested["score"] == 0
        assert result.score == 0.7

    def test_matched_step_without_children(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [{
            "name": "agent-run", "children": {"steps": [{"name": "tool-a"}]}}]})
        result = run(scorer, {"steps": [step("agent-run", "agent_run")]})
        assert result.preprocess_step_result["nested"][0]["score"] == 0
        assert result.score == 0.7

    def test_three_levels(self) -> None:
        scorer = create_trajectory_scorer_code(defaults={"steps": [{
            "name": "workflow", "stepType": "workflow_run", "children": {"steps": [{
                "name": "sub-agent", "stepType": "agent_run",
                "children": {"steps": [{"name": "deep-tool"}]}}]}}]})
        actual = {"steps": [step("workflow", "workflow_run", children=[
            step("sub-agent", "agent_run", children=[step("deep-tool")])])]}
        result = run(scorer, actual)
        assert result.score == 1
        level1 = result.preprocess_step_result["nested"][0]
        assert level1["step_name"] == "workflow"
        assert len(level1["nested"]) == 1
        assert level1["nested"][0]["step_name"] == "sub-agent"
        assert level1["nested"][0]["accuracy"]["matched_steps"] == 1
