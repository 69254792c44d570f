"""Bad arguments are refused before anything runs, with messages that say what to change."""

from __future__ import annotations

from typing import Any

import pytest
from evals_helpers import OrderWorkflow, fixed

from tracescore.evals import (
    AgentScorerConfig,
    EvalValidationError,
    WorkflowScorerConfig,
    run_evals,
)
from tracescore.model import TracescoreError

F = fixed("f", 1.0)


def _agent(text: Any) -> str:
    raise AssertionError("the target must not run when validation fails")


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ([], {"scorers": [F]}, r"data is empty"),
        ("just a string", {"scorers": [F]}, r"data must be a list"),
        ([{"ground_truth": 1}], {"scorers": [F]},
         r"data item 0: give exactly one of 'input', 'inputs' or 'turns' \(it has none\)"),
        ([{"input": "a"}, {"input": "a", "inputs": ["b"]}], {"scorers": [F]},
         r"data item 1: give exactly one .* \(it has 'input' and 'inputs'\)"),
        ([{"inputs": []}], {"scorers": [F]}, r"data item 0: 'inputs' must be a non-empty list"),
        ([{"turns": []}], {"scorers": [F]}, r"data item 0: 'turns' must be a non-empty list"),
        (["hello"], {"scorers": [F]}, r"data item 0: expected a dict or EvalItem"),
        ([{"input": "a"}], {}, r"no scorers, no gates and no per-turn assertions"),
        ([{"input": "a"}], {"scorers": []}, r"at least one scorer must be provided"),
        ([{"input": "a"}], {"scorers": [{"scorer": F, "threshold": 1.5}]},
         r"out of range; thresholds must be within \[0, 1\]"),
        ([{"input": "a"}], {"scorers": [{"scorer": F, "threshold": -0.1}]}, r"within \[0, 1\]"),
        ([{"input": "a"}], {"scorers": [{"scorer": F, "threshold": {"min": 0.8, "max": 0.5}}]},
         r"min 0.8 is greater than max 0.5"),
        ([{"input": "a"}], {"scorers": [{"scorer": F, "threshold": {"low": 0.1}}]},
         r"unknown key"),
        ([{"input": "a"}], {"scorers": [{"scorer": F, "threshold": "high"}]},
         r"must be a number between 0 and 1"),
        ([{"input": "a"}], {"scorers": ["not a scorer"]}, r"scorers\[0\]: expected a scorer"),
        ([{"input": "a"}], {"gates": [{"scorer": F, "threshold": 0.5}]},
         r"gates take no threshold"),
        ([{"input": "a"}], {"scorers": WorkflowScorerConfig(workflow=[F])},
         r"WorkflowScorerConfig is for workflow targets"),
        ([{"input": "a"}], {"scorers": {"agents": [F]}}, r"unknown key\(s\) \['agents'\]"),
        ([{"input": "a"}], {"scorers": [F], "concurrency": 0}, r"concurrency must be an integer"),
        ([{"turns": [{"input": "a", "scorers": [{"scorer": F, "threshold": 2}]}]}], {},
         r"data item 0, turn 0, scorers\[0\]"),
    ],
)
async def test_validation_messages(data: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalValidationError, match=message) as info:
        await run_evals(_agent, data, **kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TracescoreError)


@pytest.mark.parametrize("key", ["inputs", "turns"])
async def test_multi_turn_items_are_for_agents_only(key: str) -> None:
    with pytest.raises(EvalValidationError, match=rf"'{key}' \(multi-turn\) works with agent "
                                                  r"targets only"):
        await run_evals(OrderWorkflow(), [{key: ["a"]}], scorers=[F])


async def test_agent_config_with_a_workflow_is_refused() -> None:
    with pytest.raises(EvalValidationError, match="AgentScorerConfig is for agent targets"):
        await run_evals(OrderWorkflow(), [{"input": {"item": "x", "qty": 1}}],
                        scorers=AgentScorerConfig(agent=[F]))


async def test_target_that_is_neither_agent_nor_workflow_is_refused() -> None:
    with pytest.raises(EvalValidationError, match="target must be an agent"):
        await run_evals(42, [{"input": "a"}], scorers=[F])


async def test_per_turn_assertions_alone_are_enough() -> None:
    result = await run_evals(lambda text: text, [{"turns": [{"input": "a", "gates": [F]}]}])
    assert result.turn_results is not None and result.verdict == "passed"


async def test_scorers_sharing_an_id_are_both_kept() -> None:
    result = await run_evals(lambda text: text, [{"input": "a"}],
                             scorers=[F, fixed("f", 0.5)], gates=[F, fixed("f", 0.0)])
    assert result.scores == {"f": 1.0, "f#2": 0.5}
    assert result.gate_results is not None
    assert [(g.id, g.passed) for g in result.gate_results] == [("f", True), ("f#2", False)]
