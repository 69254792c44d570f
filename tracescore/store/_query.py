"""The guarded user SQL query: one read statement, bounded in rows, bytes and time.

The statement runs on its own cursor in a read-only transaction and its result is streamed in
Arrow record batches of ``FETCH_ROWS`` rows, never materialized whole. Each batch is converted a
slice of about ``FETCH_BYTES`` at a time (one row when rows are wider), by DuckDB itself so every
type comes back as a plain fetch gives it, then to JSON-safe values written by orjson one row at
a time; the answer stops at ``row_limit`` rows or ``max_bytes``
bytes, whichever comes first, with ``truncated`` set and ``truncated_reason`` saying which.
``run_query_json`` keeps only each row's JSON text, so the server holds one step of Python
values plus at most ``max_bytes`` of JSON, whatever the query yields.

The time limit covers the whole call: DuckDB is interrupted when it passes, and fetching and
converting stop there too (``QueryTimeout``). DuckDB computes 2,048 rows at a time and hands
such a vector to its client whole, so a constant repeated over many rows (``SELECT
repeat('x', 1000000) FROM range(2048)``: 2 GB for one vector) needs that much memory while
DuckDB hands it over, whatever the byte cap; other values count against DuckDB's memory limit
(beyond it, an error: 400).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ._errors import InvalidSql, QueryTimeout, StoreUnavailable
from ._fatal import first_line, is_fatal
from ._guard import check_sql, explain_duckdb_error, json_safe

FETCH_ROWS = 256
"""Rows per Arrow record batch read from DuckDB (the unit at which time is checked)."""

FETCH_BYTES = 4 * 1024 * 1024
"""About how many bytes of a batch are converted to Python at a time: with wide rows fewer
rows (down to one), so the Python copies stay near this size."""


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


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    """The answer of ``Store.query_json``: the rows already as JSON text, one piece per row, so
    the server never holds the rows as Python values and as JSON at once."""

    columns: list[str]
    types: list[str]
    pieces: list[bytes]
    """Each row's JSON array."""
    truncated: bool
    truncated_reason: str | None
    nbytes: int

    def chunks(self, chunk_bytes: int = 1024 * 1024) -> Iterator[bytes]:
        """The ``/api/sql`` answer's JSON in chunks of about ``chunk_bytes`` (for a streamed
        response: one copy of a chunk at a time, never of the whole answer)."""
        yield b'{"columns":' + orjson.dumps(self.columns) + b',"rows":['
        batch: list[bytes] = []
        size = 0
        separator = b""
        for piece in self.pieces:
            batch.append(piece)
            size += len(piece)
            if size >= chunk_bytes:
                yield separator + b",".join(batch)
                batch, size, separator = [], 0, b","
        if batch:
            yield separator + b",".join(batch)
        yield (b'],"truncated":' + orjson.dumps(self.truncated) + b',"truncated_reason":'
               + orjson.dumps(self.truncated_reason) + b',"types":' + orjson.dumps(self.types)
               + b"}")


@dataclass(slots=True)
class _Meta:
    columns: list[str]
    types: list[str]
    reason: str | None
    size: int


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
    rows: list[list[Any]] = []
    meta = _run(cursor, sql, params, row_limit=row_limit, timeout_s=timeout_s,
                max_bytes=max_bytes, keep=lambda row, _piece: rows.append(row))
    return QueryResult(columns=meta.columns, rows=rows, truncated=meta.reason is not None,
                       types=meta.types, truncated_reason=meta.reason, nbytes=meta.size)


def run_query_json(
    cursor: Any,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None,
    *,
    row_limit: int,
    timeout_s: float,
    max_bytes: int,
) -> QueryAnswer:
    """``run_query`` keeping only each row's JSON text (``QueryAnswer``)."""
    pieces: list[bytes] = []
    meta = _run(cursor, sql, params, row_limit=row_limit, timeout_s=timeout_s,
                max_bytes=max_bytes, keep=lambda _row, piece: pieces.append(piece))
    return QueryAnswer(columns=meta.columns, types=meta.types, pieces=pieces,
                       truncated=meta.reason is not None, truncated_reason=meta.reason,
                       nbytes=meta.size)


def _run(
    cursor: Any,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None,
    *,
    row_limit: int,
    timeout_s: float,
    max_bytes: int,
    keep: Callable[[list[Any], bytes], Any],
) -> _Meta:
    """The streaming loop: read Arrow record batches, convert a slice of about
    ``FETCH_BYTES`` at a time, measure each row and hand it to ``keep`` (dropping it here),
    until the rows end or a limit is reached."""
    import duckdb

    check_sql(sql)
    deadline = time.monotonic() + timeout_s
    timer = threading.Timer(timeout_s, cursor.interrupt)
    timer.daemon = True
    timed_out = QueryTimeout(
        f"the query ran longer than {timeout_s:g} s and was stopped; narrow it "
        "(WHERE, LIMIT) or raise sql_timeout_seconds"
    )
    meta = _Meta(columns=[], types=[], reason=None, size=2)  # 2: the brackets of the rows
    count = 0
    reader: Any = None
    try:
        # DuckDB's own types travel through Arrow (HUGEINT, UUID, TIMESTAMP_NS, MAP, ...) and
        # come back as DuckDB converts them, the same values a plain fetch gives
        cursor.execute("SET SESSION arrow_lossless_conversion = true")
        cursor.execute("BEGIN TRANSACTION READ ONLY")
        timer.start()
        relation = cursor.sql(sql, params=params)
        if relation is None:
            raise InvalidSql("the statement returned no result; send a SELECT")
        meta.columns = [str(name) for name in relation.columns]
        meta.types = [str(kind) for kind in relation.types]
        reader = relation.to_arrow_reader(FETCH_ROWS)
        for batch in _batches(reader):
            if time.monotonic() > deadline:
                raise timed_out
            step = max(1, len(batch) * FETCH_BYTES // max(batch.nbytes, 1))
            for start in range(0, len(batch), step):
                for raw in _python_rows(batch.slice(start, step)):
                    if count == row_limit:
                        meta.reason = f"the answer reached sql_row_limit ({row_limit} rows)"
                        break
                    row = [json_safe(value) for value in raw]
                    piece = orjson.dumps(row, default=str)
                    if meta.size + len(piece) + 1 > max_bytes:
                        meta.reason = (
                            f"the answer reached sql_max_bytes ({max_bytes} bytes); select "
                            "fewer or smaller columns, or page with LIMIT/OFFSET"
                        )
                        break
                    keep(row, piece)
                    meta.size += len(piece) + 1
                    count += 1
                if meta.reason is not None or time.monotonic() > deadline:
                    break
            if meta.reason is not None:
                break
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
        if reader is not None:
            reader.close()
        try:
            cursor.execute("ROLLBACK")
        except Exception:
            pass
    return meta


def _batches(reader: Any) -> Iterator[Any]:
    """The reader's record batches; an error DuckDB raised while producing one (Arrow hands it
    over as an ``OSError``) becomes the matching DuckDB exception again."""
    import duckdb

    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except OSError as exc:
            text = str(exc)
            if text.startswith("INTERRUPT"):
                raise duckdb.InterruptException(text) from None
            if "database has been invalidated" in text:
                raise duckdb.FatalException(text) from None
            raise duckdb.Error(text) from None
        yield batch


_converter_lock = threading.Lock()
_converter: Any = None


def _python_rows(part: Any) -> list[tuple[Any, ...]]:
    """Python rows of an Arrow slice, converted by DuckDB itself (a process-wide in-memory
    connection scanning the slice), so every type converts exactly as a plain fetch would."""
    global _converter
    import duckdb
    import pyarrow as pa

    with _converter_lock:
        if _converter is None:
            _converter = duckdb.connect(":memory:")
        cursor = _converter.cursor()
    try:
        rows: list[tuple[Any, ...]] = cursor.from_arrow(pa.Table.from_batches([part])).fetchall()
        return rows
    finally:
        cursor.close()


__all__ = ["FETCH_BYTES", "FETCH_ROWS", "QueryAnswer", "QueryResult", "run_query",
           "run_query_json"]
