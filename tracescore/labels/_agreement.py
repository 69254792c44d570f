"""How one judge version agrees with people, and how people agree with each other: the
``judge_agreement`` and ``annotator_agreement`` rows of paired values (``_stats`` computes the
statistics and their intervals; ``_upkeep`` keeps the tables; ``_reads`` reads them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ._labels import utc_now
from ._models import LabelSchema
from ._stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Array,
    Statistic,
    Values,
    alpha_statistic,
    estimates,
    kappa_statistic,
    mae_statistic,
    rate_statistic,
    spearman_statistic,
)


def consensus(schema: LabelSchema, values: Sequence[float]) -> float | None:
    """One label from several annotators' values: the mean (numeric) or the most frequent
    value (None on a tie)."""
    if not values:
        return None
    if schema.kind == "numeric":
        return float(np.mean(values))
    ranked = Counter(values).most_common(2)
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return float(ranked[0][0])


def verdicts(schema: LabelSchema, labels: Values, scores: Values) -> tuple[Array, Array]:
    """(people, judge) as category codes: a categorical label's index and the category the
    score falls in, else below (0) or at/above (1) the schema's threshold."""
    score = np.asarray(scores, dtype=np.float64)
    label = np.asarray(labels, dtype=np.float64)
    if schema.kind == "categorical":
        top = len(schema.values or ()) - 1
        return label.astype(int), np.rint(np.clip(score, 0.0, 1.0) * top).astype(int)
    normal = (label - (schema.min_value or 0.0)) / (
        (schema.max_value - schema.min_value) if schema.kind == "numeric"
        and schema.max_value is not None and schema.min_value is not None else 1.0)
    return (normal >= schema.cutoff).astype(int), (score >= schema.cutoff).astype(int)


def _distinct(*columns: Array) -> tuple[list[Array], Array]:
    """The distinct rows of the columns and how often each occurs."""
    stacked = np.column_stack([np.asarray(c, dtype=np.float64) for c in columns])
    rows, counts = np.unique(stacked.reshape(-1, len(columns)), axis=0, return_counts=True)
    return [rows[:, i] for i in range(len(columns))], counts


def agreement_row(schema: LabelSchema, scorer_id: str, version: str, labels: Values,
                  scores: Values, *, resamples: int = DEFAULT_RESAMPLES,
                  seed: int = DEFAULT_SEED, now: datetime | None = None) -> dict[str, Any]:
    """One ``judge_agreement`` row for paired labels (as stored) and scores.

    κ, TPR and TNR depend only on the (person, judge) verdict pair, so they are bootstrapped
    over the few distinct verdict pairs with their counts (``_stats.cell_weights``); ρ and MAE
    (numeric and categorical schemas) over the distinct (label, score) pairs. Each group has
    its own resamples, drawn with ``seed``."""
    people, judge = verdicts(schema, labels, scores)
    (p, j), counts = _distinct(people, judge)
    p, j = p.astype(int), j.astype(int)
    binary = schema.kind != "categorical" or len(schema.values or ()) == 2
    group: dict[str, Statistic] = {"kappa": kappa_statistic(p, j)}
    if binary:
        group["tpr"] = rate_statistic(p, j, positive=True)
        group["tnr"] = rate_statistic(p, j, positive=False)
    found = estimates(group, len(counts), resamples=resamples, seed=seed, counts=counts)
    if schema.kind != "boolean":
        (label, score), counts = _distinct(labels, scores)
        normal = np.array([schema.normalized(v) for v in label])
        found.update(estimates({"spearman": spearman_statistic(score, label),
                                "mae": mae_statistic(score, normal)}, len(counts),
                               resamples=resamples, seed=seed, counts=counts))
    row: dict[str, Any] = {"scorer_id": scorer_id, "scorer_version": version,
                           "schema_name": schema.name, "schema_kind": schema.kind,
                           "n": int(len(np.asarray(labels))), "threshold": schema.cutoff,
                           "updated_at": now or utc_now()}
    for name, estimate in found.items():
        row[name], row[f"{name}_low"], row[f"{name}_high"] = (estimate.value, estimate.low,
                                                              estimate.high)
    return row


def annotator_row(schema: LabelSchema, units: Sequence[Sequence[float]],
                  annotators: int, *, resamples: int, seed: int,
                  now: datetime) -> dict[str, Any] | None:
    """The ``annotator_agreement`` row of one schema: Cohen's κ when two people labelled every
    shared target, else Krippendorff's α (interval for numeric schemas, nominal otherwise);
    None when no target has two labels."""
    pairable = [u for u in units if len(u) >= 2]
    if not pairable:
        return None
    metric = "interval" if schema.kind == "numeric" else "nominal"
    statistic = alpha_statistic(pairable, metric)  # type: ignore[arg-type]
    name = "alpha"
    if annotators == 2 and metric == "nominal" and all(len(u) == 2 for u in pairable):
        left = [int(u[0]) for u in pairable]
        right = [int(u[1]) for u in pairable]
        statistic, name = kappa_statistic(left, right), "kappa"
    value = estimates({name: statistic}, len(pairable), resamples=resamples, seed=seed)[name]
    return {"schema_name": schema.name, "metric": name, "annotators": annotators,
            "n": len(pairable), "value": value.value, "value_low": value.low,
            "value_high": value.high, "updated_at": now}


__all__ = ["agreement_row", "annotator_row", "consensus", "verdicts"]
