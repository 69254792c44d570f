"""The SQL that pairs people's labels with judges' scores.

A trace label pairs with the trace's scores (session scores aside), a span label with the span's,
a session label with the session scorer's, an item label with the item's canary scores. Each
annotator's current label is their newest of a target and schema; several annotators of one
target give one consensus label: the most frequent value (a tie leaves the target out) or, for
numeric schemas, the mean.
"""

from __future__ import annotations

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


__all__ = ["ANNOTATORS_SQL", "CURRENT_SQL", "LABELS_SQL", "PAIRS_SQL", "UNITS_SQL",
           "paired_scores_sql"]
