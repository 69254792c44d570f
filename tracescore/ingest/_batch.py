"""The span and log batches decoders fill: defined by the store (its input contract)."""

from tracescore.store import (
    LOG_COLUMNS,
    LOG_JSON_COLUMNS,
    SPAN_COLUMNS,
    SPAN_JSON_COLUMNS,
    LogBatch,
    SpanBatch,
)

__all__ = ["LOG_COLUMNS", "LOG_JSON_COLUMNS", "SPAN_COLUMNS", "SPAN_JSON_COLUMNS", "LogBatch",
           "SpanBatch"]
