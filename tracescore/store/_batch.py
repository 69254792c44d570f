"""Columnar batches of decoded spans and log records: the store's input contract.

Defined here, with the store that consumes them, so ``tracescore.ingest`` (which produces them)
depends on the store and never the other way round.

Decoders fill one list per column (plain Python values, JSON columns already serialized with
orjson) so the store can build one Arrow table per commit without touching each row again.
``to_dicts`` turns a batch back into the row dicts of INTERFACES.md for tools and tests.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ._arrow import LOG_INPUT_COLUMNS, SPAN_INPUT_COLUMNS

SPAN_COLUMNS: tuple[str, ...] = SPAN_INPUT_COLUMNS
"""Column order of a span batch: the store's span input columns (one contract, kept there);
JSON columns (attributes, resource_attributes, events, links) hold serialized JSON text."""

LOG_COLUMNS: tuple[str, ...] = LOG_INPUT_COLUMNS
"""Column order of a log batch; body, attributes and resource_attributes hold JSON text."""

SPAN_JSON_COLUMNS = frozenset({"attributes", "resource_attributes", "events", "links"})
LOG_JSON_COLUMNS = frozenset({"body", "attributes", "resource_attributes"})


@dataclass(slots=True)
class _Batch:
    columns: dict[str, list[Any]]
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        first = next(iter(self.columns.values()), [])
        return len(first)

    def reject(self, message: str) -> None:
        """Count one invalid item and keep the first few reasons for ``error_message``."""
        self.rejected += 1
        if len(self.errors) < 5 and message not in self.errors:
            self.errors.append(message)

    def project_counts(self) -> Counter[str]:
        """Rows per project."""
        return Counter(self.columns["project"])

    @property
    def error_message(self) -> str:
        """The OTLP ``partial_success.error_message``: why items were rejected, or ''."""
        if not self.rejected:
            return ""
        return f"{self.rejected} rejected: " + "; ".join(self.errors)


@dataclass(slots=True)
class SpanBatch(_Batch):
    """Decoded spans, one list per column of ``SPAN_COLUMNS``, plus what was rejected."""

    @classmethod
    def empty(cls) -> SpanBatch:
        """A batch with no rows."""
        return cls({name: [] for name in SPAN_COLUMNS})

    def to_dicts(self) -> list[dict[str, Any]]:
        """The span row dicts of INTERFACES.md (JSON columns parsed back)."""
        return _to_dicts(self.columns, SPAN_COLUMNS, SPAN_JSON_COLUMNS)


@dataclass(slots=True)
class LogBatch(_Batch):
    """Decoded log records, one list per column of ``LOG_COLUMNS``, plus what was rejected."""

    @classmethod
    def empty(cls) -> LogBatch:
        """A batch with no rows."""
        return cls({name: [] for name in LOG_COLUMNS})

    def to_dicts(self) -> list[dict[str, Any]]:
        """The log row dicts of INTERFACES.md (JSON columns parsed back, no ``log_id``)."""
        rows = _to_dicts(self.columns, LOG_COLUMNS, LOG_JSON_COLUMNS)
        for row in rows:
            row.pop("log_id", None)
        return rows


def _to_dicts(
    columns: dict[str, list[Any]], names: tuple[str, ...], json_names: frozenset[str]
) -> list[dict[str, Any]]:
    lists = [columns[name] for name in names]
    rows = []
    for values in zip(*lists, strict=True):
        row = dict(zip(names, values, strict=True))
        for name in json_names:
            text = row[name]
            row[name] = orjson.loads(text) if text is not None else None
        rows.append(row)
    return rows


__all__ = ["LOG_COLUMNS", "LOG_JSON_COLUMNS", "SPAN_COLUMNS", "SPAN_JSON_COLUMNS", "LogBatch",
           "SpanBatch"]
