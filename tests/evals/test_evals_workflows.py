"""run_evals against a workflow object with named steps: flat scorers, WorkflowScorerConfig
(workflow, steps, trajectory), start options and failed runs."""

from __future__ import annotations

from typing import Any

from evals_helpers import OrderWorkflow, fixed

from tracescore.evals import WorkflowRunResult, WorkflowScorerConfig, run_evals
from tracescore.model import Trajectory
from tracescore.scoring import create_scorer


def _record(scorer_id: str, seen: list[Any], score: float = 1.0) -> Any:
    def fn(run: Any, results: Any) -> float:
        seen.append((run.input, run.output, run.ground_truth))
        return score

    return create_scorer(scorer_id, "records its run").generate_score(fn)


async def test_flat_scorers_see_the_item_input_and_the_workflow_result() -> None:
    seen: list[Any] = []
    result = await run_evals(
        OrderWorkflow(),
        [{"input": {"item": "pen", "qty": 3}, "ground_truth": 6}],
        scorers=[_record("rec", seen)],
    )
    assert seen == [({"item": "pen", "qty": 3}, {"summary": "3 x pen = 6", "total": 6}, 6)]
    assert result.scores == {"rec": 1.0}
    assert result.items[0].output == {"summary": "3 x pen = 6", "total": 6}


async def test_workflow_scorer_config_scores_workflow_steps_and_trajectory() -> None:
    workflow_seen: list[Any] = []
    price_seen: list[Any] = []
    trajectory_seen: list[Any] = []

    def path_score(run: Any, results: Any) -> float:
        trajectory_seen.append(run.output)
        return 1.0 if [s.name for s in run.output.steps] == ["validate", "price", "format"] else 0.0

    config = WorkflowScorerConfig(
        workflow=[_record("total-ok", workflow_seen)],
        steps={
            "price": [_record("price-seen", price_seen, 0.8)],
            "format": [{"scorer": fixed("formatted", 0.6), "threshold": {"min": 0.5, "max": 0.7}}],
        },
        trajectory=[create_scorer("full-path", "x").generate_score(path_score)],
    )
    result = await run_evals(
        OrderWorkflow(),
        [{"input": {"item": "pen", "qty": 3}}, {"input": {"item": "cap", "qty": 0}}],
        scorers=config,
    )
    assert result.scores == {
        "workflow": {"total-ok": 1.0},
        "steps": {"price": {"price-seen": 0.8}, "format": {"formatted": 0.6}},
        "trajectory": {"full-path": 0.5},
    }
    # Step scorers run only on successful steps, on the step's payload and output.
    assert price_seen == [({"item": "pen", "qty": 3}, {"total": 6}, None)]
    # The failed run's workflow scorer saw no output.
    assert [out for _, out, _ in workflow_seen] == [{"summary": "3 x pen = 6", "total": 6}, None]
    assert all(isinstance(t, Trajectory) for t in trajectory_seen)
    assert [s.name for s in trajectory_seen[1].steps] == ["validate", "price"]
    assert result.threshold_results is not None
    assert [(r.id, r.group, r.passed, r.threshold) for r in result.threshold_results] == [
        ("formatted", "steps.format", True, {"min": 0.5, "max": 0.7})
    ]
    assert result.verdict == "passed"
    nested = result.items[0].scorer_results
    assert nested["steps"]["price"]["price-seen"].score == 0.8
    assert "steps" not in result.items[1].scorer_results or "price" not in \
        result.items[1].scorer_results["steps"]


async def test_workflow_config_as_a_plain_dict() -> None:
    result = await run_evals(
        OrderWorkflow(), [{"input": {"item": "pen", "qty": 1}}],
        scorers={"steps": {"validate": [fixed("v", 1.0)]}},
    )
    assert result.scores == {"steps": {"validate": {"v": 1.0}}}


async def test_start_options_merge_over_target_options() -> None:
    workflow = OrderWorkflow()
    result = await run_evals(
        workflow,
        [
            {"input": {"item": "pen", "qty": 2}},
            {"input": {"item": "pen", "qty": 2}, "start_options": {"unit_price": 5},
             "request_context": {"tenant": "t1"}},
        ],
        scorers=[fixed("f", 1.0)],
        target_options={"unit_price": 3, "trace": True},
    )
    assert workflow.calls[0]["options"] == {"unit_price": 3, "trace": True}
    assert workflow.calls[1]["options"] == {"unit_price": 5, "trace": True,
                                            "request_context": {"tenant": "t1"}}
    assert [i.output["total"] for i in result.items] == [6, 10]


async def test_sync_workflow_returning_a_mastra_shaped_dict() -> None:
    class DictWorkflow:
        def run(self, input: Any) -> dict[str, Any]:
            return {
                "status": "success",
                "result": input * 2,
                "steps": {"double": {"status": "success", "output": input * 2}},
            }

    seen: list[Any] = []
    result = await run_evals(
        DictWorkflow(), [{"input": 21}],
        scorers=WorkflowScorerConfig(steps={"double": [_record("double", seen)]}),
    )
    # No payload on the step: the step scorer sees the workflow's input.
    assert seen == [(21, 42, None)]
    assert result.items[0].output == 42


async def test_workflow_failing_status_is_scored_not_errored() -> None:
    result = await run_evals(
        OrderWorkflow(), [{"input": {"item": "cap", "qty": -1}}],
        scorers=[create_scorer("has-output", "x").generate_score(
            lambda run, results: 0.0 if run.output is None else 1.0)],
    )
    assert result.summary.errors == 0
    assert result.scores == {"has-output": 0.0}


async def test_workflow_result_type_is_returned_to_on_item_complete() -> None:
    got: list[Any] = []
    await run_evals(
        OrderWorkflow(), [{"input": {"item": "pen", "qty": 1}}],
        scorers=[fixed("f", 1.0)],
        on_item_complete=lambda item, target_result, scorer_results: got.append(
            (item, target_result, scorer_results)),
    )
    item, target_result, scorer_results = got[0]
    assert item == {"input": {"item": "pen", "qty": 1}}
    assert isinstance(target_result, WorkflowRunResult)
    assert target_result.step_execution_path == ["validate", "price", "format"]
    assert scorer_results["f"].score == 1.0
