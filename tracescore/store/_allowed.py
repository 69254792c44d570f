"""The SQL surface's allow-list: which functions and relations a read-only analyst may use.

Derived once per process from DuckDB's own catalogue (``duckdb_functions()``,
``duckdb_views()`` of a fresh in-memory database) by these rules:

* **Scalar, aggregate and window functions** are admitted unless DuckDB marks them
  ``has_side_effects`` (``nextval``, ``setseed``, ``sleep_ms``, ``write_log``, …) or they are in
  ``REVEALING`` (``current_setting``, …). ``VOLATILE_READS`` takes back the side-effect-free
  volatile ones (``random``, ``uuid``, …).
* **Macros** (scalar and table) are admitted when every definition of the name passes these
  same rules: ``pg_sleep`` (``sleep_ms``) and ``duckdb_logs_parsed`` (``duckdb_logs``) do not.
* **Table functions** are admitted only by name from ``TABLE_FUNCTIONS``: the catalogue does
  not mark their side effects (``checkpoint()`` and ``enable_logging()`` look like ``range()``),
  so this part is a hand list: ``range``, ``generate_series``, ``unnest``, ``repeat``,
  ``json_each``/``json_tree``, ``query``/``query_table`` (their SQL is checked too) and the
  schema introspection in ``SCHEMA_NAMES``. ``read_*``, ``glob``, ``parquet_*``, ``checkpoint``,
  ``enable_*``/``disable_*``, ``duckdb_settings`` and every other are refused.
* **Relations**: ``information_schema`` views are admitted. A name in the ``system`` catalog or
  the ``pg_catalog`` schema, or one that is one of DuckDB's internal views or a table function
  (``FROM duckdb_databases``, ``pg_settings``), is admitted only when it is in
  ``SCHEMA_NAMES``. Every other name (the store's tables and views, CTEs) passes, and DuckDB
  says whether it exists.

A name the catalogue does not know is left to DuckDB, which refuses it at bind time (the store
defines no functions of its own and cannot load extensions).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

SCHEMA_NAMES = frozenset({
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_schemas", "duckdb_indexes",
    "duckdb_constraints", "duckdb_types", "duckdb_functions", "duckdb_keywords",
    "duckdb_sequences", "duckdb_dependencies", "pragma_table_info", "pragma_show",
})
"""Schema introspection admitted as a table function or as a view."""

TABLE_FUNCTIONS = SCHEMA_NAMES | frozenset({
    "range", "generate_series", "unnest", "repeat", "repeat_row", "json_each", "json_tree",
    "query", "query_table", "pg_timezone_names", "icu_calendar_names",
})
"""Table functions admitted (a hand list; see the module docstring)."""

REVEALING = frozenset({"current_setting", "getenv", "which_secret", "stats", "vector_type"})
"""Side-effect-free functions refused because they reveal settings or internals."""

VOLATILE_READS = frozenset({"random", "uuid", "uuidv4", "uuidv7", "gen_random_uuid", "error"})
"""Functions DuckDB marks as having side effects that only produce a value (or an error)."""

FILE_FUNCTIONS = ("read_", "glob", "parquet_", "sniff_csv", "seq_scan")
"""Name starts of the table functions that read files (worded as such when refused)."""

_SCALAR_TYPES = ("scalar", "aggregate", "window")
_MACRO_TYPES = ("macro", "table_macro")


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The allow-list as sets of lower-case names."""

    functions: frozenset[str]
    """Scalar, aggregate, window functions and scalar macros admitted."""
    table_functions: frozenset[str]
    """Table functions and table macros admitted."""
    known: frozenset[str]
    """Every function name the catalogue has (admitted or not)."""
    internal_relations: frozenset[str]
    """Names of DuckDB's internal views outside ``information_schema`` and of every table
    function: as relations, only ``SCHEMA_NAMES`` of them are admitted."""

    def admits_function(self, name: str) -> bool:
        """True when a scalar/aggregate/window call of ``name`` may run (a call of an admitted
        table function, ``unnest(list)`` in a select list, is one too)."""
        return name in self.functions or name in self.table_functions or name not in self.known

    def admits_table_function(self, name: str) -> bool:
        """True when ``FROM name(...)`` may run."""
        return name in self.table_functions or name not in self.known

    def admits_relation(self, catalog: str, schema: str, name: str) -> bool:
        """True when ``FROM catalog.schema.name`` may be read (parts lower-case, "" if absent)."""
        if schema == "information_schema":
            return True
        if catalog == "system" or schema == "pg_catalog" or name in self.internal_relations:
            return name in SCHEMA_NAMES
        return True


_lock = threading.Lock()
_catalogue: Catalogue | None = None


def catalogue(conn: Any, check_macro: Any) -> Catalogue:
    """The process's ``Catalogue``, built on first use from ``conn`` (a fresh in-memory
    connection); ``check_macro(sql)`` raises for a macro body that the rules refuse."""
    global _catalogue
    with _lock:
        if _catalogue is None:
            _catalogue = _build(conn, check_macro)
        return _catalogue


def _build(conn: Any, check_macro: Any) -> Catalogue:
    cursor = conn.cursor()
    try:
        rows = cursor.execute(
            "SELECT lower(function_name), function_type, has_side_effects, macro_definition "
            "FROM duckdb_functions()"
        ).fetchall()
        views = cursor.execute(
            "SELECT lower(schema_name), lower(view_name) FROM duckdb_views() WHERE internal"
        ).fetchall()
    finally:
        cursor.close()
    known = frozenset(name for name, *_ in rows)
    refused = {name for name, kind, effects, _ in rows
               if kind in _SCALAR_TYPES and effects and name not in VOLATILE_READS}
    refused |= REVEALING
    functions = {name for name, kind, *_ in rows if kind in _SCALAR_TYPES} - refused
    tables = {name for name, kind, *_ in rows if kind == "table"} & TABLE_FUNCTIONS
    partial = Catalogue(
        functions=frozenset(functions), table_functions=frozenset(tables), known=known,
        internal_relations=frozenset(
            {name for schema, name in views if schema != "information_schema"}
            | {name for name, kind, *_ in rows if kind == "table"}),
    )
    macros: dict[str, list[tuple[str, str]]] = {}
    for name, kind, _, definition in rows:
        if kind in _MACRO_TYPES:
            macros.setdefault(name, []).append((kind, definition or ""))
    admitted: dict[str, set[str]] = {kind: set() for kind in _MACRO_TYPES}
    for name, definitions in macros.items():
        if name in REVEALING:
            continue
        try:
            for kind, definition in definitions:
                body = definition if kind == "table_macro" else f"SELECT {definition}"
                check_macro(body, partial)
        except Exception:
            continue
        for kind, _ in definitions:
            admitted[kind].add(name)
    return Catalogue(
        functions=partial.functions | admitted["macro"],
        table_functions=partial.table_functions | admitted["table_macro"],
        known=known,
        internal_relations=partial.internal_relations,
    )


def is_file_function(name: str) -> bool:
    """True for the table functions that read files (``read_csv``, ``glob``, …)."""
    return name.startswith(FILE_FUNCTIONS)


__all__ = [
    "FILE_FUNCTIONS",
    "REVEALING",
    "SCHEMA_NAMES",
    "TABLE_FUNCTIONS",
    "VOLATILE_READS",
    "Catalogue",
    "catalogue",
    "is_file_function",
]
