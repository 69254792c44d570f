"""Prebuilt scorers, quick checks and trajectory utilities.

LLM judges (``create_faithfulness_scorer``, ``create_hallucination_scorer``,
``create_answer_relevancy_scorer``), code scorers over text (completeness, content similarity,
keyword coverage, textual difference, tone), trajectories and tool calls, the
``checks`` namespace of 0/1 micro-scorers, and pure helpers that read tool calls and compare,
budget and audit trajectories. Every factory returns a ``tracescore.scoring.Scorer``.
Importing this room does not import litellm (the judge loads it on its first call).
"""

from . import checks
from ._answer_relevancy import create_answer_relevancy_scorer
from ._checks_trajectory import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from ._compare import compare_trajectories
from ._completeness import create_completeness_scorer
from ._content_similarity import create_content_similarity_scorer
from ._errors import TrajectoryCheckError
from ._extract import (
    extract_tool_calls,
    extract_tool_results,
    extract_trajectory,
    extract_workflow_trajectory,
)
from ._faithfulness import create_faithfulness_scorer
from ._hallucination import create_hallucination_scorer
from ._keyword_coverage import create_keyword_coverage_scorer
from ._multi_turn_judge import create_multi_turn_judge_scorer
from ._results import Record, round_score
from ._rubric import RubricCriterion, create_rubric_scorer
from ._textual_difference import create_textual_difference_scorer
from ._tone import create_tone_scorer
from ._tool_call_accuracy import create_tool_call_accuracy_scorer_code
from ._trajectory_scorers import (
    create_trajectory_accuracy_scorer_code,
    create_trajectory_scorer_code,
)

__all__ = [
    "Record",
    "RubricCriterion",
    "TrajectoryCheckError",
    "analyze_tool_failures",
    "check_trajectory_blacklist",
    "check_trajectory_efficiency",
    "checks",
    "compare_trajectories",
    "create_answer_relevancy_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_multi_turn_judge_scorer",
    "create_rubric_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer_code",
    "create_trajectory_accuracy_scorer_code",
    "create_trajectory_scorer_code",
    "extract_tool_calls",
    "extract_tool_results",
    "extract_trajectory",
    "extract_workflow_trajectory",
    "round_score",
]
