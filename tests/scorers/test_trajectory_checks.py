"""Efficiency budgets, blacklists and tool-failure analysis (Mastra's numbers and cases)."""

from __future__ import annotations

import pytest
from mastra_shapes import step, traj

from tracescore.model import TracescoreError
from tracescore.scorers import (
    TrajectoryCheckError,
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)


class TestEfficiency:
    def test_within_budget_and_no_redundancy(self) -> None:
        result = check_trajectory_efficiency(traj("search", "summarize"), max_steps=5)
        assert result.score == 1
        assert result.over_step_budget is False
        assert result.redundant_calls == []

    def test_step_budget_exceeded(self) -> None:
        result = check_trajectory_efficiency(traj("a", "b", "c"), max_steps=2)
        assert result.over_step_budget is True
        # step dimension 1 - (3-2)/2 = 0.5, redundancy dimension 1 -> mean 0.75
        assert result.score == 0.75
        only_steps = check_trajectory_efficiency(traj("a", "b", "c"), max_steps=2,
                                                 no_redundant_calls=False)
        assert only_steps.score == 0.5

    def test_far_over_budget_floors_at_zero(self) -> None:
        result = check_trajectory_efficiency(traj(*"abcdefg"), max_steps=2,
                                             no_redundant_calls=False)
        assert result.score == 0

    def test_redundant_consecutive_calls(self) -> None:
        trajectory = {"steps": [step("search", tool_args={"q": "test"}),
                                step("search", tool_args={"q": "test"}),
                                step("summarize")]}
        result = check_trajectory_efficiency(trajectory, no_redundant_calls=True)
        assert len(result.redundant_calls) == 1
        assert result.redundant_calls[0].name == "search"
        assert result.redundant_calls[0]["index"] == 1
        assert result.score == 0.8

    def test_each_redundant_call_costs_point_two(self) -> None:
        trajectory = {"steps": [step("s", tool_args={"q": 1}) for _ in range(4)]}
        assert check_trajectory_efficiency(trajectory).score == 0.4

    def test_different_args_are_not_redundant(self) -> None:
        trajectory = {"steps": [step("search", tool_args={"q": "foo"}),
                                step("search", tool_args={"q": "bar"})]}
        result = check_trajectory_efficiency(trajectory, no_redundant_calls=True)
        assert result.redundant_calls == [] and result.score == 1

    def test_token_budget(self) -> None:
        trajectory = {"steps": [
            step("gen1", "model_generation", prompt_tokens=100, completion_tokens=50),
            step("gen2", "model_generation", prompt_tokens=200, completion_tokens=100),
        ]}
        result = check_trajectory_efficiency(trajectory, max_total_tokens=300)
        assert result.total_tokens == 450
        assert result.over_token_budget is True
        assert result.score == 0.75  # (0.5 + 1) / 2

    def test_tokens_of_nested_generations_count(self) -> None:
        trajectory = {"steps": [step("agent", "agent_run", children=[
            step("gen", "model_generation", prompt_tokens=60, completion_tokens=40)])]}
        result = check_trajectory_efficiency(trajectory, max_total_tokens=50,
                                             no_redundant_calls=False)
        assert result.total_tokens == 100
        assert result.score == 0

    def test_duration_budget(self) -> None:
        trajectory = {"steps": [step("a", duration_ms=500), step("b", duration_ms=700)],
                      "total_duration_ms": 1200}
        result = check_trajectory_efficiency(trajectory, max_total_duration_ms=1000)
        assert result.total_duration_ms == 1200
        assert result.over_duration_budget is True
        assert result.score == 0.9  # (0.8 + 1) / 2

    def test_duration_falls_back_to_step_durations(self) -> None:
        trajectory = {"steps": [step("a", duration_ms=500), step("b", duration_ms=700)]}
        result = check_trajectory_efficiency(trajectory, max_total_duration_ms=2400,
                                             no_redundant_calls=False)
        assert result.total_duration_ms == 1200 and result.score == 1

    def test_no_budgets_no_redundancy_scores_one(self) -> None:
        assert check_trajectory_efficiency(traj("a")).score == 1
        assert check_trajectory_efficiency(traj("a"), no_redundant_calls=False).score == 1

    def test_all_dimensions_averaged(self) -> None:
        trajectory = {"steps": [
            step("gen", "model_generation", prompt_tokens=150, completion_tokens=50),
            step("s", tool_args={}), step("s", tool_args={}),
        ], "total_duration_ms": 100}
        result = check_trajectory_efficiency(trajectory, max_steps=2, max_total_tokens=100,
                                             max_total_duration_ms=100)
        # steps 0.5, tokens 0, duration 1, redundancy 0.8 -> 2.3 / 4 = 0.575 -> 0.58
        assert result.score == 0.58

    @pytest.mark.parametrize("kwargs", [{"max_steps": 0}, {"max_steps": -1},
                                        {"max_steps": 2.5}, {"max_total_tokens": 0},
                                        {"max_total_duration_ms": -5},
                                        {"max_steps": True}, {"max_steps": "3"}])
    def test_invalid_budgets_raise(self, kwargs: dict[str, object]) -> None:
        with pytest.raises(TrajectoryCheckError, match="must be a positive"):
            check_trajectory_efficiency(traj("a"), **kwargs)  # type: ignore[arg-type]

    def test_token_budget_without_token_counts_raises(self) -> None:
        with pytest.raises(TrajectoryCheckError, match="token"):
            check_trajectory_efficiency(traj("a", "b"), max_total_tokens=100)

    def test_duration_budget_without_durations_raises(self) -> None:
        with pytest.raises(TrajectoryCheckError, match="duration") as info:
            check_trajectory_efficiency(traj("a"), max_total_duration_ms=100)
        assert isinstance(info.value, TracescoreError) and isinstance(info.value, ValueError)


class TestBlacklist:
    def test_clean(self) -> None:
        result = check_trajectory_blacklist(traj("search", "summarize"),
                                            blacklisted_tools=["deleteAll", "dropTable"])
        assert result.score == 1 and result.violated_tools == []

    def test_blacklisted_tool(self) -> None:
        result = check_trajectory_blacklist(traj("search", "deleteAll"),
                                            blacklisted_tools=["deleteAll"])
        assert result.score == 0 and result.violated_tools == ["deleteAll"]

    def test_sequence(self) -> None:
        result = check_trajectory_blacklist(traj("auth", "escalate", "admin"),
                                            blacklisted_sequences=[["escalate", "admin"]])
        assert result.score == 0
        assert result.violated_sequences == [["escalate", "admin"]]

    def test_non_contiguous_sequence_is_allowed(self) -> None:
        result = check_trajectory_blacklist(traj("escalate", "search", "admin"),
                                            blacklisted_sequences=[["escalate", "admin"]])
        assert result.score == 1 and result.violated_sequences == []

    def test_both_kinds_reported(self) -> None:
        result = check_trajectory_blacklist(traj("deleteAll", "escalate", "admin"),
                                            blacklisted_tools=["deleteAll"],
                                            blacklisted_sequences=[["escalate", "admin"]])
        assert result == {"score": 0.0, "violated_tools": ["deleteAll"],
                          "violated_sequences": [["escalate", "admin"]]}

    def test_nested_tool_counts(self) -> None:
        trajectory = {"steps": [step("agent", "agent_run",
                                     children=[step("safe"), step("deleteAll")])]}
        result = check_trajectory_blacklist(trajectory, blacklisted_tools=["deleteAll"])
        assert result.score == 0

    def test_sequence_within_a_nested_level(self) -> None:
        trajectory = {"steps": [step("agent", "agent_run",
                                     children=[step("escalate"), step("admin")])]}
        assert check_trajectory_blacklist(
            trajectory, blacklisted_sequences=[["escalate", "admin"]]).score == 0

    def test_empty_lists_and_empty_sequences_pass(self) -> None:
        assert check_trajectory_blacklist(traj("a")).score == 1
        assert check_trajectory_blacklist(traj("a"), blacklisted_sequences=[[]]).score == 1

    def test_a_bare_string_is_refused(self) -> None:
        with pytest.raises(TypeError):
            check_trajectory_blacklist(traj("a"), blacklisted_tools="deleteAll")


class TestToolFailures:
    def _t(self, *calls: tuple[str, bool | None]) -> dict[str, object]:
        return {"steps": [step(n, success=s) for n, s in calls]}

    def test_clean(self) -> None:
        result = analyze_tool_failures(self._t(("search", True), ("summarize", True)))
        assert result.score == 1 and result.patterns == [] and result.total_retries == 0

    def test_retry_then_success(self) -> None:
        result = analyze_tool_failures(self._t(("search", False), ("search", True)))
        assert len(result.patterns) == 1
        pattern = result.patterns[0]
        assert pattern.tool_name == "search"
        assert pattern.retry_count == 1
        assert pattern.eventually_succeeded is True
        assert pattern.fell_back_to_alternative is False
        assert result.total_retries == 1 and result.score == 1

    def test_excessive_retries(self) -> None:
        result = analyze_tool_failures(self._t(("search", False), ("search", False),
                                               ("search", False), ("search", True)),
                                       max_retries_per_tool=2)
        assert result.excessive_retry_tools == ["search"]
        assert result.score == 0.8
        assert analyze_tool_failures(self._t(*[("s", False)] * 6),
                                     max_retries_per_tool=0).score == 0

    def test_fallback(self) -> None:
        result = analyze_tool_failures(self._t(("primarySearch", False),
                                               ("primarySearch", False),
                                               ("fallbackSearch", True)))
        assert len(result.patterns) == 1
        assert result.patterns[0].fell_back_to_alternative is True
        assert result.patterns[0].alternative_tool == "fallbackSearch"
        assert result.patterns[0].eventually_succeeded is False

    def test_no_tool_calls(self) -> None:
        result = analyze_tool_failures({"steps": [step("gen", "model_generation")]})
        assert result.score == 1 and result.patterns == []

    def test_model_steps_between_retries_do_not_break_the_group(self) -> None:
        trajectory = {"steps": [step("search", success=False), step("gen", "model_generation"),
                                step("search", success=True)]}
        assert analyze_tool_failures(trajectory).total_retries == 1

    def test_bad_threshold(self) -> None:
        with pytest.raises(TrajectoryCheckError):
            analyze_tool_failures(traj("a"), max_retries_per_tool=-1)
