"""The guarded user SQL query: one read statement, bounded in rows, bytes and time.

The statement runs on its own cursor in a read-only transaction and its result is streamed
(``fetchmany``), never materialized whole. Rows are converted to JSON-safe values one chunk at a
time and measured as orjson writes them; the answer stops at ``row_limit`` rows or
``max_bytes`` bytes, whichever comes first, with ``truncated`` set and ``truncated_reason``
saying which. The time limit covers the whole call: DuckDB is interrupted when it passes, and
fetching and converting stop there too (``QueryTimeout``). DuckDB itself still computes 2,048
rows at a time, so a query whose single values are huge (``repeat('x', 1000000)``) needs that
much memory inside DuckDB while it runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ._errors import InvalidSql, QueryTimeout, StoreUnavailable
from ._fatal import first_line, is_fatal
from ._guard import check_sql, explain_duckdb_error, json_safe

FETCH_ROWS = 256
"""Rows fetched from DuckDB per step (the unit at which bytes and time are checked)."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The answer of ``Store.query``: column names and types, JSON-safe rows, truncation."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    types: list[str]
    truncated_reason: str | None = None
    """Why the rows stop early (the row or byte limit), or None when they are all here."""
    nbytes: int = 0
    """Size of ``rows`` as JSON (what the byte limit counted)."""


def run_query(
    cursor: Any,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None,
    *,
    row_limit: int,
    timeout_s: float,
    max_bytes: int,
) -> QueryResult:
    """Run one user statement on ``cursor`` (closed by the caller); see the module docstring.

    Raises ``InvalidSql``, ``QueryTimeout``, or ``StoreUnavailable`` (the database was
    invalidated by a fatal DuckDB error).
    """
    import duckdb

    check_sql(sql)
    deadline = time.monotonic() + timeout_s
    timer = threading.Timer(timeout_s, cursor.interrupt)
    timer.daemon = True
    timed_out = QueryTimeout(
        f"the query ran longer than {timeout_s:g} s and was stopped; narrow it "
        "(WHERE, LIMIT) or raise sql_timeout_seconds"
    )
    rows: list[list[Any]] = []
    size = 2  # the brackets of the rows list
    reason: str | None = None
    try:
        cursor.execute("BEGIN TRANSACTION READ ONLY")
        timer.start()
        cursor.execute(sql, params)
        if cursor.description is None:
            raise InvalidSql("the statement returned no result; send a SELECT")
        columns = [str(item[0]) for item in cursor.description]
        types = [str(item[1]) for item in cursor.description]
        while reason is None:
            chunk = cursor.fetchmany(FETCH_ROWS)
            if time.monotonic() > deadline:
                raise timed_out
            if not chunk:
                break
            for raw in chunk:
                if len(rows) == row_limit:
                    reason = f"the answer reached sql_row_limit ({row_limit} rows)"
                    break
                row = [json_safe(value) for value in raw]
                row_size = len(orjson.dumps(row, default=str)) + 1
                if size + row_size > max_bytes:
                    reason = (
                        f"the answer reached sql_max_bytes ({max_bytes} bytes); select fewer "
                        "or smaller columns, or page with LIMIT/OFFSET"
                    )
                    break
                rows.append(row)
                size += row_size
    except duckdb.InterruptException:
        raise timed_out from None
    except duckdb.Error as exc:
        if is_fatal(exc):
            raise StoreUnavailable(
                f"the database hit a fatal DuckDB error and is being reopened: "
                f"{first_line(exc, 200)}"
            ) from None
        raise explain_duckdb_error(exc) from None
    finally:
        timer.cancel()
        try:
            cursor.execute("ROLLBACK")
        except Exception:
            pass
    return QueryResult(
        columns=columns,
        rows=rows,
        truncated=reason is not None,
        types=types,
        truncated_reason=reason,
        nbytes=size,
    )


__all__ = ["FETCH_ROWS", "QueryResult", "run_query"]
