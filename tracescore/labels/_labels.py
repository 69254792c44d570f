"""Label schemas and labels in an open ``Store``: reads on cursors, each change one writer
transaction (rows inserted through Arrow).

``add`` checks every label against its schema before anything is written, so a bad label in a
batch stores none of it. A label answering a review queue also marks the queue item done for
its annotator, in the same transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._errors import InvalidLabel, LabelsNotFound
from ._models import Label, LabelSchema

SCHEMA_COLUMNS = ("name", "kind", "values", "min_value", "max_value", "rubric", "scorer_id",
                  "threshold", "created_at")
LABEL_COLUMNS = ("label_id", "target_type", "trace_id", "span_id", "session_id", "item_id",
                 "schema_name", "value", "annotator", "comment", "created_at", "numeric_value",
                 "queue_name")
_MEANING = ("kind", "values", "min_value", "max_value")


def utc_now() -> datetime:
    """Now, naive UTC (the tables' time zone)."""
    return datetime.now(UTC).replace(tzinfo=None)


def _schema_of(row: Mapping[str, Any]) -> LabelSchema:
    values = row.get("values")
    if isinstance(values, str):
        values = json.loads(values)
    return LabelSchema.model_validate({**row, "values": values})


def list_schemas(store: Any) -> list[LabelSchema]:
    """Every label schema, by name."""
    columns = ", ".join(f'"{c}"' for c in SCHEMA_COLUMNS)
    return [_schema_of(r) for r in store.read(f"SELECT {columns} FROM label_schemas ORDER BY name")]


def get_schema(store: Any, name: str) -> LabelSchema:
    """One label schema; ``LabelsNotFound`` when there is none of that name."""
    columns = ", ".join(f'"{c}"' for c in SCHEMA_COLUMNS)
    rows = store.read(f"SELECT {columns} FROM label_schemas WHERE name = ?", [name])
    if not rows:
        raise LabelsNotFound(f"no label schema named {name!r}; create it first "
                             "(POST /api/label-schemas or tracescore.labels.create_schema)")
    return _schema_of(rows[0])


def create_schema(store: Any, schema: LabelSchema | Mapping[str, Any]) -> LabelSchema:
    """Store a label schema, or update one of the same name. Its meaning (kind, values, range)
    may change only while no label uses it; the rubric, scorer and threshold always may."""
    try:
        spec = schema if isinstance(schema, LabelSchema) else LabelSchema.model_validate(schema)
    except ValidationError as exc:
        raise InvalidLabel(_first_error(exc, "label schema")) from None
    spec = spec.model_copy(update={"created_at": spec.created_at or utc_now()})
    from tracescore.store import insert_arrow, rows_table

    table = rows_table("label_schemas", [spec.model_dump()])

    def write(conn: Any) -> None:
        found = conn.execute(
            'SELECT kind, "values", min_value, max_value FROM label_schemas WHERE name = ?',
            [spec.name]).fetchone()
        if found is not None:
            stored = dict(zip(_MEANING, found, strict=True))
            stored["values"] = json.loads(stored["values"]) if stored["values"] else None
            changed = [k for k in _MEANING if stored[k] != getattr(spec, k)]
            used = conn.execute("SELECT count(*) FROM labels WHERE schema_name = ?",
                                [spec.name]).fetchone()[0]
            if changed and used:
                raise InvalidLabel(
                    f"label schema {spec.name!r} already has {used} label(s); its "
                    f"{', '.join(changed)} cannot change (create a schema with a new name)")
            conn.execute("DELETE FROM label_schemas WHERE name = ?", [spec.name])
        insert_arrow(conn, "label_schemas", table)

    store.write_sync(write)
    return spec


def _first_error(exc: ValidationError, what: str) -> str:
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown key (check its spelling)"
    return f"{what}: {key + ': ' if key else ''}{message}"


def _labels_of(labels: Iterable[Label | Mapping[str, Any]], annotator: str | None
               ) -> list[Label]:
    out = []
    for index, raw in enumerate(labels):
        try:
            label = raw if isinstance(raw, Label) else Label.model_validate(raw)
        except ValidationError as exc:
            raise InvalidLabel(_first_error(exc, f"label {index}")) from None
        if label.annotator is None and annotator is not None:
            label = label.model_copy(update={"annotator": annotator})
        out.append(label)
    return out


def label_rows(store: Any, labels: Sequence[Label], *, now: datetime) -> list[dict[str, Any]]:
    """The ``labels`` rows of checked labels (``InvalidLabel`` names the first bad one)."""
    names = sorted({label.schema_name for label in labels})
    schemas = {s.name: s for s in list_schemas(store) if s.name in names}
    rows = []
    for index, label in enumerate(labels):
        schema = schemas.get(label.schema_name)
        if schema is None:
            raise InvalidLabel(f"label {index}: no label schema named {label.schema_name!r}; "
                               "create it first (POST /api/label-schemas)")
        try:
            text, number = schema.parse(label.value)
        except ValueError as exc:
            raise InvalidLabel(f"label {index}: {exc}") from None
        rows.append({
            "label_id": label.label_id or uuid.uuid4().hex, "target_type": label.target_type,
            "trace_id": label.trace_id, "span_id": label.span_id,
            "session_id": label.session_id, "item_id": label.item_id,
            "schema_name": label.schema_name, "value": text, "annotator": label.annotator,
            "comment": label.comment, "created_at": label.created_at or now,
            "numeric_value": number, "queue_name": label.queue,
        })
    return rows


def add(store: Any, labels: Iterable[Label | Mapping[str, Any]], *,
        annotator: str | None = None, now: datetime | None = None) -> list[dict[str, Any]]:
    """Store labels (one transaction); return their rows. A label whose ``label_id`` is
    already stored is left as it is (importing the same file twice adds nothing)."""
    from ._queues import claim_done_writer

    checked = _labels_of(labels, annotator)
    if not checked:
        return []
    rows = label_rows(store, checked, now=now or utc_now())
    from tracescore.store import insert_arrow, rows_table

    table = rows_table("labels", rows)
    done = claim_done_writer([label for label in checked if label.queue], now=now or utc_now())

    def write(conn: Any) -> None:
        done(conn)
        insert_arrow(conn, "labels", table, "INSERT OR IGNORE")

    store.write_sync(write)
    return rows


def parse_jsonl(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The objects of JSONL text (blank lines skipped); ``InvalidLabel`` names a bad line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise InvalidLabel(f"line {number}: not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise InvalidLabel(f"line {number}: expected a JSON object, got "
                               f"{type(value).__name__}")
        yield value


def import_labels(store: Any, source: str | Path | Iterable[str], *,
                  annotator: str | None = None) -> int:
    """Add the labels of a JSONL file (or of its lines); return how many lines were read.
    Nothing is stored when any line is bad (the error names the line)."""
    if isinstance(source, str | Path):
        with open(source, encoding="utf-8") as handle:
            objects = list(parse_jsonl(handle))
    else:
        objects = list(parse_jsonl(source))
    try:
        labels = _labels_of(objects, annotator)
    except InvalidLabel as exc:
        raise InvalidLabel(str(exc).replace("label ", "line ", 1)) from None
    add(store, labels)
    return len(labels)


def typed_value(kind: str | None, text: str | None) -> Any:
    """A stored label value as JSON would carry it (true/false, a number, or text)."""
    if text is None:
        return None
    if kind == "boolean":
        return text == "true"
    if kind == "numeric":
        return float(text)
    return text


LIST_SQL = """
SELECT * FROM (
    SELECT l.*, s.kind FROM labels l LEFT JOIN label_schemas s ON s.name = l.schema_name
    WHERE {where} {current}
) ORDER BY created_at, label_id LIMIT ?
"""
CURRENT_ONLY = """QUALIFY row_number() OVER (
    PARTITION BY l.target_type, l.trace_id, l.span_id, l.session_id, l.item_id, l.schema_name,
                 l.annotator ORDER BY l.created_at DESC, l.label_id DESC) = 1"""
"""The newest label of each target × schema × annotator, as ``current_labels`` has it, but
after the filters (the view ranks every label before a filter applies)."""


def list_labels(store: Any, *, schema_name: str | None = None, trace_id: str | None = None,
                annotator: str | None = None, queue: str | None = None, current: bool = True,
                limit: int = 10_000) -> list[dict[str, Any]]:
    """Labels as JSONL-shaped dicts (``schema`` and a typed ``value``), oldest first;
    ``current`` keeps only the newest of each target × schema × annotator."""
    where, params = ["TRUE"], []
    for column, value in (("schema_name", schema_name), ("trace_id", trace_id),
                          ("annotator", annotator), ("queue_name", queue)):
        if value is not None:
            where.append(f"l.{column} = ?")
            params.append(value.lower() if column == "trace_id" else value)
    sql = LIST_SQL.format(current=CURRENT_ONLY if current else "", where=" AND ".join(where))
    return [export_row(row) for row in store.read(sql, [*params, limit])]


def export_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``labels`` row as one JSONL object (``import_labels`` reads it back)."""
    out: dict[str, Any] = {"label_id": row["label_id"], "target_type": row["target_type"]}
    for name in ("trace_id", "span_id", "session_id", "item_id"):
        if row.get(name) is not None:
            out[name] = row[name]
    out["schema"] = row["schema_name"]
    out["value"] = typed_value(row.get("kind"), row["value"])
    for name in ("annotator", "comment"):
        if row.get(name) is not None:
            out[name] = row[name]
    created = row.get("created_at")
    out["created_at"] = created.isoformat() + "Z" if isinstance(created, datetime) else created
    return out


__all__ = [
    "CURRENT_ONLY",
    "add",
    "create_schema",
    "export_row",
    "get_schema",
    "import_labels",
    "label_rows",
    "list_labels",
    "list_schemas",
    "parse_jsonl",
    "typed_value",
    "utc_now",
]
