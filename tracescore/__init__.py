"""tracescore: a trace-scoring backend and scorer library for AI agents.

The public API is one flat namespace. Shared types (``tracescore.model``) are imported eagerly;
everything else is resolved on first attribute access, so ``import tracescore`` stays cheap and
never loads litellm, duckdb, grpc or fastapi.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .model import *  # noqa: F403
from .model import __all__ as _model_all

__version__ = "0.1.0"

# name -> the room that defines it (resolved lazily by __getattr__).
_LAZY: dict[str, str] = {
    # scoring
    "create_scorer": "tracescore.scoring",
    "Scorer": "tracescore.scoring",
    "PromptStep": "tracescore.scoring",
    "Judge": "tracescore.scoring",
    "RetryProcessor": "tracescore.scoring",
    "not_scorable": "tracescore.scoring",
    "ScorerRunError": "tracescore.scoring",
    "ScorerDefinitionError": "tracescore.scoring",
    "filter_run": "tracescore.scoring",
    "create_classifier_scorer": "tracescore.scoring",
    # scorers
    "checks": "tracescore.scorers",
    "create_faithfulness_scorer": "tracescore.scorers",
    "create_hallucination_scorer": "tracescore.scorers",
    "create_answer_relevancy_scorer": "tracescore.scorers",
    "create_answer_similarity_scorer": "tracescore.scorers",
    "create_bias_scorer": "tracescore.scorers",
    "create_cascade_scorer": "tracescore.scorers",
    "create_context_precision_scorer": "tracescore.scorers",
    "create_context_recall_scorer": "tracescore.scorers",
    "create_context_relevance_scorer_llm": "tracescore.scorers",
    "create_noise_sensitivity_scorer_llm": "tracescore.scorers",
    "create_prompt_alignment_scorer_llm": "tracescore.scorers",
    "create_summarization_scorer": "tracescore.scorers",
    "create_tool_call_accuracy_scorer_llm": "tracescore.scorers",
    "create_toxicity_scorer": "tracescore.scorers",
    "create_trajectory_accuracy_scorer_llm": "tracescore.scorers",
    "create_trajectory_accuracy_scorer_code": "tracescore.scorers",
    "create_trajectory_scorer_code": "tracescore.scorers",
    "create_tool_call_accuracy_scorer_code": "tracescore.scorers",
    "create_completeness_scorer": "tracescore.scorers",
    "create_content_similarity_scorer": "tracescore.scorers",
    "create_keyword_coverage_scorer": "tracescore.scorers",
    "create_textual_difference_scorer": "tracescore.scorers",
    "create_tone_scorer": "tracescore.scorers",
    "create_multi_turn_judge_scorer": "tracescore.scorers",
    "create_rubric_scorer": "tracescore.scorers",
    "RubricCriterion": "tracescore.scorers",
    "extract_tool_calls": "tracescore.scorers",
    "extract_tool_results": "tracescore.scorers",
    "extract_trajectory": "tracescore.scorers",
    "extract_workflow_trajectory": "tracescore.scorers",
    "compare_trajectories": "tracescore.scorers",
    "check_trajectory_efficiency": "tracescore.scorers",
    "check_trajectory_blacklist": "tracescore.scorers",
    "analyze_tool_failures": "tracescore.scorers",
    "create_goal_completion_scorer": "tracescore.scorers",
    "create_plan_adherence_scorer": "tracescore.scorers",
    "create_tool_argument_scorer": "tracescore.scorers",
    "create_trace_judge": "tracescore.scorers",
    # evals
    "run_evals": "tracescore.evals",
    "run_evals_sync": "tracescore.evals",
    "EvalResult": "tracescore.evals",
    "EvalItem": "tracescore.evals",
    "AgentResponse": "tracescore.evals",
    "WorkflowRunResult": "tracescore.evals",
    "AgentScorerConfig": "tracescore.evals",
    "WorkflowScorerConfig": "tracescore.evals",
    # traces
    "Trace": "tracescore.traces",
    "load_trace": "tracescore.traces",
    "trace_to_agent_run": "tracescore.traces",
    "trace_to_span_run": "tracescore.traces",
    "extract_trajectory_from_trace": "tracescore.traces",
}

__all__ = sorted([*_model_all, *_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    """Import the room that defines ``name`` on first use."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'tracescore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .evals import (  # noqa: F401
        AgentResponse,
        AgentScorerConfig,
        EvalItem,
        EvalResult,
        WorkflowRunResult,
        WorkflowScorerConfig,
        run_evals,
        run_evals_sync,
    )
    from .scorers import (  # noqa: F401
        RubricCriterion,
        analyze_tool_failures,
        check_trajectory_blacklist,
        check_trajectory_efficiency,
        checks,
        compare_trajectories,
        create_answer_relevancy_scorer,
        create_answer_similarity_scorer,
        create_bias_scorer,
        create_cascade_scorer,
        create_completeness_scorer,
        create_content_similarity_scorer,
        create_context_precision_scorer,
        create_context_recall_scorer,
        create_context_relevance_scorer_llm,
        create_faithfulness_scorer,
        create_goal_completion_scorer,
        create_hallucination_scorer,
        create_keyword_coverage_scorer,
        create_multi_turn_judge_scorer,
        create_noise_sensitivity_scorer_llm,
        create_plan_adherence_scorer,
        create_prompt_alignment_scorer_llm,
        create_rubric_scorer,
        create_summarization_scorer,
        create_textual_difference_scorer,
        create_tone_scorer,
        create_tool_argument_scorer,
        create_tool_call_accuracy_scorer_code,
        create_tool_call_accuracy_scorer_llm,
        create_toxicity_scorer,
        create_trace_judge,
        create_trajectory_accuracy_scorer_code,
        create_trajectory_accuracy_scorer_llm,
        create_trajectory_scorer_code,
        extract_tool_calls,
        extract_tool_results,
        extract_trajectory,
        extract_workflow_trajectory,
    )
    from .scoring import (  # noqa: F401
        Judge,
        PromptStep,
        RetryProcessor,
        Scorer,
        ScorerDefinitionError,
        ScorerRunError,
        create_classifier_scorer,
        create_scorer,
        filter_run,
        not_scorable,
    )
    from .traces import (  # noqa: F401
        Trace,
        extract_trajectory_from_trace,
        load_trace,
        trace_to_agent_run,
        trace_to_span_run,
    )
