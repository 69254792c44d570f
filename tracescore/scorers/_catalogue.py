"""``CATALOGUE``: every prebuilt scorer by id → its factory.

A ``[[scorers]]`` entry names one with ``use = "<id>"`` (its ``args`` go to the factory), and
``run_evals`` users can look factories up by the id a stored score carries. Keep the dict one
literal sorted by id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracescore.scoring import Scorer

from . import checks
from ._answer_relevancy import create_answer_relevancy_scorer
from ._answer_similarity import create_answer_similarity_scorer
from ._bias import create_bias_scorer
from ._cascade import create_cascade_scorer
from ._completeness import create_completeness_scorer
from ._content_similarity import create_content_similarity_scorer
from ._context_precision import create_context_precision_scorer
from ._context_recall import create_context_recall_scorer
from ._context_relevance import create_context_relevance_scorer_llm
from ._faithfulness import create_faithfulness_scorer
from ._goal_completion import create_goal_completion_scorer
from ._hallucination import create_hallucination_scorer
from ._keyword_coverage import create_keyword_coverage_scorer
from ._multi_turn_judge import create_multi_turn_judge_scorer
from ._noise_sensitivity import create_noise_sensitivity_scorer_llm
from ._plan_adherence import create_plan_adherence_scorer
from ._prompt_alignment import create_prompt_alignment_scorer_llm
from ._rubric import create_rubric_scorer
from ._summarization import create_summarization_scorer
from ._textual_difference import create_textual_difference_scorer
from ._tone import create_tone_scorer
from ._tool_arguments import create_tool_argument_scorer
from ._tool_call_accuracy import create_tool_call_accuracy_scorer_code
from ._tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
from ._toxicity import create_toxicity_scorer
from ._trace_judge import create_trace_judge
from ._trajectory_llm import create_trajectory_accuracy_scorer_llm
from ._trajectory_scorers import (
    create_trajectory_accuracy_scorer_code,
    create_trajectory_scorer_code,
)

Factory = Callable[..., Scorer[Any, Any]]

CATALOGUE: dict[str, Factory] = {
    "answer-relevancy-scorer": create_answer_relevancy_scorer,
    "answer-similarity-scorer": create_answer_similarity_scorer,
    "bias-scorer": create_bias_scorer,
    "cascade": create_cascade_scorer,
    "check-called-tool": checks.called_tool,
    "check-did-not-call": checks.did_not_call,
    "check-equals": checks.equals,
    "check-excludes": checks.excludes,
    "check-includes": checks.includes,
    "check-matches": checks.matches,
    "check-max-tool-calls": checks.max_tool_calls,
    "check-no-tool-errors": checks.no_tool_errors,
    "check-similarity": checks.similarity,
    "check-tool-order": checks.tool_order,
    "check-used-no-tools": checks.used_no_tools,
    "code-tool-call-accuracy-scorer": create_tool_call_accuracy_scorer_code,
    "code-trajectory-accuracy-scorer": create_trajectory_accuracy_scorer_code,
    "code-trajectory-scorer": create_trajectory_scorer_code,
    "completeness-scorer": create_completeness_scorer,
    "content-similarity-scorer": create_content_similarity_scorer,
    "context-precision-scorer": create_context_precision_scorer,
    "context-recall-scorer": create_context_recall_scorer,
    "context-relevance-scorer": create_context_relevance_scorer_llm,
    "faithfulness-scorer": create_faithfulness_scorer,
    "goal-completion-scorer": create_goal_completion_scorer,
    "hallucination-scorer": create_hallucination_scorer,
    "keyword-coverage-scorer": create_keyword_coverage_scorer,
    "llm-tool-call-accuracy-scorer": create_tool_call_accuracy_scorer_llm,
    "llm-trajectory-accuracy-scorer": create_trajectory_accuracy_scorer_llm,
    "multi-turn-judge-scorer": create_multi_turn_judge_scorer,
    "noise-sensitivity-scorer": create_noise_sensitivity_scorer_llm,
    "plan-adherence-scorer": create_plan_adherence_scorer,
    "prompt-alignment-scorer": create_prompt_alignment_scorer_llm,
    "rubric-scorer": create_rubric_scorer,
    "summarization-scorer": create_summarization_scorer,
    "textual-difference-scorer": create_textual_difference_scorer,
    "tone-scorer": create_tone_scorer,
    "tool-argument-scorer": create_tool_argument_scorer,
    "toxicity-scorer": create_toxicity_scorer,
    "trace-judge": create_trace_judge,
}
"""Prebuilt scorer id → factory (the id each factory's scorer carries by default)."""

LOWER_IS_BETTER: frozenset[str] = frozenset({
    "bias-scorer",
    "hallucination-scorer",
    "toxicity-scorer",
})
"""Catalogue ids whose score measures a fault (0 is best): a rise is a regression when
experiments are compared; every other scorer is higher-is-better."""
