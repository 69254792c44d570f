"""Batch evaluation of agents and workflows: ``run_evals`` with data items, scorers, gates,
thresholds, multi-turn conversations, trajectories and a verdict CI can act on.

Importing this room is cheap: litellm, duckdb and httpx load only when a judge runs or a store
is written.
"""

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
    "GateResult",
    "ItemResult",
    "ItemTurnResult",
    "ThresholdResult",
    "TurnResult",
    "WorkflowRunResult",
    "WorkflowScorerConfig",
    "run_evals",
    "run_evals_sync",
]
