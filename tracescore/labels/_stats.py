"""Agreement statistics with bootstrap intervals, in numpy: Cohen's κ, Spearman's ρ, mean
absolute error, true/false positive rates, Krippendorff's α.

Every statistic is written over *weights*: a bootstrap resample of n pairs is a row of counts
(how often each pair was drawn), and the plain estimate is the row of ones. So one matrix
product computes a statistic for a whole block of resamples, with no per-resample Python loop:
κ from weighted confusion shares, ρ from weighted mid-ranks (the ranks each resample's values
would get, ties averaged), α from each unit's within-unit sums. Intervals are the 2.5 and 97.5
percentiles of ``resamples`` resamples drawn with ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Array = Any
"""A numpy array (numpy's own types are not worth mypy strict's noise here)."""
Statistic = Callable[[Array], Array]
Values = Sequence[float] | Sequence[int] | Array
"""Numbers: a list or a numpy array."""
"""Weights (resamples × n) → one value per resample (NaN where undefined)."""

BLOCK_CELLS = 1_000_000
"""Resamples are drawn in blocks of about this many counts (8 MB of float64 per matrix)."""
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


@dataclass(frozen=True, slots=True)
class Estimate:
    """A statistic's value with its bootstrap 95 % interval (None where undefined)."""

    value: float | None
    low: float | None = None
    high: float | None = None


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if np.isfinite(number) else None


def resample_weights(n: int, resamples: int, seed: int) -> Iterator[Array]:
    """Blocks of bootstrap count rows: row r holds how often each of the n items was drawn."""
    rng = np.random.default_rng(seed)
    per_block = max(1, BLOCK_CELLS // max(n, 1))
    left = resamples
    while left > 0:
        rows = min(per_block, left)
        drawn = rng.integers(0, n, size=(rows, n))
        flat = (drawn + np.arange(rows)[:, None] * n).ravel()
        yield np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)
        left -= rows


def cell_weights(counts: Array, resamples: int, seed: int) -> Iterator[Array]:
    """Blocks of bootstrap count rows over distinct items that occur ``counts`` times each:
    drawing n items with replacement is drawing the distinct items' counts from a multinomial
    with their shares (the same resamples in distribution, at the cost of the distinct
    items, not of n)."""
    rng = np.random.default_rng(seed)
    counts = np.asarray(counts, dtype=np.float64)
    total = int(counts.sum())
    shares = counts / counts.sum()
    per_block = max(1, BLOCK_CELLS // max(len(counts), 1))
    left = resamples
    while left > 0:
        rows = min(per_block, left)
        yield rng.multinomial(total, shares, size=rows).astype(np.float64)
        left -= rows


def estimates(statistics: dict[str, Statistic], n: int, *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED, counts: Values | None = None) -> dict[str, Estimate]:
    """Each statistic's value over all n items and its percentile interval over ``resamples``
    bootstrap resamples (the same resamples for every statistic). With ``counts``, the
    statistics are over distinct items occurring that often each (``n`` of them)."""
    base = np.ones((1, n)) if counts is None else np.asarray(counts, dtype=np.float64)[None, :]
    values = {name: _finite(fn(base)[0]) for name, fn in statistics.items()}
    if base.sum() < 2 or resamples < 1:
        return {name: Estimate(value) for name, value in values.items()}
    drawn: dict[str, list[Array]] = {name: [] for name in statistics}
    blocks = (resample_weights(n, resamples, seed) if counts is None
              else cell_weights(base[0], resamples, seed))
    for weights in blocks:
        for name, fn in statistics.items():
            drawn[name].append(fn(weights))
    out = {}
    for name, value in values.items():
        sample = np.concatenate(drawn[name])
        sample = sample[np.isfinite(sample)]
        if value is None or sample.size == 0:
            out[name] = Estimate(value)
            continue
        low, high = np.percentile(sample, [2.5, 97.5])
        out[name] = Estimate(value, float(low), float(high))
    return out


# -- statistics over weights -------------------------------------------------------------------


def _ratio(numerator: Array, denominator: Array) -> Array:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator != 0, numerator / np.where(denominator == 0, 1, denominator),
                        np.nan)


def kappa_statistic(a: Values, b: Values) -> Statistic:
    """Cohen's κ of two raters' category codes (unweighted)."""
    left, right = np.asarray(a), np.asarray(b)
    categories = np.union1d(left, right)
    one_left = (left[:, None] == categories[None, :]).astype(np.float64)
    one_right = (right[:, None] == categories[None, :]).astype(np.float64)
    same = (left == right).astype(np.float64)

    def kappa(weights: Array) -> Array:
        total = weights.sum(axis=1)
        observed = _ratio(weights @ same, total)
        expected = (_ratio(weights @ one_left, total[:, None])
                    * _ratio(weights @ one_right, total[:, None])).sum(axis=1)
        return _ratio(observed - expected, 1.0 - expected)

    return kappa


def rate_statistic(truth: Values, predicted: Values, *, positive: bool) -> Statistic:
    """True positive rate (``positive``) or true negative rate of binary verdicts."""
    wanted = 1 if positive else 0
    base = (np.asarray(truth) == wanted).astype(np.float64)
    hits = base * (np.asarray(predicted) == wanted)

    def rate(weights: Array) -> Array:
        return _ratio(weights @ hits, weights @ base)

    return rate


def mae_statistic(x: Values, y: Values) -> Statistic:
    """Mean absolute difference of paired numbers."""
    gaps = np.abs(np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64))

    def mae(weights: Array) -> Array:
        return _ratio(weights @ gaps, weights.sum(axis=1))

    return mae


def _midranks(weights: Array, values: Array) -> Array:
    """The rank each value takes in each weighted sample (ties get their average rank)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(values)])
    group_weight = np.add.reduceat(weights[:, order], starts, axis=1)
    before = np.cumsum(group_weight, axis=1) - group_weight
    mid = before + (group_weight + 1.0) / 2.0
    ranks = np.empty_like(weights)
    ranks[:, order] = np.repeat(mid, sizes, axis=1)
    return ranks


def spearman_statistic(x: Values, y: Values) -> Statistic:
    """Spearman's ρ: the Pearson correlation of the mid-ranks of each sample."""
    left = np.asarray(x, dtype=np.float64)
    right = np.asarray(y, dtype=np.float64)

    def rho(weights: Array) -> Array:
        total = weights.sum(axis=1, keepdims=True)
        rx, ry = _midranks(weights, left), _midranks(weights, right)
        dx = rx - _ratio((weights * rx).sum(axis=1, keepdims=True), total)
        dy = ry - _ratio((weights * ry).sum(axis=1, keepdims=True), total)
        cov = (weights * dx * dy).sum(axis=1)
        spread = np.sqrt((weights * dx * dx).sum(axis=1) * (weights * dy * dy).sum(axis=1))
        return _ratio(cov, np.where(spread < 1e-12, 0.0, spread))

    return rho


def alpha_statistic(units: Sequence[Sequence[float]],
                    metric: Literal["nominal", "interval"] = "nominal") -> Statistic:
    """Krippendorff's α over units (the values several annotators gave one item); units with
    fewer than two values are not pairable and left out. Weights are per unit."""
    kept = [np.asarray(u, dtype=np.float64) for u in units if len(u) >= 2]
    counts = np.array([len(u) for u in kept], dtype=np.float64)
    if metric == "nominal":
        categories = np.unique(np.concatenate(kept)) if kept else np.zeros(0)
        per_unit = np.array([[np.sum(u == c) for c in categories] for u in kept],
                            dtype=np.float64).reshape(len(kept), len(categories))
        within = (counts ** 2 - (per_unit ** 2).sum(axis=1)) / (counts - 1)

        def nominal(weights: Array) -> Array:
            total = weights @ counts
            spread = total ** 2 - ((weights @ per_unit) ** 2).sum(axis=1)
            return 1.0 - (total - 1.0) * _ratio(weights @ within, spread)

        return nominal
    sums = np.array([u.sum() for u in kept])
    squares = np.array([(u * u).sum() for u in kept])
    within = (2 * counts * squares - 2 * sums ** 2) / (counts - 1)

    def interval(weights: Array) -> Array:
        total = weights @ counts
        spread = 2 * total * (weights @ squares) - 2 * (weights @ sums) ** 2
        return 1.0 - (total - 1.0) * _ratio(weights @ within, spread)

    return interval


# -- plain values ------------------------------------------------------------------------------


def _plain(statistic: Statistic, n: int) -> float | None:
    return _finite(statistic(np.ones((1, n)))[0]) if n else None


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Cohen's κ of two raters over the same items (None when only one class occurs)."""
    codes = {v: i for i, v in enumerate(sorted({*a, *b}, key=str))}
    return _plain(kappa_statistic([codes[v] for v in a], [codes[v] for v in b]), len(a))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (None when either side is constant)."""
    return _plain(spearman_statistic(x, y), len(x))


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Mean absolute difference."""
    return _plain(mae_statistic(x, y), len(x))


def positive_rates(truth: Sequence[int], predicted: Sequence[int]
                   ) -> tuple[float | None, float | None]:
    """(true positive rate, true negative rate) of binary verdicts against the truth."""
    n = len(truth)
    return (_plain(rate_statistic(truth, predicted, positive=True), n),
            _plain(rate_statistic(truth, predicted, positive=False), n))


def krippendorff_alpha(units: Sequence[Sequence[float]],
                       metric: Literal["nominal", "interval"] = "nominal") -> float | None:
    """Krippendorff's α of several annotators (each unit: the values given to one item)."""
    return _plain(alpha_statistic(units, metric), sum(1 for u in units if len(u) >= 2))


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Estimate",
    "alpha_statistic",
    "cell_weights",
    "cohen_kappa",
    "estimates",
    "kappa_statistic",
    "krippendorff_alpha",
    "mae_statistic",
    "mean_absolute_error",
    "positive_rates",
    "rate_statistic",
    "resample_weights",
    "spearman",
    "spearman_statistic",
]
