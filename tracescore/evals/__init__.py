"""Batch evaluation of agents and workflows: ``run_evals`` with data items, scorers, gates,
thresholds, multi-turn conversations, trajectories and a verdict CI can act on.

Importing this room is cheap: litellm, duckdb and httpx load only when a judge runs or a store
is written.
"""

from ._compare import compare_experiments, compare_results, list_experiments
from ._compare_format import format_markdown, format_table
from ._compare_models import (
    ExperimentComparison,
    ExperimentInfo,
    ItemComparison,
    ItemScoreChange,
    ScorerComparison,
)
from ._errors import EvalError, EvalValidationError
from ._models import (
    AgentResponse,
    AgentScorerConfig,
    EvalItem,
    EvalTurn,
    WorkflowRunResult,
    WorkflowScorerConfig,
)
from ._results import (
    EvalResult,
    EvalSummary,
    GateResult,
    ItemResult,
    ItemTurnResult,
    ThresholdResult,
    TurnResult,
)
from ._run import run_evals, run_evals_sync

__all__ = [
    "AgentResponse",
    "AgentScorerConfig",
    "EvalError",
    "EvalItem",
    "EvalResult",
    "EvalSummary",
    "EvalTurn",
    "EvalValidationError",
    "ExperimentComparison",
    "ExperimentInfo",
    "GateResult",
    "ItemComparison",
    "ItemResult",
    "ItemScoreChange",
    "ScorerComparison",
    "ItemTurnResult",
    "ThresholdResult",
    "TurnResult",
    "WorkflowRunResult",
    "WorkflowScorerConfig",
    "compare_experiments",
    "compare_results",
    "format_markdown",
    "format_table",
    "list_experiments",
    "run_evals",
    "run_evals_sync",
]
