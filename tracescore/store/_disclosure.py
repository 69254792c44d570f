"""Which DuckDB functions and views the SQL surface refuses because they reveal the server.

``duckdb_databases()`` and ``pragma_database_list`` show the database file's absolute path,
``duckdb_settings()`` and ``current_setting()`` the temp and extension directories and every
limit, ``duckdb_extensions()``/``duckdb_secrets()``/``duckdb_temporary_files()`` more paths,
``duckdb_memory()`` and ``duckdb_logs`` the server's internals. Schema introspection users need
stays open: ``duckdb_tables()``, ``duckdb_columns()`` and the others in ``SCHEMA_NAMES``,
``information_schema``, ``DESCRIBE`` and ``SHOW``.

The check reads the statement's syntax tree from DuckDB's own parser (``json_serialize_sql``),
so every function call and table reference counts wherever it sits (subquery, CTE, lateral
join, ``ORDER BY``), however it is quoted, cased or schema-qualified. ``query('...')`` and
``query_table('...')`` are checked through their constant arguments and refused when those are
computed. A statement the serializer cannot express (``PIVOT``) is checked word by word instead,
which can only refuse more.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ._errors import InvalidSql

SCHEMA_NAMES = frozenset({
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_schemas", "duckdb_indexes",
    "duckdb_constraints", "duckdb_types", "duckdb_functions", "duckdb_keywords",
    "duckdb_sequences", "duckdb_dependencies", "pragma_table_info", "pragma_show",
})
"""``duckdb_*``/``pragma_*`` names that only describe the schema: allowed."""

REFUSED_NAMES = frozenset({"current_setting", "getenv", "which_secret"})
"""Functions refused by name besides every other ``duckdb_*`` and ``pragma_*`` name."""

_DYNAMIC = frozenset({"query", "query_table"})
_UNCHECKABLE = frozenset({"json_execute_serialized_sql"})
"""Functions running SQL given as data, which no check sees before it runs."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_parser_lock = threading.Lock()
_parser: Any = None


def is_refused(name: str) -> bool:
    """True when a function or view called ``name`` reveals paths, settings or internals."""
    name = name.strip('"').lower()
    if name in SCHEMA_NAMES:
        return False
    return name in REFUSED_NAMES or name.startswith(("duckdb_", "pragma_"))


def check_disclosure(sql: str, recheck: Callable[[str], None]) -> None:
    """Raise ``InvalidSql`` when the one read statement ``sql`` uses a refused name.

    ``recheck`` is the whole statement check, applied to the SQL given to ``query('...')``.
    """
    tree = _serialize(sql)
    if tree is None:
        _check_words(sql)
        return
    for node in _nodes(tree):
        kind = node.get("type")
        if node.get("class") == "FUNCTION":
            name = str(node.get("function_name") or "").lower()
            if is_refused(name):
                raise _refusal(f"{name}()")
            if name in _UNCHECKABLE:
                raise _uncheckable(f"{name}()")
            if name in _DYNAMIC and not node.get("is_operator"):
                for text in _constant_texts(node, name):
                    if name == "query":
                        recheck(text)
                    elif is_refused(text.split(".")[-1]):
                        raise _refusal(text)
        elif kind in ("BASE_TABLE", "SHOW_REF"):
            name = str(node.get("table_name") or "")
            if name and is_refused(name):
                raise _refusal(name.strip('"').lower())


def _refusal(what: str) -> InvalidSql:
    return InvalidSql(
        f"{what} cannot run here: it reveals the server's file paths, settings or internals; "
        "for the schema use duckdb_tables(), duckdb_columns(), information_schema, DESCRIBE "
        "or SHOW TABLES"
    )


def _uncheckable(what: str) -> InvalidSql:
    return InvalidSql(
        f"{what} cannot run here: the SQL surface checks every statement before it runs, "
        "and SQL built at run time escapes that check; write the query out instead"
    )


def _constant_texts(node: dict[str, Any], name: str) -> Iterator[str]:
    """The constant string arguments of ``query``/``query_table`` (refused when computed)."""
    for argument in node.get("arguments") or []:
        expression = argument.get("expression") if isinstance(argument, dict) else None
        items = [expression]
        if isinstance(expression, dict) and expression.get("function_name") == "list_value":
            items = [a.get("expression") for a in expression.get("arguments") or []]
        for item in items:
            literal = item.get("literal") if isinstance(item, dict) else None
            if not isinstance(literal, dict) or literal.get("kind") not in ("STRING", "BOOLEAN"):
                raise _uncheckable(f"{name}() with a computed argument")
            if literal.get("kind") == "STRING":
                yield str(literal.get("text") or "")


def _check_words(sql: str) -> None:
    for match in _WORD.finditer(sql):
        word = match.group().lower()
        if is_refused(word):
            raise _refusal(word)
        if word in _DYNAMIC | _UNCHECKABLE and sql[match.end():].lstrip().startswith("("):
            raise _uncheckable(f"{word}() in this kind of statement")


def _serialize(sql: str) -> dict[str, Any] | None:
    """DuckDB's syntax tree of ``sql`` as JSON, or None when it cannot be serialized."""
    global _parser
    import duckdb

    with _parser_lock:
        if _parser is None:
            _parser = duckdb.connect(":memory:")
        cursor = _parser.cursor()
    try:
        [text] = cursor.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()
    finally:
        cursor.close()
    tree = json.loads(text)
    return None if tree.get("error") else tree


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


__all__ = ["REFUSED_NAMES", "SCHEMA_NAMES", "check_disclosure", "is_refused"]
