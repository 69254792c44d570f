"""DuckDB storage: schema and migrations, the single group-commit writer, reads, the SQL surface.

``Store(path).open()`` owns one database file. Writes (spans, logs, scores, arbitrary functions
of the connection) go through one writer thread and resolve after their commit; reads run on
their own cursors; ``Store.query`` is the guarded, read-only SQL surface for users.
"""

from ._arrow import (
    LOG_INPUT_COLUMNS,
    SPAN_INPUT_COLUMNS,
    arrow_span_table,
    rows_table,
    to_json_text,
)
from ._batch import (
    LOG_COLUMNS,
    LOG_JSON_COLUMNS,
    SPAN_COLUMNS,
    SPAN_JSON_COLUMNS,
    LogBatch,
    SpanBatch,
)
from ._checkpoint import CheckpointPolicy
from ._errors import (
    BatchTooLarge,
    DamagedWal,
    DatabaseDamaged,
    DuplicateRows,
    InvalidRow,
    InvalidSql,
    QueryTimeout,
    RetryLater,
    SqlBusy,
    StoreClosed,
    StoreError,
    StoreUnavailable,
    WriteQueueFull,
)
from ._experiment_rows import experiment_writer, insert_arrow
from ._guard import check_sql, json_safe
from ._judge_cache import StoreJudgeCache
from ._model_calls import ready_query, stale_count_sql, write_recompute
from ._opened import opened_store
from ._protocol import StoreLike
from ._query import QueryAnswer, QueryResult, run_query, run_query_json
from ._schema import MIGRATIONS, PRIMARY_KEYS, SCHEMA_VERSION, TABLES, column_names
from ._sql_slots import SqlSlots
from ._store import LOG_ROWS_SELECT, SPAN_ROWS_SELECT, Store, score_rows_writer
from ._traces_table import STALE_PREDICATE
from ._views import arrow_view
from ._wal import WalReport, inspect_wal
from ._writer import WriterStats

__all__ = [
    "LOG_COLUMNS",
    "LOG_JSON_COLUMNS",
    "LOG_ROWS_SELECT",
    "SPAN_COLUMNS",
    "SPAN_JSON_COLUMNS",
    "LogBatch",
    "SpanBatch",
    "LOG_INPUT_COLUMNS",
    "MIGRATIONS",
    "PRIMARY_KEYS",
    "SCHEMA_VERSION",
    "SPAN_INPUT_COLUMNS",
    "SPAN_ROWS_SELECT",
    "STALE_PREDICATE",
    "TABLES",
    "BatchTooLarge",
    "DamagedWal",
    "DatabaseDamaged",
    "DuplicateRows",
    "CheckpointPolicy",
    "InvalidRow",
    "InvalidSql",
    "QueryAnswer",
    "QueryResult",
    "QueryTimeout",
    "RetryLater",
    "SqlBusy",
    "SqlSlots",
    "Store",
    "StoreClosed",
    "StoreError",
    "StoreJudgeCache",
    "StoreLike",
    "StoreUnavailable",
    "WriteQueueFull",
    "WalReport",
    "WriterStats",
    "arrow_span_table",
    "arrow_view",
    "check_sql",
    "column_names",
    "experiment_writer",
    "insert_arrow",
    "inspect_wal",
    "json_safe",
    "opened_store",
    "ready_query",
    "rows_table",
    "run_query",
    "run_query_json",
    "score_rows_writer",
    "stale_count_sql",
    "to_json_text",
    "write_recompute",
]
