"""``compare_experiments``: two recorded experiments side by side, scorer by scorer and item by
item, and whether anything regressed (the CI gate of ``tracescore experiments compare``).

Rules: an average is over non-null scores (a null score is an error, never a zero); a pass is
``score >= 0.5`` (``<= 0.5`` for lower-is-better scorers) unless the run gave the scorer a
threshold, and a null never passes; a scorer regressed when its average moved the wrong way by
more than ``threshold`` (a move of exactly the threshold is not a regression) or its share of
errors rose by more than ``threshold``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from ._compare_models import (
    ExperimentComparison,
    ExperimentInfo,
    ItemComparison,
    ItemScoreChange,
    ScorerComparison,
)
from ._errors import EvalValidationError

_EPSILON = 1e-9
_INFO_COLUMNS = ("experiment_id, name, dataset_id, dataset_version, created_at, finished_at, "
                 "status, target_name, metadata, item_count, error_count, verdict")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _bounds(info: ExperimentInfo, scorer_id: str, lower: bool) -> tuple[float, float]:
    given = (info.metadata.get("thresholds") or {}).get(scorer_id)
    if isinstance(given, Mapping):
        return float(given.get("min", 0.0)), float(given.get("max", 1.0))
    return (0.0, 0.5) if lower else (0.5, float("inf"))


def _passes(score: float | None, bounds: tuple[float, float]) -> bool:
    return score is not None and bounds[0] - _EPSILON <= score <= bounds[1] + _EPSILON


def _pass_rate(scores: list[float | None], bounds: tuple[float, float]) -> float | None:
    if not scores:
        return None
    return sum(1 for s in scores if _passes(s, bounds)) / len(scores)


def compare_results(
    baseline: ExperimentInfo,
    baseline_results: Iterable[Mapping[str, Any]],
    candidate: ExperimentInfo,
    candidate_results: Iterable[Mapping[str, Any]],
    *,
    threshold: float = 0.05,
    lower_is_better: Iterable[str] = (),
) -> ExperimentComparison:
    """The comparison of two experiments' ``experiment_results`` rows (pure arithmetic)."""
    from tracescore.scorers import LOWER_IS_BETTER

    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold < 0:
        raise EvalValidationError(f"threshold must be a number >= 0, got {threshold!r}")
    lower_ids = {*LOWER_IS_BETTER, *lower_is_better,
                 *baseline.metadata.get("lower_is_better", ()),
                 *candidate.metadata.get("lower_is_better", ())}
    # (scorer, item) -> rows, per side
    sides: list[dict[str, dict[str, list[Mapping[str, Any]]]]] = []
    for rows in (baseline_results, candidate_results):
        grouped: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(
            lambda: defaultdict(list))
        for row in rows:
            grouped[row["scorer_id"]][row["item_id"]].append(row)
        sides.append(grouped)
    base, cand = sides
    scorers: dict[str, ScorerComparison] = {}
    changes: dict[str, list[ItemScoreChange]] = defaultdict(list)
    outputs: dict[str, list[Any]] = {}
    for scorer_id in sorted({*base, *cand}):
        lower = scorer_id in lower_ids
        sign = -1.0 if lower else 1.0  # sign * (candidate - baseline) < 0 is worse
        b_scores = [r["score"] for rs in base.get(scorer_id, {}).values() for r in rs]
        c_scores = [r["score"] for rs in cand.get(scorer_id, {}).values() for r in rs]
        b_avg = _mean([s for s in b_scores if s is not None])
        c_avg = _mean([s for s in c_scores if s is not None])
        delta = c_avg - b_avg if b_avg is not None and c_avg is not None else None
        b_err = sum(1 for s in b_scores if s is None)
        c_err = sum(1 for s in c_scores if s is None)
        worse = delta is not None and sign * delta < -threshold - _EPSILON
        if b_scores and c_scores:
            error_rise = c_err / len(c_scores) - b_err / len(b_scores)
            worse = worse or error_rise > threshold + _EPSILON
        scorers[scorer_id] = ScorerComparison(
            scorer_id=scorer_id, lower_is_better=lower, baseline_avg=b_avg,
            candidate_avg=c_avg, delta=delta,
            baseline_pass_rate=_pass_rate(b_scores, _bounds(baseline, scorer_id, lower)),
            candidate_pass_rate=_pass_rate(c_scores, _bounds(candidate, scorer_id, lower)),
            baseline_errors=b_err, candidate_errors=c_err, baseline_count=len(b_scores),
            candidate_count=len(c_scores), regressed=worse)
        for item_id, b_rows in base.get(scorer_id, {}).items():
            c_rows = cand.get(scorer_id, {}).get(item_id)
            if not c_rows:
                continue
            b_item = _mean([r["score"] for r in b_rows if r["score"] is not None])
            c_item = _mean([r["score"] for r in c_rows if r["score"] is not None])
            if b_item is None:
                continue
            drop = None if c_item is None else sign * (b_item - c_item)
            if drop is not None and drop <= threshold + _EPSILON:
                continue
            changes[item_id].append(ItemScoreChange(
                scorer_id=scorer_id, baseline_score=b_item, candidate_score=c_item, drop=drop,
                baseline_reason=b_rows[0].get("reason"), candidate_reason=c_rows[0].get("reason"),
                candidate_error=next((r.get("error") for r in c_rows if r.get("error")), None)))
            outputs.setdefault(item_id, [b_rows[0].get("output"), c_rows[0].get("output")])

    def worst(change: ItemScoreChange) -> float:
        return float("inf") if change.drop is None else change.drop

    items = [
        ItemComparison(item_id=item_id, drops=sorted(found, key=worst, reverse=True),
                       baseline_output=_json(outputs[item_id][0]),
                       candidate_output=_json(outputs[item_id][1]))
        for item_id, found in changes.items()
    ]
    items.sort(key=lambda item: (-worst(item.drops[0]), item.item_id))
    return ExperimentComparison(baseline=baseline, candidate=candidate,
                                threshold=float(threshold), scorers=scorers, items=items)


def _json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str) and value[:1] in "[{\"" else value


def _info(row: Mapping[str, Any]) -> ExperimentInfo:
    """An ``experiments`` row as ``ExperimentInfo``, tolerating odd stored metadata (text, a
    list, broken JSON, written before writes were validated): it is kept under ``"value"``."""
    try:
        metadata = _json(row.get("metadata"))
    except orjson.JSONDecodeError:
        metadata = row.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        metadata = {"value": metadata}
    return ExperimentInfo.model_validate({**row, "metadata": metadata or {}})


def find_experiment(store: Any, ref: Any) -> ExperimentInfo:
    """An experiment by id, or the newest one with that name (an ``EvalResult`` works too)."""
    ref = getattr(ref, "experiment_id", ref)
    if not isinstance(ref, str) or not ref:
        raise EvalValidationError(
            f"name an experiment by its name or id (or pass the EvalResult of a run with "
            f"experiment=...); got {ref!r}"
        )
    rows = store.read(
        f"SELECT {_INFO_COLUMNS} FROM experiments WHERE experiment_id = ? OR name = ? "
        "ORDER BY experiment_id = ? DESC, created_at DESC LIMIT 1",
        [ref, ref, ref],
    )
    if not rows:
        raise EvalValidationError(
            f"no experiment named {ref!r} (nor with that id); list them with "
            "`tracescore experiments list`"
        )
    return _info(rows[0])


def compare_in_store(store: Any, baseline: Any, candidate: Any, *, threshold: float,
                     lower_is_better: Sequence[str] = ()) -> ExperimentComparison:
    """``compare_experiments`` on an open ``Store``."""
    infos = [find_experiment(store, ref) for ref in (baseline, candidate)]
    results = [store.read("SELECT * FROM experiment_results WHERE experiment_id = ?",
                          [info.experiment_id]) for info in infos]
    return compare_results(infos[0], results[0], infos[1], results[1], threshold=threshold,
                           lower_is_better=lower_is_better)


def list_in_store(store: Any, *, dataset: str | None = None) -> list[ExperimentInfo]:
    """Experiments of an open ``Store``, newest first (of one dataset, by name, if given)."""
    where, params = "", []
    if dataset is not None:
        where = ("WHERE dataset_id IN (SELECT dataset_id FROM datasets WHERE name = ? "
                 "OR dataset_id = ?)")
        params = [dataset, dataset]
    rows = store.read(
        f"SELECT {_INFO_COLUMNS} FROM experiments {where} ORDER BY created_at DESC", params)
    return [_info(row) for row in rows]


def _is_url(store: Any) -> bool:
    return isinstance(store, str) and store.startswith(("http://", "https://"))


def _http_get(store: str, path: str, params: dict[str, Any], api_key: str | None) -> Any:
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    response = httpx.get(f"{store.rstrip('/')}{path}", params=params, headers=headers,
                         timeout=60.0)
    if response.status_code >= 400:
        try:
            message = response.json()["error"]["message"]
        except Exception:
            message = response.text[:300]
        raise EvalValidationError(f"GET {path} answered {response.status_code}: {message}")
    return response.json()


def compare_experiments(store: Any, baseline: Any, candidate: Any, *,
                        threshold: float = 0.05, lower_is_better: Sequence[str] = (),
                        api_key: str | None = None) -> ExperimentComparison:
    """Compare experiment ``candidate`` with ``baseline`` (names, ids or ``EvalResult``).

    A name means the newest experiment with that name. ``store`` is a database path, an open
    ``Store`` or a server URL (``api_key=`` for a server with keys). ``lower_is_better`` adds
    scorer ids to the catalogue's lower-is-better ones (hallucination, bias, toxicity).
    """
    if _is_url(store):
        body = _http_get(store, "/api/experiments/compare", {
            "baseline": getattr(baseline, "experiment_id", baseline),
            "candidate": getattr(candidate, "experiment_id", candidate),
            "threshold": threshold, "lower_is_better": list(lower_is_better)}, api_key)
        return ExperimentComparison.model_validate(body)
    from tracescore.store import opened_store

    with opened_store(store) as opened:
        return compare_in_store(opened, baseline, candidate, threshold=threshold,
                                lower_is_better=lower_is_better)


def list_experiments(store: Any, *, dataset: str | None = None,
                     api_key: str | None = None) -> list[ExperimentInfo]:
    """Recorded experiments, newest first; ``dataset=`` keeps one dataset's."""
    if _is_url(store):
        params = {"dataset": dataset} if dataset else {}
        body = _http_get(store, "/api/experiments", params, api_key)
        return [ExperimentInfo.model_validate(row) for row in body["experiments"]]
    from tracescore.store import opened_store

    with opened_store(store) as opened:
        return list_in_store(opened, dataset=dataset)


__all__ = ["compare_experiments", "compare_in_store",
           "compare_results", "find_experiment", "list_experiments", "list_in_store"]
