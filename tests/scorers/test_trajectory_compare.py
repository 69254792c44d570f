"""compare_trajectories: orderings, repeats, data matching, nesting (Mastra's cases included)."""

from __future__ import annotations

import pytest
from mastra_shapes import step, traj

from tracescore.model import ExpectedStep, ToolCallStep, Trajectory, TrajectoryExpectation
from tracescore.scorers import compare_trajectories


class TestRelaxed:
    def test_identical_trajectories_have_the_full_result_shape(self) -> None:
        result = compare_trajectories(traj("search", "summarize"), traj("search", "summarize"))
        assert result == {
            "score": 1.0,
            "matched_steps": 2,
            "total_expected_steps": 2,
            "total_actual_steps": 2,
            "missing_steps": [],
            "extra_steps": [],
            "out_of_order_steps": [],
            "repeated_steps": [],
        }
        assert result.score == 1.0 and result["matched_steps"] == 2

    def test_extra_steps_in_between_are_allowed(self) -> None:
        result = compare_trajectories(traj("search", "validate", "summarize"),
                                      traj("search", "summarize"))
        assert result.score == 1.0
        assert result.matched_steps == 2
        assert result.extra_steps == ["validate"]

    def test_completely_different(self) -> None:
        result = compare_trajectories(traj("translate"), traj("search", "summarize"))
        assert result.score == 0
        assert result.missing_steps == ["search", "summarize"]
        assert result.extra_steps == ["translate"]

    def test_out_of_order_step_is_reported(self) -> None:
        result = compare_trajectories(traj("summarize", "search"), traj("search", "summarize"))
        assert result.score == 0.5
        assert result.matched_steps == 1
        assert "summarize" in result.out_of_order_steps

    def test_empty_actual(self) -> None:
        result = compare_trajectories({"steps": []}, traj("search"))
        assert result.score == 0
        assert result.missing_steps == ["search"]
        assert result.total_actual_steps == 0

    def test_repeats_cost_point_one_each_when_not_allowed(self) -> None:
        actual = traj("search", "search", "summarize")
        result = compare_trajectories(actual, traj("search", "summarize"),
                                      allow_repeated_steps=False)
        assert result.score == 0.9
        assert result.repeated_steps == ["search"]
        two = compare_trajectories(traj("a", "a", "b", "b"), traj("a", "b"),
                                   allow_repeated_steps=False)
        assert two.score == 0.8

    def test_repeats_allowed_by_default(self) -> None:
        result = compare_trajectories(traj("search", "search", "summarize"),
                                      traj("search", "summarize"))
        assert result.score == 1
        assert result.repeated_steps == ["search"]

    def test_any_step_type(self) -> None:
        steps = [step("gpt-4", "model_generation"), step("search"),
                 step("process-data", "workflow_step")]
        result = compare_trajectories({"steps": steps}, {"steps": steps})
        assert result.score == 1 and result.matched_steps == 3


class TestEmpty:
    def test_both_empty_scores_one(self) -> None:
        result = compare_trajectories({"steps": []}, {"steps": []})
        assert (result.score, result.matched_steps, result.total_expected_steps) == (1, 0, 0)

    def test_nothing_expected_but_steps_taken_scores_zero(self) -> None:
        result = compare_trajectories(traj("search"), {"steps": []})
        assert result.score == 0
        assert result.extra_steps == ["search"]


class TestStrict:
    def test_exact_positions(self) -> None:
        assert compare_trajectories(traj("search", "summarize"), traj("search", "summarize"),
                                    ordering="strict").score == 1

    def test_reversed_scores_zero_and_reports_both(self) -> None:
        result = compare_trajectories(traj("summarize", "search"), traj("search", "summarize"),
                                      ordering="strict")
        assert result.score == 0
        assert set(result.out_of_order_steps) == {"summarize", "search"}

    def test_extra_steps_cost_half_of_their_share(self) -> None:
        result = compare_trajectories(traj("search", "summarize", "format"),
                                      traj("search", "summarize"), ordering="strict")
        assert result.score == 0.75
        assert result.extra_steps == ["format"]

    def test_subset_reports_missing(self) -> None:
        result = compare_trajectories(traj("search"), traj("search", "summarize", "format"),
                                      ordering="strict")
        assert result.matched_steps == 1
        assert result.missing_steps == ["summarize", "format"]
        assert result.score == 0.33

    def test_repeats_and_extra_penalties_add_up(self) -> None:
        result = compare_trajectories(traj("search", "search", "summarize"),
                                      traj("search", "summarize"),
                                      ordering="strict", allow_repeated_steps=False)
        assert result.repeated_steps == ["search"]
        assert result.score == 0.15

    def test_strict_order_alias(self) -> None:
        a, b = traj("b", "a"), traj("a", "b")
        assert (compare_trajectories(a, b, strict_order=True).score
                == compare_trajectories(a, b, ordering="strict").score == 0)

    def test_data_mismatch_at_a_position_does_not_match(self) -> None:
        actual = {"steps": [step("search", tool_args={"q": "a"}),
                            step("summarize", tool_args={"maxLen": 100})]}
        expected = {"steps": [step("search", tool_args={"q": "a"}),
                              step("summarize", tool_args={"maxLen": 200})]}
        result = compare_trajectories(actual, expected, ordering="strict")
        assert result.matched_steps == 1 and result.score == 0.5


class TestUnordered:
    def test_any_order(self) -> None:
        result = compare_trajectories(traj("summarize", "search"), traj("search", "summarize"),
                                      ordering="unordered")
        assert result.score == 1 and result.matched_steps == 2
        assert result.out_of_order_steps == []

    def test_missing(self) -> None:
        result = compare_trajectories(traj("search"), traj("search", "summarize"),
                                      ordering="unordered")
        assert result.score == 0.5 and result.missing_steps == ["summarize"]

    def test_extra_does_not_cost(self) -> None:
        result = compare_trajectories(traj("search", "extra"), traj("search"),
                                      ordering="unordered")
        assert result.score == 1 and result.extra_steps == ["extra"]

    def test_each_actual_step_is_used_once(self) -> None:
        result = compare_trajectories(traj("search"), traj("search", "search"),
                                      ordering="unordered")
        assert result.score == 0.5


class TestStepMatching:
    def test_name_only(self) -> None:
        actual = {"steps": [step("search"), step("generate", "model_generation")]}
        result = compare_trajectories(actual, [ExpectedStep(name="search"),
                                               ExpectedStep(name="generate")])
        assert result.score == 1 and result.matched_steps == 2

    def test_step_type_selects_the_right_step(self) -> None:
        actual = {"steps": [step("search"), step("search", "mcp_tool_call")]}
        result = compare_trajectories(actual, [{"name": "search", "step_type": "mcp_tool_call"}])
        assert result.matched_steps == 1 and result.missing_steps == []

    def test_step_type_mismatch(self) -> None:
        result = compare_trajectories(traj("search"),
                                      [{"name": "search", "stepType": "mcp_tool_call"}])
        assert result.matched_steps == 0 and result.missing_steps == ["search"]

    def test_given_fields_are_compared_by_value(self) -> None:
        actual = {"steps": [step("search", tool_args={"q": "hello", "n": 3},
                                 tool_result={"count": 5})]}
        same = [{"name": "search", "tool_args": {"n": 3, "q": "hello"}}]
        other = [{"name": "search", "toolArgs": {"q": "world"}}]
        result_field = [{"name": "search", "tool_result": {"count": 10}}]
        assert compare_trajectories(actual, same).score == 1
        assert compare_trajectories(actual, other).score == 0
        assert compare_trajectories(actual, result_field).score == 0

    def test_unset_fields_are_not_compared(self) -> None:
        actual = {"steps": [step("search", tool_args={"query": "x"}, tool_result={"r": []})]}
        assert compare_trajectories(actual, traj("search")).score == 1

    def test_camel_case_extra_fields(self) -> None:
        actual = {"steps": [step("gen", "model_generation", prompt_tokens=100)]}
        assert compare_trajectories(actual, [{"name": "gen", "promptTokens": 100}]).score == 1
        assert compare_trajectories(actual, [{"name": "gen", "promptTokens": 99}]).score == 0

    def test_status_and_output_of_workflow_steps(self) -> None:
        actual = {"steps": [step("fetch", "workflow_step", status="success", output={"n": 1})]}
        assert compare_trajectories(actual, [{"name": "fetch", "status": "success"}]).score == 1
        assert compare_trajectories(actual, [{"name": "fetch", "status": "failed"}]).score == 0

    def test_legacy_data_only_with_compare_step_data(self) -> None:
        actual = {"steps": [step("search", tool_args={"query": "different"})]}
        expected = [{"name": "search", "step_type": "tool_call",
                     "data": {"input": {"query": "hello"}}}]
        assert compare_trajectories(actual, expected).score == 1
        assert compare_trajectories(actual, expected, compare_step_data=True).score == 0
        good = {"steps": [step("search", tool_args={"query": "hello"})]}
        assert compare_trajectories(good, expected, compare_step_data=True).score == 1

    def test_compare_step_data_false_ignores_fields(self) -> None:
        actual = {"steps": [step("search", tool_args={"q": "a"})]}
        expected = [{"name": "search", "tool_args": {"q": "b"}}]
        assert compare_trajectories(actual, expected, compare_step_data=False).score == 1

    def test_trajectory_as_expected_compares_its_data_not_its_timing(self) -> None:
        actual = Trajectory(steps=[ToolCallStep(name="search", tool_args={"q": "test"},
                                                duration_ms=12)])
        expected = Trajectory(steps=[ToolCallStep(name="search", tool_args={"q": "test"},
                                                  duration_ms=99)])
        assert compare_trajectories(actual, expected).score == 1
        wrong = Trajectory(steps=[ToolCallStep(name="search", tool_args={"q": "nope"})])
        assert compare_trajectories(actual, wrong).score == 0

    def test_expectation_brings_its_own_ordering(self) -> None:
        exp = TrajectoryExpectation(steps=[ExpectedStep(name="a"), ExpectedStep(name="b")],
                                    ordering="strict")
        assert compare_trajectories(traj("b", "a"), exp).score == 0
        assert compare_trajectories(traj("b", "a"), exp, ordering="unordered").score == 1

    def test_relaxed_data_mismatch_is_missing_not_out_of_order(self) -> None:
        actual = {"steps": [step("search", tool_args={"q": "x"})]}
        result = compare_trajectories(actual, [{"name": "search", "tool_args": {"q": "y"}}])
        assert result.missing_steps == ["search"]
        assert result.out_of_order_steps == []

    def test_bad_ordering_is_refused(self) -> None:
        with pytest.raises(ValueError, match="ordering"):
            compare_trajectories(traj("a"), traj("a"), ordering="sorted")  # type: ignore[arg-type]


class TestNesting:
    def _actual(self, *children: str) -> dict[str, object]:
        return {"steps": [step("agent-run", "agent_run",
                               children=[step(c) for c in children])]}

    def test_children_expectations_met(self) -> None:
        expected = [{"name": "agent-run", "step_type": "agent_run",
                     "children": {"ordering": "strict", "steps": [{"name": "tool-a"},
                                                                  {"name": "tool-b"}]}}]
        result = compare_trajectories(self._actual("tool-a", "tool-b"), expected)
        assert result.score == 1
        assert result.nested[0].step_name == "agent-run"
        assert result.nested[0].accuracy.matched_steps == 2

    def test_children_partly_met_lower_the_score(self) -> None:
        expected = [{"name": "agent-run",
                     "children": {"steps": [{"name": "tool-a"}, {"name": "tool-b"},
                                            {"name": "tool-c"}]}}]
        result = compare_trajectories(self._actual("tool-a"), expected)
        assert result.matched_steps == 1
        assert result.score == 0.33
        assert result.nested[0].accuracy.missing_steps == ["tool-b", "tool-c"]

    def test_children_in_their_own_ordering(self) -> None:
        expected = [{"name": "agent-run",
                     "children": {"ordering": "unordered",
                                  "steps": [{"name": "fetch"}, {"name": "validate"}]}}]
        assert compare_trajectories(self._actual("validate", "fetch"), expected).score == 1
        strict = [{"name": "agent-run",
                   "children": {"ordering": "strict",
                                "steps": [{"name": "fetch"}, {"name": "validate"}]}}]
        assert compare_trajectories(self._actual("validate", "fetch"), strict).score == 0

    def test_missing_children_score_zero_for_that_step(self) -> None:
        expected = [{"name": "agent-run", "children": {"steps": [{"name": "tool-a"}]}},
                    {"name": "after"}]
        actual = {"steps": [step("agent-run", "agent_run"), step("after")]}
        result = compare_trajectories(actual, expected)
        assert result.score == 0.5
        assert result.nested[0].score == 0

    def test_three_levels(self) -> None:
        actual = {"steps": [step("workflow", "workflow_run", children=[
            step("sub-agent", "agent_run", children=[step("deep-tool")])])]}
        expected = [{"name": "workflow", "children": {"steps": [
            {"name": "sub-agent", "children": {"steps": [{"name": "deep-tool"}]}}]}}]
        assert compare_trajectories(actual, expected).score == 1
        wrong = [{"name": "workflow", "children": {"steps": [
            {"name": "sub-agent", "children": {"steps": [{"name": "other-tool"}]}}]}}]
        result = compare_trajectories(actual, wrong)
        assert result.score == 0
        assert result.nested[0].accuracy.nested[0].accuracy.missing_steps == ["other-tool"]

    def test_no_nested_key_without_children_expectations(self) -> None:
        assert "nested" not in compare_trajectories(traj("a"), traj("a"))
