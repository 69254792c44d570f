"""``judge_agreement`` and ``annotator_agreement``: how each judge version agrees with people,
and how people agree with each other, kept up to date cheaply.

For every label schema that names a scorer, each labelled target is paired with the newest
successful score of each version of that scorer on it (a trace label with the trace's score, a
span label with the span's, a session label with the session scorer's, an item label with the
canary score of the item). Several annotators of one target give one consensus label: the most
frequent value (a tie leaves the target out) or, for numeric schemas, the mean.

``AgreementKeeper.refresh`` recomputes a schema only when its labels changed (their count or
newest ``created_at``) or its scorer wrote a score since the last pass; otherwise a pass costs
two small aggregate reads. The statistics and their intervals come from ``_stats``.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ._labels import list_schemas, utc_now
from ._models import Agreement, LabelSchema, agreement_text, kappa_text
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

log = logging.getLogger(__name__)

_TARGET_KEY = """CASE target_type WHEN 'span' THEN 'span:' || trace_id || '/' || span_id
    WHEN 'session' THEN 'session:' || session_id WHEN 'item' THEN 'item:' || item_id
    ELSE 'trace:' || trace_id END"""

CURRENT_SQL = f"""
SELECT {_TARGET_KEY} AS key, annotator,
       arg_max(numeric_value, (created_at, label_id)) AS v
FROM labels WHERE schema_name = ? GROUP BY ALL
"""
"""Each annotator's current value of each target of one schema (a hash aggregate: cheaper
than the ``current_labels`` view's window over every label)."""

LABELS_SQL = f"""
SELECT {_TARGET_KEY} AS key, list(numeric_value ORDER BY annotator) AS "values",
       list(annotator ORDER BY annotator) AS annotators,
       list(comment ORDER BY annotator) FILTER (WHERE comment IS NOT NULL) AS comments
FROM current_labels WHERE schema_name = ? GROUP BY ALL
"""

def paired_scores_sql(columns: str) -> str:
    """Each labelled target of schema ``$schema`` joined with the successful scores of scorer
    ``$scorer`` on it, as ``matched(key, scorer_version, created_at, <columns>)``; the caller
    adds the final SELECT. (A trace label pairs with the trace's scores, a span label with the
    span's, a session label with the session scorer's, an item label with canary scores.)"""
    picked = ", ".join(f"s.{c.strip()}" for c in columns.split(","))
    return f"""
WITH lab AS (SELECT DISTINCT target_type, trace_id, span_id, session_id, item_id
             FROM labels WHERE schema_name = $schema),
sc AS (SELECT * FROM scores
       WHERE scorer_id = $scorer AND status = 'success' AND score IS NOT NULL),
matched AS (
    SELECT 'trace:' || l.trace_id AS key, s.scorer_version, s.created_at, {picked}
    FROM lab l JOIN sc s ON s.trace_id = l.trace_id
    WHERE l.target_type = 'trace' AND (s.span_id IS NULL OR s.span_id NOT LIKE 'session:%')
    UNION ALL
    SELECT 'span:' || l.trace_id || '/' || l.span_id, s.scorer_version, s.created_at, {picked}
    FROM lab l JOIN sc s ON s.trace_id = l.trace_id AND s.span_id = l.span_id
    WHERE l.target_type = 'span'
    UNION ALL
    SELECT 'session:' || l.session_id, s.scorer_version, s.created_at, {picked}
    FROM lab l JOIN sc s ON s.session_id = l.session_id
    WHERE l.target_type = 'session' AND s.span_id LIKE 'session:%'
    UNION ALL
    SELECT 'item:' || l.item_id, s.scorer_version, s.created_at, {picked}
    FROM lab l JOIN sc s ON json_extract_string(s.metadata, '$.item_id') = l.item_id
    WHERE l.target_type = 'item' AND s.source = 'canary'
)"""


PAIRS_SQL = paired_scores_sql("score") + f"""
, paired AS (SELECT key, scorer_version, arg_max(score, created_at) AS score
             FROM matched GROUP BY ALL),
votes AS (SELECT key, v, count(*) AS c FROM ({CURRENT_SQL.replace("?", "$schema")})
          GROUP BY ALL),
ranked AS (SELECT *, max(c) OVER (PARTITION BY key) AS top FROM votes),
people AS (SELECT key, sum(v * c) / sum(c) AS mean, min(v) FILTER (WHERE c = top) AS mode,
                  count(*) FILTER (WHERE c = top) AS leaders
           FROM ranked GROUP BY key)
SELECT p.scorer_version, CASE WHEN $numeric THEN h.mean ELSE h.mode END AS label, p.score
FROM paired p JOIN people h USING (key)
WHERE $numeric OR h.leaders = 1
ORDER BY p.scorer_version
"""
"""Each (scorer version, labelled target)'s newest score with the people's consensus label:
the mean for numeric schemas, else the most frequent value (a tie leaves the target out)."""

UNITS_SQL = f"""
SELECT list(v ORDER BY annotator) AS "values" FROM ({CURRENT_SQL})
GROUP BY key HAVING count(*) >= 2
"""
ANNOTATORS_SQL = "SELECT count(DISTINCT annotator) AS n FROM labels WHERE schema_name = ?"

LABEL_MARKS_SQL = """
SELECT schema_name, count(*) AS labels_count, max(created_at) AS labels_through
FROM labels GROUP BY schema_name
"""
STORED_MARKS_SQL = """
SELECT schema_name, max(labels_count) AS labels_count, max(labels_through) AS labels_through,
       max(scores_through) AS scores_through
FROM judge_agreement GROUP BY schema_name
"""
ANNOTATOR_MARKS_SQL = "SELECT schema_name, labels_count, labels_through FROM annotator_agreement"

AGREEMENT_COLUMNS = tuple(Agreement.model_fields)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC).replace(tzinfo=None)


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


@dataclass
class RefreshReport:
    """What one ``refresh`` pass did."""

    schemas_checked: int = 0
    schemas_recomputed: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    """The ``judge_agreement`` rows written in this pass."""


class AgreementKeeper:
    """Keeps ``judge_agreement`` and ``annotator_agreement`` up to date (``refresh``).

    Args:
        resamples: bootstrap resamples behind each interval.
        seed: the resamples' seed.
    """

    def __init__(self, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
        self.resamples = resamples
        self.seed = seed
        self._memo: dict[str, tuple[Any, ...]] = {}
        self._lock = threading.Lock()

    def refresh(self, store: Any, *, force: bool = False,
                now: datetime | None = None) -> RefreshReport:
        """Recompute what changed since the last pass (everything with ``force``). Passes run
        one at a time (the live scorer's and an API request's share one keeper)."""
        with self._lock:
            return self._refresh(store, force=force, now=now or utc_now())

    def _refresh(self, store: Any, *, force: bool, now: datetime) -> RefreshReport:
        report = RefreshReport()
        schemas = list_schemas(store)
        if not schemas:
            return report
        marks = {r["schema_name"]: r for r in store.read(LABEL_MARKS_SQL)}
        stored = {r["schema_name"]: r for r in store.read(STORED_MARKS_SQL)}
        people = {r["schema_name"]: r for r in store.read(ANNOTATOR_MARKS_SQL)}
        checked = [s for s in schemas if s.scorer_id]
        newest = self._newest_scores(store, checked, stored)
        for schema in schemas:
            mark = marks.get(schema.name) or {"labels_count": 0, "labels_through": None}
            report.schemas_checked += 1
            if force or _differs(people.get(schema.name), mark):
                self._annotators(store, schema, mark, now)
            if not schema.scorer_id:
                continue
            before = stored.get(schema.name)
            scores_through = newest.get(schema.scorer_id) or (before or {}).get("scores_through")
            if not force and before is not None and not _differs(before, mark) and (
                    scores_through == before["scores_through"]):
                continue
            if not force and before is None and not mark["labels_count"]:
                continue
            seen = (mark["labels_count"], mark["labels_through"], scores_through)
            if not force and self._memo.get(schema.name) == seen:
                continue  # nothing paired last time, and nothing changed since
            rows = self._judge_rows(store, schema, now)
            if not rows:
                self._memo[schema.name] = seen
            for row in rows:
                row.update(labels_count=mark["labels_count"],
                           labels_through=mark["labels_through"], scores_through=scores_through)
            self._write_judge(store, schema.name, rows)
            report.schemas_recomputed.append(schema.name)
            report.rows.extend(rows)
        return report

    def _newest_scores(self, store: Any, schemas: Sequence[LabelSchema],
                       stored: Mapping[str, Mapping[str, Any]]) -> dict[str, datetime]:
        """The newest score of each checked scorer written since the oldest stored mark (a
        read DuckDB answers from the newest row groups only)."""
        ids = sorted({s.scorer_id for s in schemas if s.scorer_id})
        if not ids:
            return {}
        marks = [r["scores_through"] for r in stored.values() if r["scores_through"] is not None]
        since = min(marks) if marks and len(stored) >= len(schemas) else EPOCH
        rows = store.read(
            "SELECT scorer_id, max(created_at) AS newest FROM scores WHERE created_at >= ? "
            "AND list_contains(?::VARCHAR[], scorer_id) GROUP BY scorer_id", [since, ids])
        return {r["scorer_id"]: r["newest"] for r in rows}

    def _judge_rows(self, store: Any, schema: LabelSchema, now: datetime
                    ) -> list[dict[str, Any]]:
        cursor = store.cursor()
        try:
            found = cursor.execute(PAIRS_SQL, {"schema": schema.name,
                                               "scorer": schema.scorer_id,
                                               "numeric": schema.kind == "numeric"}
                                   ).fetchnumpy()
        finally:
            cursor.close()
        versions = np.asarray(found["scorer_version"], dtype=object)
        labels = np.asarray(found["label"], dtype=np.float64)
        scores = np.asarray(found["score"], dtype=np.float64)
        assert schema.scorer_id is not None
        rows = []
        for version in sorted(set(versions.tolist())):
            mine = versions == version
            rows.append(agreement_row(schema, schema.scorer_id, str(version), labels[mine],
                                      scores[mine], resamples=self.resamples, seed=self.seed,
                                      now=now))
        return rows

    def _annotators(self, store: Any, schema: LabelSchema, mark: Mapping[str, Any],
                    now: datetime) -> None:
        units = [r["values"] for r in store.read(UNITS_SQL, [schema.name])]
        everyone = int(store.read(ANNOTATORS_SQL, [schema.name])[0]["n"])
        row = annotator_row(schema, units, everyone, resamples=self.resamples,
                            seed=self.seed, now=now)
        if row is None:
            row = {"schema_name": schema.name, "annotators": everyone, "n": 0,
                   "updated_at": now}
        row.update(labels_count=mark["labels_count"], labels_through=mark["labels_through"])
        from tracescore.store import insert_arrow, rows_table

        table = rows_table("annotator_agreement", [row])

        def write(conn: Any) -> None:
            conn.execute("DELETE FROM annotator_agreement WHERE schema_name = ?", [schema.name])
            insert_arrow(conn, "annotator_agreement", table)

        store.write_sync(write)

    @staticmethod
    def _write_judge(store: Any, schema_name: str, rows: list[dict[str, Any]]) -> None:
        from tracescore.store import insert_arrow, rows_table

        table = rows_table("judge_agreement", rows) if rows else None

        def write(conn: Any) -> None:
            conn.execute("DELETE FROM judge_agreement WHERE schema_name = ?", [schema_name])
            if table is not None:
                insert_arrow(conn, "judge_agreement", table)

        store.write_sync(write)


def _differs(stored: Mapping[str, Any] | None, mark: Mapping[str, Any]) -> bool:
    if stored is None:
        return bool(mark["labels_count"])
    return bool(stored["labels_count"] != mark["labels_count"]
                or stored["labels_through"] != mark["labels_through"])


def refresh_agreement(store: Any, *, force: bool = False, resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> RefreshReport:
    """Bring ``judge_agreement`` and ``annotator_agreement`` up to date (one pass)."""
    return AgreementKeeper(resamples=resamples, seed=seed).refresh(store, force=force)


def _agreement_of(row: Mapping[str, Any]) -> Agreement:
    return Agreement.model_validate({k: row.get(k) for k in AGREEMENT_COLUMNS})


def agreement(store: Any, *, scorer_id: str | None = None, schema_name: str | None = None,
              refresh: bool = False) -> list[Agreement]:
    """The ``judge_agreement`` rows (optionally of one scorer or schema), brought up to date
    first with ``refresh``."""
    if refresh:
        refresh_agreement(store)
    where, params = ["TRUE"], []
    if scorer_id is not None:
        where.append("scorer_id = ?")
        params.append(scorer_id)
    if schema_name is not None:
        where.append("schema_name = ?")
        params.append(schema_name)
    rows = store.read(f"SELECT * FROM judge_agreement WHERE {' AND '.join(where)} "
                      "ORDER BY scorer_id, schema_name, updated_at, scorer_version", params)
    return [_agreement_of(r) for r in rows]


def annotator_agreement(store: Any, *, schema_name: str | None = None) -> list[dict[str, Any]]:
    """How annotators agree with each other, per schema (κ for two, Krippendorff's α for more)."""
    where, params = ("WHERE schema_name = ?", [schema_name]) if schema_name else ("", [])
    return [_plain(r) for r in store.read(
        f"SELECT * FROM annotator_agreement {where} ORDER BY schema_name", params)]


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() + "Z" if isinstance(v, datetime) else v) for k, v in row.items()}


def agreement_json(item: Agreement) -> dict[str, Any]:
    """An ``Agreement`` as the API sends it, with its one-line ``text``."""
    return {**item.model_dump(mode="json"), "text": item.text}


def agreement_for(read: Any, pairs: Iterable[tuple[str, str]]
                  ) -> dict[tuple[str, str], dict[str, Any]]:
    """(scorer id, version) → its agreement object (the schema with the most labelled targets
    when several check it); pairs without labels are left out. ``read(sql, params)`` runs a
    store read."""
    wanted = sorted({(a, b) for a, b in pairs if a is not None and b is not None})
    if not wanted:
        return {}
    rows = read(
        "SELECT * FROM judge_agreement WHERE list_contains(?::VARCHAR[], scorer_id || chr(0) || "
        "scorer_version) ORDER BY n DESC, schema_name", [[f"{a}\x00{b}" for a, b in wanted]])
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        out.setdefault((row["scorer_id"], row["scorer_version"]),
                       agreement_json(_agreement_of(row)))
    return out


def with_agreement(read: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Scorer summary rows (``id``, ``version``) with an ``agreement`` object added (None when
    the version has no labelled targets); ``read(sql, params)`` runs a store read."""
    found = agreement_for(read, [(r["id"], r["version"]) for r in rows])
    return [{**r, "agreement": found.get((r["id"], r["version"]))} for r in rows]


BEST_BY_SCORER_SQL = """
SELECT scorer_id, arg_max(scorer_version, (n, updated_at)) AS scorer_version,
       arg_max(kappa, (n, updated_at)) AS kappa, arg_max(kappa_low, (n, updated_at)) AS kappa_low,
       arg_max(kappa_high, (n, updated_at)) AS kappa_high, max(n) AS n
FROM judge_agreement WHERE list_contains(?::VARCHAR[], scorer_id) GROUP BY scorer_id
"""
"""Per scorer id, the version with the most labelled targets (what a gating check reads)."""


def gating_warnings(rows: Iterable[Mapping[str, Any]], scorer_ids: Iterable[str],
                    floor: float) -> list[str]:
    """Sentences about gating scorers whose agreement with people is unknown or below
    ``floor`` (``rows`` from ``BEST_BY_SCORER_SQL``)."""
    best = {r["scorer_id"]: r for r in rows}
    out = []
    for scorer_id in sorted(set(scorer_ids)):
        row = best.get(scorer_id)
        if row is None:
            out.append(f"scorer {scorer_id!r} gates this result but its agreement with people "
                       "is unknown (no labels of a schema that checks it)")
        elif row["kappa"] is None or row["kappa"] < floor:
            shown = agreement_text(row["kappa"], row["kappa_low"], row["kappa_high"],
                                   int(row["n"]))
            out.append(f"scorer {scorer_id!r} gates this result but {shown}, below the floor "
                       f"κ {floor:g}")
    return out


def agreement_warnings(store: Any, scorer_ids: Iterable[str], *, floor: float = 0.6
                       ) -> list[str]:
    """``gating_warnings`` read from an open store."""
    ids = sorted(set(scorer_ids))
    if not ids:
        return []
    return gating_warnings(store.read(BEST_BY_SCORER_SQL, [ids]), ids, floor)


def describe(row: Mapping[str, Any] | None) -> str:
    """The agreement column of ``tracescore scorers`` (``κ 0.72 [0.61–0.81] n 140``)."""
    if not row:
        return ""
    return f"{kappa_text(row.get('kappa'), row.get('kappa_low'), row.get('kappa_high'))} " \
        f"n {row.get('n')}"


__all__ = [
    "BEST_BY_SCORER_SQL",
    "AgreementKeeper",
    "RefreshReport",
    "agreement",
    "agreement_for",
    "agreement_json",
    "agreement_row",
    "agreement_warnings",
    "annotator_agreement",
    "consensus",
    "describe",
    "gating_warnings",
    "verdicts",
    "paired_scores_sql",
    "refresh_agreement",
    "with_agreement",
]
