"""The scorer pipeline: ``create_scorer`` → preprocess → analyze → generate_score →
generate_reason, with prompt steps answered by an LLM ``Judge`` through litellm.

Importing this room is cheap: litellm is imported on the first judge call.
"""

from ._classifier import create_classifier_scorer, probability_of_true
from ._errors import (
    JudgeOutputError,
    PipelineIncompleteError,
    ScoreOutOfRange,
    ScorerDefinitionError,
    ScorerRunError,
)
from ._filter import filter_run
from ._judge import Judge
from ._judge_call import load_litellm, normalise_usage
from ._observe import ExecutionObserver, observe_judge_executions
from ._retry import RetryProcessor, classify_error, retry_after_s
from ._rows import execution_row, execution_rows, step_columns
from ._scorer import Scorer, create_scorer
from ._steps import (
    DEFAULT_SCORE_RANGE,
    NotScorableSignal,
    PromptStep,
    StepResults,
    not_scorable,
)

__all__ = [
    "DEFAULT_SCORE_RANGE",
    "ExecutionObserver",
    "Judge",
    "JudgeOutputError",
    "NotScorableSignal",
    "PipelineIncompleteError",
    "PromptStep",
    "RetryProcessor",
    "ScoreOutOfRange",
    "Scorer",
    "ScorerDefinitionError",
    "ScorerRunError",
    "StepResults",
    "classify_error",
    "create_classifier_scorer",
    "create_scorer",
    "execution_row",
    "execution_rows",
    "filter_run",
    "load_litellm",
    "normalise_usage",
    "not_scorable",
    "observe_judge_executions",
    "probability_of_true",
    "retry_after_s",
    "step_columns",
]
