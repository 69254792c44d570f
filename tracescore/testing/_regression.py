"""``assert_no_regression``: a pytest assertion that a new experiment is no worse than a
recorded baseline (``compare_experiments`` underneath)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def assert_no_regression(store: Any, baseline: Any, candidate: Any, *, threshold: float = 0.05,
                         lower_is_better: Sequence[str] = (), api_key: str | None = None) -> Any:
    """Fail with the regressed scorers and items when ``candidate`` regressed from ``baseline``.

    ``baseline``/``candidate``: experiment names (the newest run of that name), ids, or the
    ``EvalResult`` of ``run_evals(..., experiment=...)``. Returns the ``ExperimentComparison``.
    """
    from tracescore.evals import compare_experiments

    comparison = compare_experiments(store, baseline, candidate, threshold=threshold,
                                     lower_is_better=lower_is_better, api_key=api_key)
    if not comparison.regressed:
        return comparison
    lines = [f"experiment {comparison.candidate.name!r} regressed from "
             f"{comparison.baseline.name!r} (threshold {threshold:g}):"]
    for scorer_id in comparison.regressed_scorers:
        s = comparison.scorers[scorer_id]
        direction = "lower is better" if s.lower_is_better else "higher is better"
        lines.append(f"  {scorer_id} ({direction}): {_fmt(s.baseline_avg)} -> "
                     f"{_fmt(s.candidate_avg)}, errors {s.baseline_errors} -> "
                     f"{s.candidate_errors}")
    for item in comparison.items[:10]:
        drops = ", ".join(
            f"{d.scorer_id} {_fmt(d.baseline_score)} -> "
            f"{'error' if d.candidate_score is None else _fmt(d.candidate_score)}"
            for d in item.drops)
        lines.append(f"  item {item.item_id}: {drops}")
    if len(comparison.items) > 10:
        lines.append(f"  ... and {len(comparison.items) - 10} more items")
    raise AssertionError("\n".join(lines))


def _fmt(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f}"


__all__ = ["assert_no_regression"]
