"""The scorer pipeline: ``create_scorer`` → preprocess → analyze → generate_score →
generate_reason, with prompt steps answered by an LLM ``Judge`` through litellm.

Importing this room is cheap: litellm is imported on the first judge call.
"""

from ._cache import CachedAnswer, JudgeCache, MemoryJudgeCache, cache_key, logprob_confidence
from ._classifier import create_classifier_scorer, probability_of_true
from ._context import context_window, count_tokens
from ._errors import (
    JudgeOutputError,
    JudgeTimeoutError,
    PipelineIncompleteError,
    ScoreOutOfRange,
    ScorerDefinitionError,
    ScorerRunError,
)
from ._filter import filter_run
from ._judge import Judge
from ._judge_call import load_litellm, normalise_usage
from ._navigate import JudgeTool, Navigation, NavigationCaps
from ._observe import ExecutionObserver, observe_judge_executions, relay_judge_executions
from ._options import CallTracker, JudgeOptions, current_judge_options, judge_options
from ._retry import RetryProcessor, classify_error, retry_after_s
from ._rows import UNPRICED, cost_source_of, execution_row, execution_rows, step_columns
from ._scorer import Scorer, create_scorer
from ._steps import (
    DEFAULT_SCORE_RANGE,
    NotScorableSignal,
    PromptStep,
    StepResults,
    not_scorable,
)

__all__ = [
    "UNPRICED",
    "CachedAnswer",
    "CallTracker",
    "DEFAULT_SCORE_RANGE",
    "ExecutionObserver",
    "Judge",
    "JudgeCache",
    "JudgeOptions",
    "JudgeOutputError",
    "JudgeTool",
    "Navigation",
    "NavigationCaps",
    "JudgeTimeoutError",
    "MemoryJudgeCache",
    "NotScorableSignal",
    "PipelineIncompleteError",
    "PromptStep",
    "RetryProcessor",
    "ScoreOutOfRange",
    "Scorer",
    "ScorerDefinitionError",
    "ScorerRunError",
    "StepResults",
    "cache_key",
    "classify_error",
    "context_window",
    "count_tokens",
    "cost_source_of",
    "current_judge_options",
    "create_classifier_scorer",
    "create_scorer",
    "execution_row",
    "execution_rows",
    "filter_run",
    "judge_options",
    "logprob_confidence",
    "load_litellm",
    "normalise_usage",
    "not_scorable",
    "observe_judge_executions",
    "probability_of_true",
    "relay_judge_executions",
    "retry_after_s",
    "step_columns",
]
