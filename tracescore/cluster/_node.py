"""``ClusterNode``: one tracescore server's part in a cluster.

It plugs into the node's ``Store`` at connect time (``on_connect``: load the extensions,
attach the lake and PostgreSQL, create or widen both schemas, create the ``cluster`` views;
the data directory stays reachable after the store locks external access down), then runs one
background thread: flush when due, delete retained rows, try maintenance now and then. The
readers' view of the store is ``reader()`` (``ClusterStore``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ._config import ClusterSettings
from ._errors import ClusterUnavailable, FlushFailed
from ._flush import Flusher, FlushMark
from ._lake import attach, extension_files
from ._maintenance import Maintenance
from ._pg_schema import SCHEMA, ensure
from ._reads import ClusterStore
from ._views import create_views

log = logging.getLogger(__name__)

_NODE_LOCK_CLASS = 0x7473
"""First key of the session advisory lock a running node holds on its id."""

TICK_S = 0.25
"""How often the node's thread looks whether a flush is due."""
RETENTION_EVERY_S = 10.0


def pg_connect(settings: ClusterSettings) -> Any:
    """A new psycopg connection to ``[cluster].postgres`` (a sentence when it fails)."""
    try:
        import psycopg
    except ImportError:
        raise ClusterUnavailable(
            "cluster mode needs psycopg; install the cluster extra: "
            "pip install 'tracescore[cluster]'") from None
    try:
        return psycopg.connect(settings.postgres, connect_timeout=10,
                               application_name=f"tracescore {settings.node_id}")
    except psycopg.Error as exc:
        raise ClusterUnavailable(
            f"cannot connect to PostgreSQL ([cluster].postgres): {str(exc).strip()}") from None


class ClusterNode:
    """A node of a cluster (see the module docstring); ``start(store)`` after the store
    opened with ``on_connect``, ``stop()`` before it closes."""

    def __init__(self, settings: ClusterSettings, *,
                 _after_lake_commit: Callable[[FlushMark], None] | None = None) -> None:
        self.settings = settings
        self.local: str | None = None
        self.flusher: Flusher | None = None
        self.maintenance = Maintenance(settings, lambda: pg_connect(settings))
        self._after_lake_commit = _after_lake_commit
        self._store: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._read_lock = threading.Lock()
        self._read_conn: Any = None
        self._id_lock: Any = None

    @property
    def node_id(self) -> str:
        """The node's id (``[cluster].node_id``)."""
        return self.settings.node_id

    # -- the store's connections ------------------------------------------------------------

    def on_connect(self, conn: Any) -> list[str]:
        """Store hook: prepare a new connection of the node's database; returns the data
        directory (the store keeps it readable and writable)."""
        extension_files()  # first: the clearest sentence when the extra is missing
        pg = pg_connect(self.settings)
        try:
            ensure(pg)
        finally:
            pg.close()
        attach(conn, self.settings)
        self.local = str(conn.execute("SELECT current_database()").fetchone()[0])
        create_views(conn, local=self.local, node_id=self.node_id)
        return [self.settings.data_path]

    # -- life cycle -----------------------------------------------------------------------

    def start(self, store: Any) -> ClusterStore:
        """Recover the last flush and start the node's thread; returns the readers' store."""
        if self.local is None:
            raise ClusterUnavailable("the store was opened without the cluster node's "
                                     "on_connect hook; open it with Store(..., on_connect="
                                     "node.on_connect)")
        self._hold_node_id()
        self._store = store
        self.flusher = Flusher(store, self.settings, lambda: pg_connect(self.settings),
                               local=self.local, _after_lake_commit=self._after_lake_commit)
        mark = self.flusher.recover()
        log.info("cluster node %s: last flush %d (spans to %s); flushing every %gs to %s",
                 self.node_id, mark.flush_no, mark.span_mark,
                 self.settings.flush_interval_seconds, self.settings.data_path)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="tracescore-cluster",
                                        daemon=True)
        self._thread.start()
        return self.reader()

    def _hold_node_id(self) -> None:
        """Hold a session advisory lock on the node id while the node runs: a second node
        started with the same ``node_id`` would number its flushes over this one's."""
        if self._id_lock is not None:
            return
        conn = pg_connect(self.settings)
        conn.autocommit = True
        got = conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                           [_NODE_LOCK_CLASS, self.node_id]).fetchone()[0]
        if not got:
            conn.close()
            raise ClusterUnavailable(
                f"another node is running with node_id {self.node_id!r} on this PostgreSQL; "
                "give each node its own [cluster].node_id")
        self._id_lock = conn

    def reader(self) -> ClusterStore:
        """The readers' store (lake ∪ local spans, users' SQL over the cluster views)."""
        assert self.local is not None and self.flusher is not None
        flusher = self.flusher
        return ClusterStore(self._store, local=self.local, arrival_range=self.arrival_range,
                            span_mark=lambda: flusher.mark.span_mark)

    def stop(self, *, flush: bool = True) -> None:
        """Stop the thread; flush once more (unless ``flush`` is False)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)
            self._thread = None
        if flush and self.flusher is not None:
            try:
                self.flusher.flush()
            except FlushFailed as exc:
                log.warning("%s", exc)
        if self.flusher is not None:
            self.flusher.close()
        with self._read_lock:
            if self._read_conn is not None:
                self._read_conn.close()
                self._read_conn = None
        if self._id_lock is not None:
            self._id_lock.close()  # the session's advisory lock goes with it
            self._id_lock = None

    def _run(self) -> None:
        flusher = self.flusher
        assert flusher is not None
        last_retention = time.monotonic()
        while not self._stop.wait(TICK_S):
            try:
                if flusher.due():
                    flusher.flush()
                if time.monotonic() - last_retention >= RETENTION_EVERY_S:
                    last_retention = time.monotonic()
                    flusher.delete_retained()
                if self.maintenance.due():
                    self.maintenance.run(self._store)
            except FlushFailed as exc:
                log.warning("%s", exc)
            except Exception:  # noqa: BLE001 - the loop goes on; the next tick tries again
                log.exception("cluster node %s: background step failed", self.node_id)

    # -- PostgreSQL reads -----------------------------------------------------------------

    def arrival_range(self, trace_id: str) -> tuple[datetime, datetime] | None:
        """The trace's first and last arrival over every node, from PostgreSQL ``traces``."""
        with self._read_lock:
            try:
                if self._read_conn is None or self._read_conn.closed:
                    self._read_conn = pg_connect(self.settings)
                    self._read_conn.autocommit = True
                row = self._read_conn.execute(
                    f"SELECT first_received_at, last_received_at FROM {SCHEMA}.traces "
                    "WHERE trace_id = %s", [trace_id]).fetchone()
            except Exception:
                if self._read_conn is not None:
                    self._read_conn.close()
                self._read_conn = None
                raise
        if row is None or row[0] is None:
            return None
        return row[0], row[1]


__all__ = ["ClusterNode", "pg_connect"]
