"""Many rows into a PostgreSQL table in one statement: one array per column, ``unnest``.

Rows are dicts keyed by column name, as the local writer takes them (``store.rows_table``):
missing keys are NULL, JSON columns take Python values (serialized here the way the local
store does), times are naive UTC datetimes. One ``INSERT … SELECT … FROM unnest(…)`` carries
a whole batch (no statement per row), with ``ON CONFLICT`` on the table's key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from ._pg_schema import SCHEMA, PgTable, base_type, check_columns, pg_type

Conflict = Literal["nothing", "update", "error"]


def pg_value(base: str, value: Any) -> Any:
    """``value`` as PostgreSQL takes it in a column of DuckDB type ``base``."""
    if value is None:
        return None
    if base in ("JSON", "VARCHAR[]"):
        from tracescore.store import to_json_text

        return to_json_text(list(value) if base == "VARCHAR[]" else value)
    if base.startswith("TIMESTAMP") and isinstance(value, datetime) and value.tzinfo:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def array_type(table: PgTable, name: str, base: str) -> str:
    """The PostgreSQL array type carrying values of column ``name`` (of DuckDB type ``base``)."""
    if base in ("JSON", "VARCHAR[]"):
        return "text[]"
    return pg_type(table.name, name, base) + "[]"


def _select_expr(name: str, base: str) -> str:
    if base == "JSON":
        return f"u.{name}::jsonb"
    if base == "VARCHAR[]":
        return (f"CASE WHEN u.{name} IS NULL THEN NULL ELSE "
                f"ARRAY(SELECT jsonb_array_elements_text(u.{name}::jsonb)) END")
    return f"u.{name}"


def insert_sql(table: PgTable, columns: Sequence[str], *, conflict: Conflict = "nothing",
               returning: Sequence[str] = (), where: str = "") -> str:
    """The statement inserting arrays of ``columns`` (one ``%s`` per column, in order); rows
    only ``where`` this condition holds, when given (e.g. ``EXISTS (SELECT 1 FROM done)`` in a
    statement of several parts)."""
    bases = [table.type_of(name) for name in columns]
    arrays = ", ".join(f"%s::{array_type(table, name, base)}"
                       for name, base in zip(columns, bases, strict=True))
    select = ", ".join(_select_expr(name, base) for name, base in zip(columns, bases,
                                                                      strict=True))
    sql = (f"INSERT INTO {SCHEMA}.{table.name} ({', '.join(columns)}) SELECT {select} "
           f"FROM unnest({arrays}) AS u({', '.join(columns)})")
    if where:
        sql += f" WHERE {where}"
    if conflict != "error" and table.key:
        if conflict == "update":
            rest = [name for name in columns if name not in table.key]
            sets = ", ".join(f"{name} = EXCLUDED.{name}" for name in rest)
            sql += f" ON CONFLICT ({', '.join(table.key)}) DO UPDATE SET {sets}"
        else:
            sql += f" ON CONFLICT ({', '.join(table.key)}) DO NOTHING"
    if returning:
        sql += f" RETURNING {', '.join(returning)}"
    return sql


def insert_rows(cur: Any, table: PgTable, rows: Sequence[Mapping[str, Any]], *,
                conflict: Conflict = "nothing", returning: Sequence[str] = (),
                defaults: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Insert ``rows`` into ``table`` on the psycopg cursor ``cur`` in one statement; returns
    the ``returning`` columns of the rows written (none when ``returning`` is empty)."""
    if not rows:
        return []
    columns, params = row_arrays(table, rows, defaults=defaults)
    cur.execute(insert_sql(table, columns, conflict=conflict, returning=returning), params)
    return list(cur.fetchall()) if returning else []


def row_arrays(table: PgTable, rows: Sequence[Mapping[str, Any]], *,
               defaults: Mapping[str, Any] | None = None) -> tuple[list[str], list[list[Any]]]:
    """The columns ``rows`` (or ``defaults``) give values for, in the table's order, and one
    list of values per column: ``insert_sql``'s columns and parameters."""
    check_columns(table, rows)
    defaults = defaults or {}
    present = set(defaults)
    for row in rows:
        present.update(row)
    columns = [name for name in table.column_names if name in present]
    params = []
    for name in columns:
        base = table.type_of(name)
        default = defaults.get(name)
        params.append([pg_value(base, row.get(name, default)) for row in rows])
    return columns, params


def columns_from_arrow(arrow_table: Any) -> dict[str, list[Any]]:
    """An Arrow table's columns as Python lists (for ``insert_columns``)."""
    return {name: arrow_table.column(name).to_pylist() for name in arrow_table.column_names}


def insert_columns(cur: Any, table: PgTable, columns: Mapping[str, Sequence[Any]], *,
                   conflict: Conflict = "update") -> int:
    """Insert column lists (already in the table's storage form: JSON as text) in one
    statement; returns how many rows were given."""
    names = [name for name in table.column_names if name in columns]
    if not names:
        return 0
    count = len(columns[names[0]])
    if not count:
        return 0
    params = []
    for name in names:
        base = table.type_of(name)
        values = list(columns[name])
        if base == "VARCHAR[]":
            values = [pg_value(base, v) for v in values]
        params.append(values)
    cur.execute(insert_sql(table, names, conflict=conflict), params)
    return count


__all__ = ["Conflict", "array_type", "base_type", "columns_from_arrow", "insert_columns",
           "insert_rows", "insert_sql", "pg_value", "row_arrays"]
