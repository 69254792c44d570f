"""Reading agreement: the rows of ``judge_agreement`` as ``Agreement``, the object a score
carries, the column ``tracescore scorers`` shows, and the warnings about gating judges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ._models import Agreement, agreement_text, kappa_text

AGREEMENT_COLUMNS = tuple(Agreement.model_fields)


def _agreement_of(row: Mapping[str, Any]) -> Agreement:
    return Agreement.model_validate({k: row.get(k) for k in AGREEMENT_COLUMNS})


def agreement(store: Any, *, scorer_id: str | None = None, schema_name: str | None = None,
              refresh: bool = False) -> list[Agreement]:
    """The ``judge_agreement`` rows (optionally of one scorer or schema), brought up to date
    first with ``refresh``."""
    if refresh:
        from ._upkeep import refresh_agreement

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
    "agreement",
    "agreement_for",
    "agreement_json",
    "agreement_warnings",
    "annotator_agreement",
    "describe",
    "gating_warnings",
    "with_agreement",
]
