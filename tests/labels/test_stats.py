"""Agreement statistics against values computed by hand (and published ones), and the
weighted bootstrap against the same statistic on explicitly resampled data.

scipy and scikit-learn are not installed in this project's environment, so the reference
values are worked out here, step by step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracescore.labels import (
    cohen_kappa,
    krippendorff_alpha,
    mean_absolute_error,
    positive_rates,
    spearman,
)
from tracescore.labels._stats import (
    estimates,
    kappa_statistic,
    resample_weights,
    spearman_statistic,
)

# 20 items: people say yes to 11; the judge agrees on 17 (10 yes-yes, 7 no-no), says no to one
# of people's yes and yes to two of people's no.
PEOPLE = [1] * 11 + [0] * 9
JUDGE = [1] * 10 + [0] + [1] * 2 + [0] * 7


def test_cohen_kappa_by_hand() -> None:
    observed = 17 / 20
    expected = (12 / 20) * (11 / 20) + (8 / 20) * (9 / 20)  # judge yes 12, people yes 11
    assert cohen_kappa(PEOPLE, JUDGE) == pytest.approx((observed - expected) / (1 - expected))
    assert cohen_kappa(PEOPLE, JUDGE) == pytest.approx(0.34 / 0.49)


def test_cohen_kappa_three_categories_by_hand() -> None:
    a = ["bad", "bad", "ok", "ok", "good", "good", "good", "ok", "bad", "good"]
    b = ["bad", "ok", "ok", "ok", "good", "good", "ok", "ok", "bad", "bad"]
    observed = 7 / 10
    # a: bad 3, ok 3, good 4; b: bad 3, ok 5, good 2
    expected = (3 * 3 + 3 * 5 + 4 * 2) / 100
    assert cohen_kappa(a, b) == pytest.approx((observed - expected) / (1 - expected))


def test_kappa_is_undefined_for_one_class() -> None:
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None


def test_rates_and_mae_by_hand() -> None:
    tpr, tnr = positive_rates(PEOPLE, JUDGE)
    assert tpr == pytest.approx(10 / 11) and tnr == pytest.approx(7 / 9)
    assert mean_absolute_error([0.1, 0.5, 0.9], [0.0, 1.0, 1.0]) == pytest.approx(0.7 / 3)


def test_spearman_by_hand_with_ties() -> None:
    # ranks of y = [5, 6, 7, 8, 7] are [1, 2, 3.5, 5, 3.5]
    dx = [-2, -1, 0, 1, 2]
    dy = [-2, -1, 0.5, 2, 0.5]
    cov = sum(a * b for a, b in zip(dx, dy, strict=True))
    by_hand = cov / math.sqrt(sum(a * a for a in dx) * sum(b * b for b in dy))
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(8 / math.sqrt(95))
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [4, 4, 4]) is None


def test_krippendorff_alpha_matches_the_published_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units,
    # missing values; α nominal 0.743, interval 0.849.
    rows = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[v for v in unit if v is not None] for unit in zip(*rows, strict=True)]
    assert krippendorff_alpha(units, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "interval") == pytest.approx(0.849, abs=5e-4)


def test_krippendorff_alpha_two_annotators_by_hand() -> None:
    # Nominal α of two annotators over 4 items: pairable values n = 8, categories 0/1.
    units = [[1, 1], [0, 0], [1, 0], [1, 1]]
    # coincidences: o_11 = 4 (two units with 1,1 give 2 each), o_00 = 2, o_01 = o_10 = 1
    n_1, n_0, n = 5, 3, 8
    expected_alpha = 1 - (n - 1) * (1 + 1) / (2 * n_1 * n_0)
    assert krippendorff_alpha(units) == pytest.approx(expected_alpha)


def test_weighted_bootstrap_equals_the_statistic_on_resampled_data() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=40).astype(float)  # many ties
    y = x + rng.normal(0, 1.5, size=40)
    labels = rng.integers(0, 2, size=40)
    guess = (rng.random(40) < 0.7).astype(int)
    [weights] = list(resample_weights(40, 5, seed=11))
    for row in weights:
        drawn = np.repeat(np.arange(40), row.astype(int))
        rho = spearman_statistic(x, y)(row[None, :])[0]
        assert rho == pytest.approx(spearman(x[drawn], y[drawn]))
        kappa = kappa_statistic(labels, guess)(row[None, :])[0]
        assert kappa == pytest.approx(cohen_kappa(list(labels[drawn]), list(guess[drawn])))


def test_intervals_are_seeded_and_hold_the_value() -> None:
    statistic = {"kappa": kappa_statistic(PEOPLE, JUDGE)}
    first = estimates(statistic, 20, resamples=500, seed=0)["kappa"]
    again = estimates(statistic, 20, resamples=500, seed=0)["kappa"]
    other = estimates(statistic, 20, resamples=500, seed=1)["kappa"]
    assert first == again and first != other
    assert first.low is not None and first.high is not None
    assert first.low < first.value < first.high
    wide = first.high - first.low
    many = estimates({"kappa": kappa_statistic(PEOPLE * 10, JUDGE * 10)}, 200,
                     resamples=500, seed=0)["kappa"]
    assert many.value == pytest.approx(first.value)
    assert many.high - many.low < wide / 2  # ten times the data, about a third of the width


def test_counting_equal_pairs_once_gives_the_same_intervals() -> None:
    # The same data as 20 items, or as its 4 distinct (person, judge) pairs with counts.
    pairs = sorted(set(zip(PEOPLE, JUDGE, strict=True)))
    counts = [sum(1 for p in zip(PEOPLE, JUDGE, strict=True) if p == pair) for pair in pairs]
    items = estimates({"kappa": kappa_statistic(PEOPLE, JUDGE)}, 20, resamples=4000, seed=0)
    cells = estimates({"kappa": kappa_statistic([p[0] for p in pairs], [p[1] for p in pairs])},
                      len(pairs), resamples=4000, seed=0, counts=counts)
    assert cells["kappa"].value == pytest.approx(items["kappa"].value)
    assert cells["kappa"].low == pytest.approx(items["kappa"].low, abs=0.05)
    assert cells["kappa"].high == pytest.approx(items["kappa"].high, abs=0.05)
