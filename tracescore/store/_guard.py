"""The SQL surface's checks: one read statement, parsed by DuckDB itself; JSON-safe values.

The statement type comes from ``duckdb.extract_statements`` (DuckDB's own parser), so comments,
CTEs, ``FROM``-first queries, ``DESCRIBE`` and ``SUMMARIZE`` are all judged as DuckDB sees them.
File and network access is refused by the database itself (``enable_external_access=false``);
this module only words those refusals for people. Functions and views that reveal the server's
file paths or settings (``duckdb_databases()``, ``duckdb_settings()``, ``current_setting()``,
…) are refused by ``_disclosure`` before the statement runs.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import uuid
from decimal import Decimal
from typing import Any

from ._disclosure import check_disclosure
from ._errors import InvalidSql

_HINTS = {
    "COPY": "COPY cannot run here: the SQL surface does not read or write files "
    "(use `tracescore export` for Parquet)",
    "COPY_DATABASE": "COPY DATABASE cannot run here: the SQL surface does not write files",
    "EXPORT": "EXPORT DATABASE cannot run here: the SQL surface does not write files "
    "(use `tracescore export`)",
    "ATTACH": "ATTACH cannot run here: the SQL surface reads only this database",
    "DETACH": "DETACH cannot run here: the SQL surface reads only this database",
    "LOAD": "INSTALL and LOAD cannot run here: extensions cannot be installed or loaded "
    "through the SQL surface",
    "EXTENSION": "INSTALL cannot run here: extensions cannot be installed through the SQL surface",
    "SET": "SET cannot run here: settings cannot be changed through the SQL surface",
    "VARIABLE_SET": "SET VARIABLE cannot run here: the SQL surface only reads",
    "PRAGMA": "PRAGMA cannot run here; use SELECT on duckdb_tables(), DESCRIBE or SHOW instead",
    "EXPLAIN": "EXPLAIN cannot run here (EXPLAIN ANALYZE would execute its statement)",
}


def check_sql(sql: str) -> None:
    """Raise ``InvalidSql`` unless ``sql`` is exactly one read (SELECT-type) statement that
    does not reveal the server's paths or settings (see ``_disclosure``)."""
    import duckdb

    if not isinstance(sql, str) or not sql.strip():
        raise InvalidSql("the SQL is empty; send one SELECT statement")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise InvalidSql(f"the SQL does not parse: {_first_line(exc)}") from None
    if not statements:
        what = "only a comment" if ("--" in sql or "/*" in sql) else "no statement"
        raise InvalidSql(f"the SQL holds {what}; send one SELECT statement")
    if len(statements) != 1:
        raise InvalidSql(
            f"the SQL holds {len(statements)} statements; send exactly one statement "
            "(remove the extra ';' and what follows it)"
        )
    kind = statements[0].type.name
    if kind != "SELECT":
        hint = _HINTS.get(kind)
        raise InvalidSql(
            hint
            or f"{kind} statements cannot run here: the SQL surface is read-only (SELECT, WITH, "
            "FROM, DESCRIBE, SHOW, SUMMARIZE)"
        )
    check_disclosure(sql, check_sql)


def explain_duckdb_error(exc: Exception) -> InvalidSql:
    """Word a DuckDB error raised by user SQL as an ``InvalidSql`` sentence."""
    import duckdb

    message = _first_line(exc)
    if isinstance(exc, duckdb.PermissionException):
        return InvalidSql(
            "the SQL surface cannot read or write files or reach the network "
            f"(read_csv, read_parquet, glob, ATTACH, … are disabled): {message}"
        )
    if isinstance(exc, duckdb.TransactionException) and "read-only" in message:
        return InvalidSql(f"the SQL surface is read-only: {message}")
    return InvalidSql(message)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def json_safe(value: Any) -> Any:
    """A DuckDB result value as something JSON can carry (times as ISO-8601, NaN as null)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return str(value)


__all__ = ["check_sql", "explain_duckdb_error", "json_safe"]
