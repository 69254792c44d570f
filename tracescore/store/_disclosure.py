"""The SQL surface's function and relation check: every name a statement uses must be admitted.

What is admitted is an allow-list derived from DuckDB's catalogue (``_allowed``): functions
without side effects that reveal nothing of the server, a short list of table functions
(``range``, ``unnest``, ``json_each``, schema introspection, …), the store's own tables and
views and ``information_schema``. Everything else is refused before the statement runs:
``read_*`` and ``glob`` (files), ``checkpoint()``, ``enable_logging()`` and the other
statements-as-functions (side effects, some of which end the process), ``duckdb_settings()``,
``pg_settings``, ``current_setting()`` (settings and paths).

The check reads the statement's syntax tree from DuckDB's own parser (``json_serialize_sql``),
so every function call and table reference counts wherever it sits (subquery, CTE, lateral
join, ``ORDER BY``, ``DESCRIBE``/``SUMMARIZE`` of a view), however it is quoted, cased or
schema-qualified. ``query('...')`` and ``query_table('...')`` are checked through their constant
arguments and refused when those are computed. A statement the serializer cannot express
(``PIVOT``) is checked word by word instead, which can only refuse more.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ._allowed import Catalogue, catalogue, is_file_function
from ._errors import InvalidSql

_DYNAMIC = frozenset({"query", "query_table"})
_UNCHECKABLE = frozenset({"json_execute_serialized_sql"})
"""Functions running SQL given as data, which no check sees before it runs."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_parser_lock = threading.Lock()
_parser: Any = None


def check_disclosure(sql: str, recheck: Callable[[str], None]) -> None:
    """Raise ``InvalidSql`` when the one read statement ``sql`` uses a name not admitted.

    ``recheck`` is the whole statement check, applied to the SQL given to ``query('...')``.
    """
    check_names(sql, recheck, _catalogue())


def check_names(sql: str, recheck: Callable[[str], None], allowed: Catalogue) -> None:
    """``check_disclosure`` against a given ``Catalogue`` (also used to judge macro bodies)."""
    tree = _serialize(sql)
    if tree is None:
        _check_words(sql, allowed)
        return
    tables: set[int] = set()
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION" and isinstance(node.get("function"), dict):
            function = node["function"]
            tables.add(id(function))
            name = _name(function.get("function_name"))
            if not allowed.admits_table_function(name):
                raise _refusal(name, table=True)
            if name in _DYNAMIC:
                _check_dynamic(function, name, recheck, allowed)
        elif node.get("class") in ("FUNCTION", "WINDOW") and id(node) not in tables:
            name = _name(node.get("function_name"))
            if name in _UNCHECKABLE:
                raise _uncheckable(f"{name}()")
            if not node.get("is_operator") and not allowed.admits_function(name):
                raise _refusal(name, table=False)
            if name in _DYNAMIC and not node.get("is_operator"):
                _check_dynamic(node, name, recheck, allowed)
        elif kind in ("BASE_TABLE", "SHOW_REF"):
            name = _name(node.get("table_name"))
            if name and not allowed.admits_relation(
                    _name(node.get("catalog_name")), _name(node.get("schema_name")), name):
                raise _relation_refusal(name)


def _catalogue() -> Catalogue:
    return catalogue(_connection(), lambda body, partial: check_names(
        body, lambda _sql: None, partial))


def _name(value: Any) -> str:
    return str(value or "").strip('"').lower()


def _check_dynamic(node: dict[str, Any], name: str, recheck: Callable[[str], None],
                   allowed: Catalogue) -> None:
    for text in _constant_texts(node, name):
        if name == "query":
            recheck(text)
        else:
            parts = [_name(part) for part in text.split(".")]
            parts = [""] * (3 - len(parts)) + parts[-3:]
            if not allowed.admits_relation(*parts):
                raise _relation_refusal(parts[-1])


def _refusal(name: str, *, table: bool) -> InvalidSql:
    what = f"{name}()"
    if table and is_file_function(name):
        return InvalidSql(
            f"{what} cannot run here: the SQL surface cannot read or write files or reach the "
            "network; query the tables (spans, traces, scores, ...) instead"
        )
    if name.startswith(("duckdb_", "pragma_", "current_setting")) or name in ("getenv",
                                                                             "which_secret"):
        return _reveals(what)
    kind = "table function" if table else "function"
    return InvalidSql(
        f"{what} cannot run here: it is not on the SQL surface's list of read-only {kind}s "
        "(functions with side effects, and those revealing the server, are refused); see "
        "docs/server.md, HTTP API"
    )


def _relation_refusal(name: str) -> InvalidSql:
    return _reveals(name)


def _reveals(what: str) -> InvalidSql:
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


def _check_words(sql: str, allowed: Catalogue) -> None:
    """The fallback: every word that names something not admitted refuses the statement."""
    for match in _WORD.finditer(sql):
        word = match.group().lower()
        if sql[match.end():].lstrip().startswith("("):
            if word in _DYNAMIC | _UNCHECKABLE:
                raise _uncheckable(f"{word}() in this kind of statement")
            if word in allowed.known and not (word in allowed.functions
                                              or word in allowed.table_functions):
                raise _refusal(word, table=word in allowed.internal_relations)
        elif not allowed.admits_relation("", "", word):
            raise _relation_refusal(word)


def _connection() -> Any:
    """The process's in-memory DuckDB used as a parser and as the catalogue's source."""
    global _parser
    import duckdb

    with _parser_lock:
        if _parser is None:
            _parser = duckdb.connect(":memory:")
        return _parser


def _serialize(sql: str) -> dict[str, Any] | None:
    """DuckDB's syntax tree of ``sql`` as JSON, or None when it cannot be serialized."""
    connection = _connection()
    with _parser_lock:
        cursor = connection.cursor()
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


__all__ = ["check_disclosure", "check_names"]
