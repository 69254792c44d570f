"""Where a ready trace is scored from, in a cluster: this node's file, the lake, or elsewhere.

On one node every ready trace is scored from the node's file. In a cluster a trace's spans
may have reached several nodes (a request duplicated to a second node, a ring that changed
while the trace ran): each node that received spans sees the trace settle in its own file, and
one of them must score it, from the lake, where every node's spans meet. ``Placement`` (the
cluster node implements it, ``tracescore.cluster.ClusterNode.place``) answers per trace:

- ``local``: only this node received it; score it from the file;
- ``lake``: several nodes did and this one owns it (a hash of the trace id over those nodes);
  score it from the lake ∪ this node's unflushed rows;
- ``wait``: not yet (this node's spans of it are not flushed, or the other nodes' flush
  interval since it settled here has not passed), ask again at the time given;
- ``elsewhere``: another node owns it; ask again later (should that node never decide it, this
  one scores it after a while; a pair is decided once whoever does, ``record_decisions``).

``Placer`` keeps, per waiting trace, when to ask next, so a tick asks only about traces due.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from ._selection import OpenTrace

Where = tuple[str, datetime | None]
"""(``local`` | ``lake`` | ``wait`` | ``elsewhere``, when to ask again for the last two)."""


class Placement(Protocol):
    """Answers where traces are scored from (see the module docstring)."""

    def place(self, traces: Sequence[tuple[str, datetime, datetime]], now: datetime
              ) -> dict[str, Where]:
        """For (trace id, last arrival here, ready here at) of ready traces: where each is
        scored from (blocking: PostgreSQL is asked; call from a worker thread)."""
        ...


class Placer:
    """The scheduler's use of a ``Placement``: which ready traces to expand now, and which of
    them from the lake."""

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self._next: dict[str, datetime] = {}

    async def split(self, ready: Sequence[OpenTrace], now: datetime, *, settle: timedelta,
                    max_wait: timedelta, limit: int) -> tuple[list[OpenTrace], set[str]]:
        """Up to ``limit`` of the ready traces that may be expanded now, and the ids among
        them to load from the lake. Traces told to wait stay open."""
        due = [t for t in ready if self._next.get(t.trace_id, now) <= now]
        if not due:
            return [], set()
        asked = due[: max(limit * 4, limit)]
        answers = await asyncio.to_thread(self.placement.place, [
            (t.trace_id, t.last_received, t.ready_at(settle=settle, max_wait=max_wait))
            for t in asked], now)
        out: list[OpenTrace] = []
        lake: set[str] = set()
        for trace in asked:
            where, again = answers.get(trace.trace_id, ("local", None))
            if where in ("local", "lake"):
                if len(out) < limit:
                    out.append(trace)
                    self._next.pop(trace.trace_id, None)
                    if where == "lake":
                        lake.add(trace.trace_id)
            else:
                self._next[trace.trace_id] = again or now
        return out, lake

    def forget(self, trace_ids: Sequence[str]) -> None:
        """Traces no longer open."""
        for trace_id in trace_ids:
            self._next.pop(trace_id, None)


__all__ = ["Placement", "Placer", "Where"]
