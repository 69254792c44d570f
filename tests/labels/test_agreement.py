"""``judge_agreement`` in a real store: the values a hand computation gives, per version and
schema kind, refreshed only when labels or scores changed, and annotators' own agreement."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tracescore import labels
from tracescore.labels import AgreementKeeper

from .conftest import write_scores

PEOPLE = [True] * 11 + [False] * 9
JUDGE = [1.0] * 10 + [0.0] + [1.0] * 2 + [0.0] * 7  # agrees on 17 of 20


def _label(store: Any, ids: list[str], values: list[Any], *, schema: str = "ok",
            annotator: str = "ann") -> None:
    labels.add(store, [{"trace_id": t, "schema": schema, "value": v, "annotator": annotator}
                       for t, v in zip(ids, values, strict=True)])


def test_boolean_agreement_and_its_upkeep(store: Any, traces: Any) -> None:
    ids = traces(20)
    write_scores(store, ids, JUDGE)
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    _label(store, ids, PEOPLE)
    keeper = AgreementKeeper(resamples=300, seed=0)
    assert keeper.refresh(store).schemas_recomputed == ["ok"]
    [row] = labels.agreement(store)
    assert (row.scorer_id, row.scorer_version, row.n, row.threshold) == ("judge", "v1", 20, 0.5)
    assert row.kappa == pytest.approx(0.34 / 0.49)
    assert row.kappa_low < row.kappa < row.kappa_high
    assert (row.tpr, row.tnr) == (pytest.approx(10 / 11), pytest.approx(7 / 9))
    assert row.spearman is None and row.mae is None
    assert row.text.startswith("agrees with people κ 0.69 [") and row.text.endswith("n 20")
    assert keeper.refresh(store).schemas_recomputed == []  # nothing changed: nothing redone
    _label(store, ids[10:11], [False])  # the one people-yes the judge said no to: now agreed
    assert keeper.refresh(store).schemas_recomputed == ["ok"]
    [row] = labels.agreement(store)
    # 18 of 20 agree; judge yes 12, people yes 10
    assert row.kappa == pytest.approx((0.9 - (0.6 * 0.5 + 0.4 * 0.5)) / (1 - 0.5))
    write_scores(store, ids, [0.0 if p else 1.0 for p in PEOPLE], version="v2")
    assert keeper.refresh(store).schemas_recomputed == ["ok"]
    by_version = {r.scorer_version: r for r in labels.agreement(store, scorer_id="judge")}
    assert by_version["v2"].kappa < 0 < by_version["v1"].kappa
    found = labels.agreement_for(store.read, [("judge", "v1"), ("judge", "v9")])
    assert list(found) == [("judge", "v1")] and "κ 0.80" in found[("judge", "v1")]["text"]


def test_numeric_labels_by_hand(store: Any, traces: Any) -> None:
    ids = traces(5)
    stars = [1, 2, 3, 4, 5]
    scores = [0.1, 0.2, 0.9, 0.6, 0.7]
    write_scores(store, ids, scores)
    labels.create_schema(store, {"name": "stars", "kind": "numeric", "min_value": 1,
                                 "max_value": 5, "scorer_id": "judge", "threshold": 0.6})
    _label(store, ids, stars, schema="stars")
    labels.refresh_agreement(store, resamples=0)
    [row] = labels.agreement(store)
    normal = [(s - 1) / 4 for s in stars]  # 0, .25, .5, .75, 1
    assert row.mae == pytest.approx(sum(abs(a - b) for a, b in
                                        zip(scores, normal, strict=True)) / 5)
    # ranks of the scores: 1, 2, 5, 3, 4 against 1..5
    dx = [-2, -1, 0, 1, 2]
    dy = [-2, -1, 2, 0, 1]
    assert row.spearman == pytest.approx(
        sum(a * b for a, b in zip(dx, dy, strict=True)) / math.sqrt(10 * 10))
    # at 0.6: people yes for 4 and 5 stars; the judge yes for 0.9, 0.6, 0.7 → tpr 1, tnr 2/3
    assert (row.tpr, row.tnr, row.threshold) == (1.0, pytest.approx(2 / 3), 0.6)
    observed, expected = 4 / 5, (3 / 5) * (2 / 5) + (2 / 5) * (3 / 5)
    assert row.kappa == pytest.approx((observed - expected) / (1 - expected))
    assert row.kappa_low is None  # resamples=0: no interval


def test_categorical_labels_map_scores_to_categories(store: Any, traces: Any) -> None:
    ids = traces(4)
    write_scores(store, ids, [0.0, 0.45, 0.55, 1.0])  # → bad, ok, ok, good
    labels.create_schema(store, {"name": "tone", "kind": "categorical",
                                 "values": ["bad", "ok", "good"], "scorer_id": "judge"})
    _label(store, ids, ["bad", "ok", "good", "good"], schema="tone")
    labels.refresh_agreement(store, resamples=0)
    [row] = labels.agreement(store)
    observed = 3 / 4
    expected = (1 * 1 + 1 * 2 + 2 * 1) / 16  # people bad 1, ok 1, good 2; judge 1, 2, 1
    assert row.kappa == pytest.approx((observed - expected) / (1 - expected))
    assert row.tpr is None  # three categories: no positive class


def test_several_annotators_give_one_consensus(store: Any, traces: Any) -> None:
    ids = traces(4)
    write_scores(store, ids, [1.0, 1.0, 0.0, 0.0])
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    _label(store, ids, [True, True, False, True], annotator="ann")
    _label(store, ids, [True, False, False, False], annotator="bo")
    _label(store, ids[:3], [True, True, False], annotator="cy")
    labels.refresh_agreement(store, resamples=0)
    [row] = labels.agreement(store)
    # consensus: yes (3-0), yes (2-1), no (3-0), tie on the last (1-1): left out
    assert row.n == 3 and row.kappa == pytest.approx(1.0)
    [people] = labels.annotator_agreement(store)
    assert (people["metric"], people["annotators"], people["n"]) == ("alpha", 3, 4)
    units = [[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 0]]
    assert people["value"] == pytest.approx(labels.krippendorff_alpha(units))


def test_two_annotators_get_cohens_kappa(store: Any, traces: Any) -> None:
    ids = traces(4)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    _label(store, ids, [True, True, False, False], annotator="ann")
    _label(store, ids, [True, False, False, False], annotator="bo")
    labels.refresh_agreement(store, resamples=0)
    [people] = labels.annotator_agreement(store)
    assert people["metric"] == "kappa"
    assert people["value"] == pytest.approx(labels.cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]))
    assert labels.agreement(store) == []  # the schema checks no scorer


def test_span_session_and_item_labels_pair_with_their_scores(store: Any, traces: Any) -> None:
    [trace] = traces(1)
    span = "0123456789abcdef"
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    store.write_scores_sync([
        {"trace_id": trace, "span_id": span, "scorer_id": "judge", "scorer_version": "v1",
         "status": "success", "score": 1.0},
        {"trace_id": trace, "span_id": "session:3", "session_id": "conv-1",
         "scorer_id": "judge", "scorer_version": "v1", "status": "success", "score": 0.0},
        {"scorer_id": "judge", "scorer_version": "v1", "status": "success", "score": 1.0,
         "source": "canary", "metadata": {"item_id": "item-1"}},
    ])
    labels.add(store, [
        {"trace_id": trace, "span_id": span, "schema": "ok", "value": True},
        {"session_id": "conv-1", "schema": "ok", "value": True},
        {"item_id": "item-1", "schema": "ok", "value": True},
    ])
    labels.refresh_agreement(store, resamples=0)
    [row] = labels.agreement(store)
    assert row.n == 3 and (row.tpr, row.tnr) == (pytest.approx(2 / 3), None)


def test_gating_warnings(store: Any, traces: Any) -> None:
    ids = traces(20)
    write_scores(store, ids, JUDGE)
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    _label(store, ids, PEOPLE)
    labels.refresh_agreement(store, resamples=200)
    warnings = labels.agreement_warnings(store, ["judge", "other"], floor=0.8)
    assert warnings[0].startswith("scorer 'judge' gates this result but agrees with people "
                                  "κ 0.69 [")
    assert warnings[0].endswith("below the floor κ 0.8")
    assert "scorer 'other' gates this result but its agreement with people is unknown" in \
        warnings[1]
    assert labels.agreement_warnings(store, ["judge"], floor=0.5) == []


async def test_a_monitor_watches_a_judges_agreement(store: Any, traces: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from tracescore.live import LiveScheduler, Monitors, Registry, parse_monitor_entries

    ids = traces(20)
    write_scores(store, ids, JUDGE)
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    [entry] = parse_monitor_entries([{"id": "trust", "scorer": "judge", "aggregate": "kappa",
                                      "op": "lt", "threshold": 0.8, "min_samples": 10}])
    live = LiveScheduler(store, Registry(), monitors=Monitors([entry]))
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(minutes=5)
    assert await live.monitors.evaluate(live, later) == []  # no agreement kept yet: no event
    _label(store, ids, PEOPLE)
    labels.refresh_agreement(store, resamples=0)
    [event] = await live.monitors.evaluate(live, later + timedelta(minutes=5))
    assert (event["state"], event["samples"]) == ("breached", 20)
    assert event["value"] == pytest.approx(0.34 / 0.49)
