"""``StoreLike``: what the rooms that receive a store (live scoring, the server's helpers) use of
it, as a typed protocol instead of ``Any``. ``Store`` satisfies it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from ._writer import WriterStats

T = TypeVar("T")


class StoreLike(Protocol):
    """Reads on cursors, writes through the single writer (see ``Store``)."""

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> list[
        dict[str, Any]
    ]:
        """A trusted read: row dicts."""
        ...

    async def write(self, fn: Callable[[Any], T]) -> T:
        """``fn(conn)`` in one writer transaction."""
        ...

    async def write_scores(
        self,
        scores: Sequence[Mapping[str, Any]],
        judge_executions: Sequence[Mapping[str, Any]] = (),
        decisions: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Score, judge-execution and decision rows in one transaction."""
        ...

    def stats(self) -> WriterStats:
        """The writer's counters (spans received, commits, ...)."""
        ...

    def fetch_trace_rows(self, trace_id: str) -> list[dict[str, Any]]:
        """The span rows of one trace."""
        ...

    def fetch_trace_logs(self, trace_id: str) -> list[dict[str, Any]]:
        """The log rows of one trace."""
        ...

    def fetch_recent_traces(
        self, trace_ids: Sequence[str], *, spans_since: Any, logs_since: Any
    ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
        """Span and log rows of many recently received traces, by trace id."""
        ...

    def fetch_recent_spans(
        self, trace_ids: Sequence[str], *, since: Any
    ) -> dict[str, list[dict[str, Any]]]:
        """Span rows of many recently received traces, by trace id."""
        ...


__all__ = ["StoreLike"]
