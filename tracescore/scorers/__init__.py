"""Prebuilt scorers, quick checks and trajectory utilities.

LLM judges (``create_faithfulness_scorer``, ``create_bias_scorer``, ..., each built from data
by one declarative builder), code scorers over text (completeness, content similarity, keyword
coverage, textual difference, tone), trajectories and tool calls, the ``checks`` namespace of
0/1 micro-scorers, ``CATALOGUE`` (every prebuilt scorer by id), and pure helpers that read tool
calls and compare, budget and audit trajectories. Every factory returns a
``tracescore.scoring.Scorer``. Importing this room does not import litellm (the judge loads
it on its first call).
"""

from . import checks
from ._answer_relevancy import create_answer_relevancy_scorer
from ._answer_similarity import create_answer_similarity_scorer
from ._bias import create_bias_scorer
from ._cascade import CascadeScorer, confidence_of, create_cascade_scorer
from ._catalogue import CATALOGUE, LOWER_IS_BETTER
from ._checks_trajectory import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from ._compare import compare_trajectories
from ._completeness import create_completeness_scorer
from ._content_similarity import create_content_similarity_scorer
from ._context_precision import create_context_precision_scorer
from ._context_recall import create_context_recall_scorer
from ._context_relevance import create_context_relevance_scorer_llm
from ._errors import TrajectoryCheckError
from ._extract import (
    extract_tool_calls,
    extract_tool_results,
    extract_trajectory,
    extract_workflow_trajectory,
)
from ._faithfulness import create_faithfulness_scorer
from ._goal_completion import create_goal_completion_scorer
from ._hallucination import create_hallucination_scorer
from ._keyword_coverage import create_keyword_coverage_scorer
from ._multi_turn_judge import create_multi_turn_judge_scorer
from ._noise_sensitivity import create_noise_sensitivity_scorer_llm
from ._plan_adherence import create_plan_adherence_scorer
from ._prompt_alignment import create_prompt_alignment_scorer_llm
from ._results import Record, round_score
from ._rubric import RubricCriterion, create_rubric_scorer
from ._summarization import create_summarization_scorer
from ._textual_difference import create_textual_difference_scorer
from ._tone import create_tone_scorer
from ._tool_arguments import create_tool_argument_scorer
from ._tool_call_accuracy import create_tool_call_accuracy_scorer_code
from ._tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
from ._toxicity import create_toxicity_scorer
from ._trace_judge import create_trace_judge
from ._trace_view import TraceView, view_of
from ._trajectory_llm import create_trajectory_accuracy_scorer_llm
from ._trajectory_scorers import (
    create_trajectory_accuracy_scorer_code,
    create_trajectory_scorer_code,
)

__all__ = [
    "CATALOGUE",
    "LOWER_IS_BETTER",
    "Record",
    "RubricCriterion",
    "TraceView",
    "TrajectoryCheckError",
    "analyze_tool_failures",
    "check_trajectory_blacklist",
    "check_trajectory_efficiency",
    "checks",
    "compare_trajectories",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_cascade_scorer",
    "CascadeScorer",
    "confidence_of",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_context_precision_scorer",
    "create_context_recall_scorer",
    "create_context_relevance_scorer_llm",
    "create_faithfulness_scorer",
    "create_goal_completion_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_multi_turn_judge_scorer",
    "create_noise_sensitivity_scorer_llm",
    "create_plan_adherence_scorer",
    "create_prompt_alignment_scorer_llm",
    "create_rubric_scorer",
    "create_summarization_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer_code",
    "create_tool_argument_scorer",
    "create_tool_call_accuracy_scorer_llm",
    "create_toxicity_scorer",
    "create_trace_judge",
    "create_trajectory_accuracy_scorer_code",
    "create_trajectory_accuracy_scorer_llm",
    "create_trajectory_scorer_code",
    "extract_tool_calls",
    "extract_tool_results",
    "extract_trajectory",
    "extract_workflow_trajectory",
    "round_score",
    "view_of",
]
