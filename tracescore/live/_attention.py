"""What a user must see when a scorer scores nothing: pairs retrying and the last error.

``scorer_attention(read, rows)`` adds to each ``scorer_summary`` row (current version only):

- ``retrying``: pairs waiting for another try (``scorer_summary`` counts them under pending too);
- ``last_error`` and ``last_error_at``: the newest ``last_error`` of a pair that is retrying,
  failed or over budget (``not_scorable`` reasons are answers, not errors, and are left out).

``tracescore scorers``, ``GET /api/live/scorers`` and the dashboard's Scorers page show them,
with the paused reason (the status row's ``note``).
"""

from __future__ import annotations

from typing import Any

ATTENTION_SQL = """
WITH v(scorer_id, scorer_version) AS (VALUES {values})
SELECT d.scorer_id,
       count(*) FILTER (WHERE d.decision = 'retrying') AS retrying,
       arg_max(d.last_error, d.updated_at) FILTER (WHERE d.last_error IS NOT NULL
           AND d.decision IN ('retrying', 'failed', 'over_budget')) AS last_error,
       max(d.updated_at) FILTER (WHERE d.last_error IS NOT NULL
           AND d.decision IN ('retrying', 'failed', 'over_budget')) AS last_error_at
FROM scoring_decisions d JOIN v USING (scorer_id, scorer_version)
GROUP BY ALL
"""

SHORT_ERROR_CHARS = 60
"""How much of the last error the ``tracescore scorers`` table shows (JSON has all of it)."""


def scorer_attention(read: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (dicts with ``id`` and ``version``) with ``retrying``, ``last_error`` and
    ``last_error_at`` added; ``read(sql, params)`` runs a store read."""
    if not rows:
        return rows
    values = ", ".join("(?, ?)" for _ in rows)
    params = [x for r in rows for x in (r["id"], r["version"])]
    found = {r["scorer_id"]: r for r in read(ATTENTION_SQL.format(values=values), params)}
    out = []
    for row in rows:
        extra = found.get(row["id"], {})
        at = extra.get("last_error_at")
        out.append({**row, "retrying": int(extra.get("retrying") or 0),
                    "last_error": extra.get("last_error"),
                    "last_error_at": at.isoformat() + "Z" if at is not None else None})
    return out


def short_text(text: str | None, limit: int = SHORT_ERROR_CHARS) -> str:
    """The first line of ``text``, cut to ``limit`` characters with an ellipsis."""
    if not text:
        return ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


__all__ = ["ATTENTION_SQL", "scorer_attention", "short_text"]
