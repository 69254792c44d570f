"""Turn span/log batches and row dicts into Arrow tables typed after the schema.

Everything the store inserts goes through here, so DuckDB gets one Arrow table per statement
(never row-by-row inserts). Span and log batches arrive columnar (``tracescore.ingest``); score
rows arrive as dicts and are checked against the table's columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import orjson

from ._errors import InvalidRow
from ._schema import TABLES

SPAN_INPUT_COLUMNS: tuple[str, ...] = (
    "trace_id",
    "span_id",
    "parent_span_id",
    "project",
    "service_name",
    "name",
    "kind",
    "start_time_ns",
    "end_time_ns",
    "duration_ms",
    "status_code",
    "status_message",
    "attributes",
    "resource_attributes",
    "events",
    "links",
    "scope_name",
    "scope_version",
)
"""Keys of a span row / columns of a span batch (INTERFACES.md); times are integer ns."""

LOG_INPUT_COLUMNS: tuple[str, ...] = (
    "log_id",
    "trace_id",
    "span_id",
    "time_unix_nano",
    "observed_time_unix_nano",
    "severity_number",
    "severity_text",
    "event_name",
    "body",
    "attributes",
    "resource_attributes",
    "scope_name",
    "scope_version",
    "project",
    "service_name",
)
"""Columns of a log batch; ``log_id`` is a content digest used to drop re-sent records."""

_SPAN_JSON = {"attributes", "resource_attributes", "events", "links"}
_LOG_JSON = {"body", "attributes", "resource_attributes"}


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def to_json_text(value: Any) -> str | None:
    """Serialize a Python value for a JSON column (None stays NULL)."""
    if value is None:
        return None
    return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _columns_of(batch: Any, names: tuple[str, ...], json_names: set[str]) -> dict[str, list[Any]]:
    """Columns from a batch object (``.columns``), a mapping of lists, or a list of row dicts."""
    columns = getattr(batch, "columns", batch)
    if isinstance(columns, Mapping):
        missing = [name for name in names if name not in columns]
        if missing:
            raise InvalidRow(f"the batch lacks columns {missing}; expected {list(names)}")
        return {name: columns[name] for name in names}
    rows = list(columns)
    out: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        unknown = set(row) - set(names)
        if unknown:
            raise InvalidRow(f"unknown keys {sorted(unknown)}; a row has the keys {list(names)}")
        for name in names:
            value = row.get(name)
            if name in json_names and value is not None and not isinstance(value, str):
                value = to_json_text(value)
            out[name].append(value)
    return out


def span_table(batches: Iterable[Any]) -> Any:
    """One Arrow table (columns of ``spans`` minus ``received_at``) from several span batches.

    A batch is a ``SpanBatch`` (or any object with ``.columns``), a mapping of column lists, a
    list of span row dicts, or an Arrow table already in this layout (``arrow_span_table``
    output, or an object carrying one as ``.arrow_table``).
    """
    import pyarrow as pa

    tables = []
    pending: list[Any] = []
    for batch in batches:
        table = batch if isinstance(batch, pa.Table) else getattr(batch, "arrow_table", None)
        if table is None:
            pending.append(batch)
            continue
        if pending:
            tables.append(_span_table_from_columns(pending))
            pending = []
        tables.append(table)
    if pending or not tables:
        tables.append(_span_table_from_columns(pending))
    if len(tables) == 1:
        return tables[0]
    if any(table.schema != tables[0].schema for table in tables):
        # Mixed trusted (arrow.json) and untrusted (string) JSON columns: all become strings,
        # so DuckDB validates every value of the commit.
        tables = [table.cast(_plain_schema(table.schema)) for table in tables]
    return pa.concat_tables(tables)


def _plain_schema(schema: Any) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(field.name, pa.string()) if field.name in _SPAN_JSON else field
            for field in schema
        ]
    )


def arrow_span_table(batch: Any) -> Any:
    """The Arrow table the store inserts for one span batch (built where the batch is decoded,
    e.g. in a decode worker, so the writer only concatenates)."""
    return _span_table_from_columns([batch])


def _trusted_json(batch: Any) -> bool:
    """True for a decoder's ``SpanBatch``, whose JSON columns orjson wrote (always valid)."""
    from ._batch import SpanBatch

    return isinstance(batch, SpanBatch)


def _span_table_from_columns(batches: list[Any]) -> Any:
    import pyarrow as pa

    if len(batches) == 1:
        merged = _columns_of(batches[0], SPAN_INPUT_COLUMNS, _SPAN_JSON)
    else:
        merged = {name: [] for name in SPAN_INPUT_COLUMNS}
        for batch in batches:
            columns = _columns_of(batch, SPAN_INPUT_COLUMNS, _SPAN_JSON)
            for name in SPAN_INPUT_COLUMNS:
                merged[name].extend(columns[name])
    string = pa.string()
    # Decoder batches hold JSON text written by orjson: typed arrow.json, DuckDB stores it as
    # JSON without parsing it again (~2 µs per span). Other text stays a string and is parsed
    # (validated) by DuckDB's cast to JSON.
    json_text = pa.json_() if all(_trusted_json(batch) for batch in batches) else string
    timestamp = pa.timestamp("ns")
    arrays = {
        "trace_id": pa.array(merged["trace_id"], string),
        "span_id": pa.array(merged["span_id"], string),
        "parent_span_id": pa.array(merged["parent_span_id"], string),
        "project": pa.array(merged["project"], string),
        "service_name": pa.array(merged["service_name"], string),
        "name": pa.array(merged["name"], string),
        "kind": pa.array(merged["kind"], string),
        "start_time": pa.array(merged["start_time_ns"], pa.int64()).cast(timestamp),
        "end_time": pa.array(merged["end_time_ns"], pa.int64()).cast(timestamp),
        "duration_ms": pa.array(merged["duration_ms"], pa.float64()),
        "status_code": pa.array(merged["status_code"], string),
        "status_message": pa.array(merged["status_message"], string),
        "attributes": pa.array(merged["attributes"], json_text),
        "resource_attributes": pa.array(merged["resource_attributes"], json_text),
        "events": pa.array(merged["events"], json_text),
        "links": pa.array(merged["links"], json_text),
        "scope_name": pa.array(merged["scope_name"], string),
        "scope_version": pa.array(merged["scope_version"], string),
    }
    return pa.table(arrays)


def log_table(batches: Iterable[Any]) -> Any:
    """One Arrow table (columns of ``logs`` minus ``received_at``) from several log batches."""
    import pyarrow as pa

    merged: dict[str, list[Any]] = {name: [] for name in LOG_INPUT_COLUMNS}
    for batch in batches:
        columns = _columns_of(batch, LOG_INPUT_COLUMNS, _LOG_JSON)
        for name in LOG_INPUT_COLUMNS:
            merged[name].extend(columns[name])
    string = pa.string()
    timestamp = pa.timestamp("ns")
    numeric = {"time_unix_nano", "observed_time_unix_nano", "severity_number"}
    arrays = {
        name: pa.array(merged[name], string) for name in LOG_INPUT_COLUMNS if name not in numeric
    }
    arrays["log_time"] = pa.array(merged["time_unix_nano"], pa.int64()).cast(timestamp)
    arrays["observed_time"] = pa.array(merged["observed_time_unix_nano"], pa.int64()).cast(
        timestamp
    )
    arrays["severity_number"] = pa.array(merged["severity_number"], pa.int32())
    order = [name for name, _ in TABLES["logs"] if name != "received_at"]
    return pa.table({name: arrays[name] for name in order})


def _to_utc_naive(value: Any, column: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).replace(tzinfo=None)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value.astimezone(UTC).replace(tzinfo=None)
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).replace(tzinfo=None)
    raise InvalidRow(f"{column}: expected a datetime or ISO-8601 text, got {type(value).__name__}")


def _arrow_type(sql_type: str) -> Any:
    import pyarrow as pa

    base = sql_type.split()[0]
    return {
        "VARCHAR": pa.string(),
        "JSON": pa.string(),
        "DOUBLE": pa.float64(),
        "BIGINT": pa.int64(),
        "INTEGER": pa.int32(),
        "TIMESTAMP": pa.timestamp("us"),
        "TIMESTAMP_NS": pa.timestamp("ns"),
        "BOOLEAN": pa.bool_(),
        "VARCHAR[]": pa.list_(pa.string()),
    }[base]


def _convert(value: Any, base: str, column: str) -> Any:
    if value is None:
        return None
    if base == "JSON":
        return to_json_text(value)
    if base == "TIMESTAMP":
        return _to_utc_naive(value, column)
    if base == "DOUBLE":
        number = float(value)
        return None if math.isnan(number) else number
    if base in ("BIGINT", "INTEGER"):
        return int(value)
    if base == "VARCHAR":
        return value if isinstance(value, str) else str(value)
    if base == "TIMESTAMP_NS" and isinstance(value, int):
        return value
    if base == "VARCHAR[]":
        return [v if isinstance(v, str) else str(v) for v in value]
    if base == "BOOLEAN":
        return bool(value)
    return value


def rows_table(
    table: str, rows: Sequence[Mapping[str, Any]], *, defaults: Mapping[str, Any] | None = None
) -> Any:
    """An Arrow table for ``table`` from row dicts; unknown keys raise ``InvalidRow``.

    Missing keys are NULL (or the value from ``defaults``); JSON columns take Python values and
    are serialized (a ``str`` becomes a JSON string); datetimes are stored as naive UTC.
    """
    import pyarrow as pa

    schema = TABLES[table]
    known = {name for name, _ in schema}
    for index, row in enumerate(rows):
        if not known.issuperset(row):
            raise InvalidRow(
                f"{table} row {index}: unknown columns {sorted(set(row) - known)}; the columns "
                f"are {[name for name, _ in schema]}"
            )
    defaults = defaults or {}
    arrays = {}
    for name, sql_type in schema:
        base = sql_type.split()[0]
        default = defaults.get(name)
        try:
            values = _column(base, name, [row.get(name, default) for row in rows])
        except (TypeError, ValueError) as exc:
            raise InvalidRow(f"{table}.{name}: {exc}") from None
        try:
            arrays[name] = pa.array(values, _arrow_type(sql_type))
        except (pa.ArrowInvalid, OverflowError) as exc:
            raise InvalidRow(f"{table}.{name}: a value does not fit {base}: {exc}") from None
    return pa.table(arrays)


def _column(base: str, column: str, values: list[Any]) -> list[Any]:
    """``_convert`` over a column's values, with the common cases done per column: text that
    is already ``str``, numbers already ``float``, NULL columns, and JSON values shared by
    several rows (the same object, e.g. one run's input scored by several scorers) serialized
    once."""
    if base == "VARCHAR" or base == "TIMESTAMP_NS":
        kinds = {type(v) for v in values}
        kinds.discard(type(None))
        if not kinds or kinds == ({str} if base == "VARCHAR" else {int}):
            return values
    elif base == "DOUBLE":
        kinds = {type(v) for v in values}
        kinds.discard(type(None))
        if kinds == {float}:
            return [None if v is None or v != v else v for v in values]  # NaN is NULL
    elif base == "JSON":
        texts: dict[int, str | None] = {}
        out: list[Any] = []
        for v in values:
            if v is None:
                out.append(None)
                continue
            key = id(v)  # the rows keep every value alive: ids are not reused meanwhile
            if key not in texts:
                texts[key] = to_json_text(v)
            out.append(texts[key])
        return out
    return [_convert(v, base, column) for v in values]


__all__ = [
    "LOG_INPUT_COLUMNS",
    "arrow_span_table",
    "SPAN_INPUT_COLUMNS",
    "log_table",
    "rows_table",
    "span_table",
    "to_json_text",
]
