"""``AgreementKeeper``: keeps ``judge_agreement`` and ``annotator_agreement`` up to date, cheaply.

A pass recomputes a schema only when its labels changed (their count or newest ``created_at``)
or its scorer wrote a score since the last pass; otherwise it costs two small aggregate reads.
Passes of one keeper run one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ._agreement import agreement_row, annotator_row
from ._labels import list_schemas, utc_now
from ._models import LabelSchema
from ._pairing import ANNOTATORS_SQL, PAIRS_SQL, UNITS_SQL
from ._stats import DEFAULT_RESAMPLES, DEFAULT_SEED

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
EPOCH = datetime(1970, 1, 1, tzinfo=UTC).replace(tzinfo=None)


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


__all__ = ["AgreementKeeper", "RefreshReport", "refresh_agreement"]
