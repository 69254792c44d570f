"""The lake's maintenance, one node at a time (a PostgreSQL advisory lock, not waited for).

Every ``maintenance_interval_seconds`` each node tries ``pg_try_advisory_lock``; the one that
gets it, in order: moves rows DuckLake inlined into its catalog (small flushes) to Parquet
files, merges small adjacent files, deletes rows older than ``retention_days`` days of arrival
(and the ``flushes`` notes of those days, but each node's last two: a restarted node reads its
last flush and the one before it back), expires snapshots older than
``snapshot_retention_seconds``, and removes the files no snapshot needs any more and files of
transactions that never committed (an hour old at least, so a flush under way keeps its files).
Each step is its own lake transaction, retried like a flush. Writers keep writing meanwhile:
maintenance takes no lock they wait on.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ._config import ClusterSettings
from ._lake import LAKE, transaction, with_catalog_retry

log = logging.getLogger(__name__)

LOCK_KEY = 0x7472_6163_6573_02
"""``pg_try_advisory_lock`` key of the lake's maintenance."""
ORPHAN_GRACE = "INTERVAL 1 HOUR"
KEPT_FLUSHES = 2
"""Each node's last flushes kept in the lake's ``flushes`` past ``retention_days``: ``recover``
reads the last one (the node's mark) and the one before it (where its ``traces`` upsert
starts)."""


@dataclass(slots=True)
class MaintenanceResult:
    """What one maintenance run did (counts as DuckLake reports them)."""

    steps: dict[str, int] = field(default_factory=dict)
    duration_ms: float = 0.0


class Maintenance:
    """Runs the lake's maintenance when due and when no other node is running it."""

    def __init__(self, settings: ClusterSettings, pg: Callable[[], Any]) -> None:
        self.settings = settings
        self._pg = pg
        self._last = time.monotonic()
        self.runs = 0
        self.skipped = 0
        """Runs not made because another node held the lock."""
        self.last: MaintenanceResult | None = None

    def due(self) -> bool:
        """True once ``maintenance_interval_seconds`` passed since the last try."""
        return time.monotonic() - self._last >= self.settings.maintenance_interval_seconds

    def run(self, store: Any) -> MaintenanceResult | None:
        """Run every step on ``store``'s lake if this node gets the lock; None otherwise."""
        self._last = time.monotonic()
        conn = self._pg()
        try:
            conn.autocommit = True
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY]).fetchone()[0]
            if not got:
                self.skipped += 1
                return None
            try:
                result = self._steps(store)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
        finally:
            conn.close()
        self.runs += 1
        self.last = result
        log.info("lake maintenance by node %s: %s (%.0f ms)", self.settings.node_id,
                 ", ".join(f"{k} {v}" for k, v in result.steps.items()), result.duration_ms)
        return result

    def _steps(self, store: Any) -> MaintenanceResult:
        began = time.perf_counter()
        result = MaintenanceResult()
        steps: list[tuple[str, str, list[Any]]] = [
            ("inlined_flushed", f"SELECT count(*) FROM ducklake_flush_inlined_data('{LAKE}')", []),
            ("files_merged",
             f"SELECT count(*) FROM ducklake_merge_adjacent_files('{LAKE}')", []),
        ]
        if self.settings.retention_days:
            today = datetime.now(UTC).replace(tzinfo=None, hour=0, minute=0, second=0,
                                              microsecond=0)
            cut = today - timedelta(days=self.settings.retention_days)
            for table in ("spans", "logs", "model_calls"):
                steps.append((f"{table}_deleted",
                              f"DELETE FROM {LAKE}.{table} WHERE received_at < ?", [cut]))
            steps.append(("flushes_deleted", _FLUSHES_DELETE, [cut, KEPT_FLUSHES]))
        keep_s = int(self.settings.snapshot_retention_seconds)
        steps += [
            ("snapshots_expired",
             f"SELECT count(*) FROM ducklake_expire_snapshots('{LAKE}', older_than => "
             f"now() - INTERVAL {keep_s} SECOND)", []),
            ("files_removed",
             f"SELECT count(*) FROM ducklake_cleanup_old_files('{LAKE}', older_than => "
             f"now() - {ORPHAN_GRACE})", []),
            ("orphans_removed",
             f"SELECT count(*) FROM ducklake_delete_orphaned_files('{LAKE}', older_than => "
             f"now() - {ORPHAN_GRACE})", []),
        ]
        for name, sql, params in steps:
            result.steps[name] = with_catalog_retry(functools.partial(_one, store, sql, params))
        result.duration_ms = (time.perf_counter() - began) * 1000
        return result


_FLUSHES_DELETE = (
    f"DELETE FROM {LAKE}.flushes WHERE flushed_at < ? AND (node_id, flush_no) NOT IN ("
    f"SELECT node_id, flush_no FROM {LAKE}.flushes "
    "QUALIFY row_number() OVER (PARTITION BY node_id ORDER BY flush_no DESC) <= ?)"
)
"""The notes of flushes older than the retention cut (their rows are gone with them), each
node's last ``KEPT_FLUSHES`` excepted: without it the table grows by a row per flush per node
for ever, and every node's mark and recovery read scan it."""


def _one(store: Any, sql: str, params: list[Any]) -> int:
    with transaction(store) as cur:
        row = cur.execute(sql, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


__all__ = ["KEPT_FLUSHES", "LOCK_KEY", "Maintenance", "MaintenanceResult"]
