"""The shape the code scorers over text share: an agent-typed scorer whose preprocess (and
optional analyze) are code and whose score is a pure function of their results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracescore.scoring import Scorer, StepResults, create_scorer


def text_code_scorer(
    scorer_id: str,
    description: str,
    *,
    name: str,
    preprocess: Callable[[Any], Any],
    score: Callable[[Any, Any], float],
    analyze: Callable[[Any], Any] | None = None,
) -> Scorer[Any, Any]:
    """``preprocess(run)`` → ``analyze(preprocess result)`` (when given) →
    ``score(preprocess result, analyze result)``, as a ``type="agent"`` scorer."""

    def generate_score(run: Any, results: StepResults) -> float:
        return float(score(results.preprocess_step_result, results.analyze_step_result))

    scorer = create_scorer(scorer_id, description, name=name, type="agent").preprocess(preprocess)
    if analyze is not None:
        scorer = scorer.analyze(
            lambda run, results: analyze(results.preprocess_step_result))
    return scorer.generate_score(generate_score)
