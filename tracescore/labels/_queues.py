"""Review queues: a frozen selection of targets to label, handed out to annotators with leases.

``create_queue`` runs the queue's selection once (through the store's guarded, read-only SQL
surface) and stores the chosen targets as ``review_items`` in order. ``next_item`` claims the
first item an annotator has not done or skipped, that fewer than ``annotators_per_item`` other
people hold (done, or claimed with a lease not yet expired); it runs on the writer thread, so two
annotators asking at once never get the same item unless the queue wants several annotators
per item. An annotator's unexpired claim is handed back to them first (a reload resumes).
Labels that name the queue mark the item done for their annotator (``claim_done_writer``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from ._errors import InvalidLabel, LabelsNotFound, QueueExists
from ._labels import CURRENT_ONLY, _first_error, export_row, get_schema, list_schemas, utc_now
from ._models import Label, QueueSpec, target_key

_SOURCES = {
    "trace": ("traces", "trace_id", "start_time"),
    "session": ("sessions", "session_id", "last_trace_at"),
    "item": ("dataset_items", "item_id", "created_at"),
}


def selection_sql(spec: QueueSpec) -> tuple[str, list[Any]]:
    """The read that picks a queue's targets (run through ``Store.query``'s guard)."""
    table, key, time = _SOURCES[spec.target_type]
    where, params = ["TRUE"], []
    if spec.target_type == "item":
        where.append("version_removed IS NULL AND dataset_id = (SELECT dataset_id FROM datasets "
                     "WHERE name = ? ORDER BY created_at LIMIT 1)")
        params.append(spec.dataset)
    if spec.selection:
        where.append(f"({spec.selection})")
    order = {"newest": f"{time} DESC NULLS LAST, {key}",
             "oldest": f"{time} NULLS LAST, {key}",
             "random": f"md5({key} || ?), {key}"}[spec.order]
    if spec.order == "random":
        params.append(str(spec.seed))
    extra = ", source_trace_id, source_span_id" if spec.target_type == "item" else ""
    sql = (f"SELECT DISTINCT {key}{extra}, {time} FROM {table} WHERE {' AND '.join(where)} "
           f"ORDER BY {order} LIMIT {spec.size}")
    return sql, params


def _item_rows(spec: QueueSpec, rows: Sequence[Sequence[Any]], now: datetime
               ) -> list[dict[str, Any]]:
    out = []
    for position, row in enumerate(rows):
        ids: dict[str, Any] = {"trace_id": None, "span_id": None, "session_id": None,
                               "item_id": None}
        if spec.target_type == "trace":
            ids["trace_id"] = row[0]
        elif spec.target_type == "session":
            ids["session_id"] = row[0]
        else:
            ids.update(item_id=row[0], trace_id=row[1], span_id=row[2])
        key = target_key(spec.target_type, **ids)
        out.append({"queue_name": spec.name, "item_key": key, "position": position,
                    "target_type": spec.target_type, **ids, "added_at": now})
    return out


def create_queue(store: Any, spec: QueueSpec | Mapping[str, Any], *,
                 hide_judge: bool = True, now: datetime | None = None) -> dict[str, Any]:
    """Create a queue: check its schemas, run its selection, store it with its items."""
    from tracescore.store import InvalidSql, insert_arrow, rows_table

    try:
        spec = spec if isinstance(spec, QueueSpec) else QueueSpec.model_validate(spec)
    except ValidationError as exc:
        raise InvalidLabel(_first_error(exc, "queue")) from None
    schemas = [get_schema(store, name) for name in spec.schemas]
    scorer_id = spec.scorer_id or next((s.scorer_id for s in schemas if s.scorer_id), None)
    now = now or utc_now()
    sql, params = selection_sql(spec)
    try:
        found = store.query(sql, params, row_limit=spec.size)
    except InvalidSql as exc:
        raise InvalidLabel(f"queue {spec.name!r}: the selection does not run: {exc}") from None
    items = _item_rows(spec, found.rows, now)
    head = {**spec.model_dump(exclude={"order"}), "scorer_id": scorer_id,
            "hide_judge": hide_judge if spec.hide_judge is None else spec.hide_judge,
            "created_at": now}
    head_table = rows_table("review_queues", [head])
    item_table = rows_table("review_items", items) if items else None

    def write(conn: Any) -> None:
        if conn.execute("SELECT 1 FROM review_queues WHERE name = ?", [spec.name]).fetchone():
            raise QueueExists(f"a review queue named {spec.name!r} exists; pick another name")
        insert_arrow(conn, "review_queues", head_table)
        if item_table is not None:
            insert_arrow(conn, "review_items", item_table)

    store.write_sync(write)
    return {**head, "items": len(items)}


def enqueue_review_items(store: Any, queue: str, items: Sequence[Mapping[str, Any]], *,
                         now: datetime | None = None) -> int:
    """Add targets to an existing queue after its frozen selection (a cascade's unsure runs,
    ``tracescore.live``), each once; return how many were added. ``items`` carry ``trace_id``,
    ``span_id`` and ``session_id`` (the queue's target type picks which). Raises
    ``LookupError`` when no queue of that name exists."""
    from tracescore.store import insert_arrow, rows_table

    found = store.read("SELECT target_type FROM review_queues WHERE name = ?", [queue])
    if not found:
        raise LookupError(f"no review queue named {queue!r}; create it with "
                          "`tracescore queues create`")
    target_type = str(found[0]["target_type"])
    now = now or utc_now()
    rows: list[dict[str, Any]] = []
    for item in items:
        ids = {name: item.get(name) for name in ("trace_id", "span_id", "session_id")}
        if target_type == "item" or not ids[{"session": "session_id"}.get(target_type,
                                                                           "trace_id")]:
            continue  # a dataset item's queue, or no id of the queue's kind
        if target_type == "trace":
            ids.update(span_id=None, session_id=None)
        elif target_type == "span":
            ids["session_id"] = None
        else:
            ids.update(trace_id=None, span_id=None)
        key = target_key(target_type, **ids)
        if all(row["item_key"] != key for row in rows):
            rows.append({"queue_name": queue, "item_key": key, "target_type": target_type,
                         **ids, "item_id": None, "added_at": now})
    if not rows:
        return 0
    added = [0]

    def write(conn: Any) -> None:
        have = {r[0] for r in conn.execute(
            "SELECT item_key FROM review_items WHERE queue_name = ?", [queue]).fetchall()}
        last = conn.execute("SELECT coalesce(max(position), -1) FROM review_items "
                            "WHERE queue_name = ?", [queue]).fetchall()[0][0]
        fresh = [r for r in rows if r["item_key"] not in have]
        for offset, row in enumerate(fresh, start=1):
            row["position"] = last + offset
        if fresh:
            insert_arrow(conn, "review_items", rows_table("review_items", fresh))
        added[0] = len(fresh)

    store.write_sync(write)
    return added[0]


QUEUES_SQL = """
SELECT q.*, (SELECT count(*) FROM review_items i WHERE i.queue_name = q.name) AS items,
       (SELECT count(*) FROM review_claims c WHERE c.queue_name = q.name
        AND c.status = 'done') AS done,
       (SELECT count(*) FROM review_claims c WHERE c.queue_name = q.name
        AND c.status = 'skipped') AS skipped
FROM review_queues q {where} ORDER BY q.created_at, q.name
"""


def _queue_out(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    if isinstance(out.get("schemas"), str):
        out["schemas"] = json.loads(out["schemas"])
    created = out.get("created_at")
    if isinstance(created, datetime):
        out["created_at"] = created.isoformat() + "Z"
    if "items" in out:
        out["needed"] = int(out["items"]) * int(out["annotators_per_item"] or 1)
    return out


def list_queues(store: Any) -> list[dict[str, Any]]:
    """Every queue with its item count and progress (labels done, skips)."""
    return [_queue_out(r) for r in store.read(QUEUES_SQL.format(where=""))]


def get_queue(store: Any, name: str, *, annotator: str | None = None) -> dict[str, Any]:
    """One queue with its progress (with ``annotator``: ``mine``, the items they did);
    ``LabelsNotFound`` when there is none of that name."""
    rows = store.read(QUEUES_SQL.format(where="WHERE q.name = ?"), [name])
    if not rows:
        raise LabelsNotFound(f"no review queue named {name!r}; create it with POST /api/queues "
                             "or `tracescore queues create`")
    out = _queue_out(rows[0])
    if annotator is not None:
        out["mine"] = store.read("SELECT count(*) AS n FROM review_claims WHERE queue_name = ? "
                                 "AND annotator = ? AND status = 'done'", [name, annotator]
                                 )[0]["n"]
    return out


NEXT_SQL = """
SELECT i.item_key FROM review_items i
WHERE i.queue_name = $queue
  AND NOT EXISTS (SELECT 1 FROM review_claims c WHERE c.queue_name = i.queue_name
                  AND c.item_key = i.item_key AND c.annotator = $annotator
                  AND c.status IN ('done', 'skipped'))
  AND (SELECT count(*) FROM review_claims c WHERE c.queue_name = i.queue_name
       AND c.item_key = i.item_key AND c.annotator <> $annotator
       AND (c.status = 'done' OR (c.status = 'claimed' AND c.expires_at > $now))) < $per_item
ORDER BY i.position LIMIT 1
"""
HELD_SQL = """
SELECT c.item_key FROM review_claims c JOIN review_items i USING (queue_name, item_key)
WHERE c.queue_name = ? AND c.annotator = ? AND c.status = 'claimed' AND c.expires_at > ?
ORDER BY i.position LIMIT 1
"""
CLAIM_SQL = "INSERT OR REPLACE INTO review_claims VALUES (?, ?, ?, ?, ?, ?, ?)"


def _need_annotator(annotator: str | None) -> str:
    if not annotator or not annotator.strip():
        raise InvalidLabel("say who is labelling: an annotator name is required")
    return annotator.strip()


def next_item(store: Any, name: str, annotator: str, *, now: datetime | None = None
              ) -> dict[str, Any] | None:
    """Claim the annotator's next item of queue ``name`` (a lease of the queue's
    ``lease_seconds``) and return it as ``item_detail`` does; None when nothing is left."""
    annotator = _need_annotator(annotator)
    queue = get_queue(store, name)
    now = now or utc_now()
    expires = now + timedelta(seconds=float(queue["lease_seconds"] or 900))

    def claim(conn: Any) -> str | None:
        held = conn.execute(HELD_SQL, [name, annotator, now]).fetchone()
        if held is not None:
            key = str(held[0])
        else:
            found = conn.execute(NEXT_SQL, {"queue": name, "annotator": annotator, "now": now,
                                            "per_item": queue["annotators_per_item"] or 1}
                                 ).fetchone()
            if found is None:
                return None
            key = str(found[0])
        conn.execute(CLAIM_SQL, [name, key, annotator, "claimed", now, expires, now])
        return key

    key = store.write_sync(claim)
    return None if key is None else item_detail(store, name, key, annotator, queue=queue)


def skip_item(store: Any, name: str, item_key: str, annotator: str, *,
              now: datetime | None = None) -> None:
    """The annotator passes on an item: it is not handed to them again (others still get it)."""
    annotator = _need_annotator(annotator)
    now = now or utc_now()

    def write(conn: Any) -> None:
        if not conn.execute("SELECT 1 FROM review_items WHERE queue_name = ? AND item_key = ?",
                            [name, item_key]).fetchone():
            raise LabelsNotFound(f"queue {name!r} has no item {item_key!r}")
        conn.execute(CLAIM_SQL, [name, item_key, annotator, "skipped", now, None, now])

    store.write_sync(write)


def claim_done_writer(labels: Sequence[Label], *, now: datetime) -> Any:
    """A writer function marking the queue items these labels answer done for their
    annotators (``InvalidLabel`` inside the transaction when a label names an item its queue
    does not hold)."""
    marks = []
    for index, label in enumerate(labels):
        if not label.annotator:
            raise InvalidLabel(f"label {index}: a label answering queue {label.queue!r} needs "
                               "an annotator")
        marks.append((index, label.queue, label.target_key, label.annotator))

    def write(conn: Any) -> None:
        for index, queue, key, annotator in marks:
            if not conn.execute("SELECT 1 FROM review_items WHERE queue_name = ? AND "
                                "item_key = ?", [queue, key]).fetchone():
                raise InvalidLabel(f"label {index}: {key} is not an item of queue {queue!r}")
            conn.execute(CLAIM_SQL, [queue, key, annotator, "done", now, None, now])

    return write


JUDGE_SQL = {
    "trace": "trace_id = ? AND (span_id IS NULL OR span_id NOT LIKE 'session:%')",
    "session": "session_id = ? AND span_id LIKE 'session:%'",
    "item": "source = 'canary' AND json_extract_string(metadata, '$.item_id') = ?",
}


def _judge(store: Any, scorer_id: str, item: Mapping[str, Any]) -> dict[str, Any] | None:
    from ._reads import agreement_for

    kind = item["target_type"]
    value = item["item_id"] if kind == "item" else item["session_id"] if kind == "session" \
        else item["trace_id"]
    rows = store.read(
        "SELECT score_id, scorer_id, scorer_version, status, score, reason, created_at "
        f"FROM scores WHERE scorer_id = ? AND {JUDGE_SQL[kind]} ORDER BY created_at DESC LIMIT 1",
        [scorer_id, value])
    if not rows:
        return None
    judge = dict(rows[0])
    judge["created_at"] = judge["created_at"].isoformat() + "Z" if judge["created_at"] else None
    found = agreement_for(store.read, [(judge["scorer_id"], judge["scorer_version"])])
    judge["agreement"] = found.get((judge["scorer_id"], judge["scorer_version"]))
    return judge


def item_detail(store: Any, name: str, item_key: str, annotator: str | None, *,
                queue: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One queue item for an annotator: the target, the queue's schemas, the annotator's
    current labels of it, progress, and the judge's score and reason unless they stay hidden
    until the annotator has labelled it."""
    queue = dict(queue or get_queue(store, name))
    rows = store.read("SELECT * FROM review_items WHERE queue_name = ? AND item_key = ?",
                      [name, item_key])
    if not rows:
        raise LabelsNotFound(f"queue {name!r} has no item {item_key!r}")
    item = rows[0]
    mine: list[dict[str, Any]] = []
    if annotator:
        column = {"trace": "trace_id", "session": "session_id", "item": "item_id"}[
            item["target_type"]]
        found = store.read(
            "SELECT * FROM (SELECT l.*, s.kind FROM labels l JOIN label_schemas s "
            f"ON s.name = l.schema_name WHERE l.target_type = ? AND l.{column} = ? "
            "AND l.annotator = ? AND list_contains(?::VARCHAR[], l.schema_name) "
            f"{CURRENT_ONLY}) ORDER BY created_at",
            [item["target_type"], item[column], annotator, queue["schemas"]])
        mine = [export_row(r) for r in found]
    schemas = {s.name: s for s in list_schemas(store)}
    revealed = not queue["hide_judge"] or bool(mine)
    done = store.read("SELECT count(*) FILTER (WHERE annotator = ?) AS mine, count(*) AS everyone"
                      " FROM review_claims WHERE queue_name = ? AND status = 'done'",
                      [annotator or "", name])[0]
    return {
        "queue": name,
        "item_key": item_key,
        "position": item["position"],
        "target_type": item["target_type"],
        "trace_id": item["trace_id"], "span_id": item["span_id"],
        "session_id": item["session_id"], "item_id": item["item_id"],
        "schemas": [{**schemas[n].model_dump(mode="json", exclude={"created_at"}),
                     "choices": schemas[n].choices()} for n in queue["schemas"] if n in schemas],
        "labels": mine,
        "judge_hidden": not revealed,
        "judge": (_judge(store, queue["scorer_id"], item)
                  if revealed and queue.get("scorer_id") else None),
        "progress": {"items": queue["items"], "needed": queue["needed"],
                     "done": int(done["everyone"]), "mine": int(done["mine"])},
    }


__all__ = [
    "claim_done_writer",
    "create_queue",
    "get_queue",
    "item_detail",
    "list_queues",
    "next_item",
    "selection_sql",
    "skip_item",
]
