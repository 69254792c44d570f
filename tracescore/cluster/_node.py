"""``ClusterNode``: one tracescore server's part in a cluster.

It plugs into the node's ``Store`` at connect time (``on_connect``: load the extensions,
attach the lake and PostgreSQL, create or widen both schemas, create the ``cluster`` views;
the data directory stays reachable after the store locks external access down), then runs one
background thread: flush when due, delete retained rows, try maintenance now and then. The
readers' view of the store is ``reader()`` (``ClusterStore``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from ._config import ClusterSettings
from ._errors import ClusterUnavailable, FlushFailed
from ._flush import Flusher, FlushMark
from ._lake import attach, extension_files
from ._maintenance import Maintenance
from ._pg_coordination import PgCoordination
from ._pg_judge_cache import PgJudgeCache
from ._pg_schema import SCHEMA, ensure
from ._pg_writes import PgWrites
from ._reads import ClusterStore
from ._views import create_views

log = logging.getLogger(__name__)

_NODE_LOCK_CLASS = 0x7473
"""First key of the session advisory lock a running node holds on its id."""

PLACE_GRACE_S = 1.0
"""Time past another node's flush interval for its flush to commit (``place``)."""
ORPHAN_S = 60.0
"""How long past its placement a trace another node owns waits before this node scores it
(at least ten flush intervals)."""

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
                            span_mark=lambda: flusher.mark.span_mark, pg_read=self.pg_read)

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
            self._release_node_id(self._id_lock)
            self._id_lock = None

    def _release_node_id(self, conn: Any) -> None:
        """Unlock before closing: closing alone frees the lock only once the server's backend
        has noticed and exited, so a node restarted at once could still find it held."""
        try:
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))",
                         [_NODE_LOCK_CLASS, self.node_id])
        except Exception:  # noqa: BLE001 - a broken session: closing it frees the lock
            log.debug("could not unlock node id %s before closing", self.node_id,
                      exc_info=True)
        finally:
            conn.close()

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

    def pg_read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """A read on the node's PostgreSQL read connection (``search_path`` is the
        ``tracescore`` schema): row dicts."""
        with self._read_lock:
            try:
                if self._read_conn is None or self._read_conn.closed:
                    self._read_conn = pg_connect(self.settings)
                    self._read_conn.autocommit = True
                    self._read_conn.execute(f"SET search_path TO {SCHEMA}")
                cur = self._read_conn.execute(sql, list(params))
                names = [d.name for d in cur.description or ()]
                return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
            except Exception:
                if self._read_conn is not None:
                    self._read_conn.close()
                self._read_conn = None
                raise

    def arrival_range(self, trace_id: str) -> tuple[datetime, datetime] | None:
        """The trace's first and last arrival over every node, from PostgreSQL ``traces``."""
        rows = self.pg_read("SELECT first_received_at, last_received_at FROM traces "
                            "WHERE trace_id = %s", [trace_id])
        if not rows or rows[0]["first_received_at"] is None:
            return None
        return rows[0]["first_received_at"], rows[0]["last_received_at"]

    # -- live scoring ---------------------------------------------------------------------

    def coordination(self) -> PgCoordination:
        """The scoring queue's coordination on this cluster's PostgreSQL (its own connection)."""
        return PgCoordination(lambda: pg_connect(self.settings))

    def shared_writes(self) -> PgWrites:
        """Store-style writes into PostgreSQL's tables (live scoring's monitor events)."""
        return PgWrites(self.settings)

    def judge_cache(self, *, max_bytes: int, max_age_s: float) -> PgJudgeCache:
        """The judge-call cache every node shares (PostgreSQL's ``judge_cache``)."""
        return PgJudgeCache(lambda: pg_connect(self.settings), max_bytes=max_bytes,
                            max_age_s=max_age_s)

    def place(self, traces: Sequence[tuple[str, datetime, datetime]], now: datetime
              ) -> dict[str, tuple[str, datetime | None]]:
        """Where live scoring scores each trace that settled in this node's file, given as
        (trace id, last arrival here, ready here at): ``local`` when only this node received
        it, ``lake`` when several did and this node owns it (``owner``), else ``wait`` or
        ``elsewhere`` with when to ask again (``tracescore.live``'s ``_placement``).

        A trace waits until this node's spans of it are in PostgreSQL's ``traces`` (a flush
        and its upsert) and until the flush interval (plus ``PLACE_GRACE_S``) has passed since
        it settled here, so that spans other nodes received by then are flushed too and
        ``traces.nodes`` names them. A trace another node owns is scored here from the lake
        after ``ORPHAN_S`` more, should that node not have decided it (it stopped for good):
        whoever decides a pair first wins, so this never scores a pair twice."""
        flusher = self.flusher
        interval = timedelta(seconds=self.settings.flush_interval_seconds + PLACE_GRACE_S)
        upserted = flusher.upserted.span_mark if flusher is not None else None
        out: dict[str, tuple[str, datetime | None]] = {}
        asked: dict[str, datetime] = {}
        for trace_id, last, ready in traces:
            due = ready + interval
            if upserted is None or last > upserted:
                out[trace_id] = ("wait", now + timedelta(seconds=TICK_S * 2))
            elif due > now:
                out[trace_id] = ("wait", due)
            else:
                asked[trace_id] = ready
        if not asked:
            return out
        nodes = {row["trace_id"]: row["nodes"] for row in self.pg_read(
            "SELECT trace_id, nodes FROM traces WHERE trace_id = ANY(%s)", [list(asked)])}
        orphan = timedelta(seconds=max(ORPHAN_S, 10 * self.settings.flush_interval_seconds))
        for trace_id, ready in asked.items():
            found = [n for n in (nodes.get(trace_id) or ()) if n]
            if len(found) <= 1 or self.node_id not in found:
                out[trace_id] = ("local", None)
            elif owner(trace_id, found) == self.node_id:
                out[trace_id] = ("lake", None)
            elif now >= ready + interval + orphan:
                out[trace_id] = ("lake", None)  # its owner has not decided it: score it here
            else:
                out[trace_id] = ("elsewhere", ready + interval + orphan)
        return out


def owner(trace_id: str, nodes: Sequence[str]) -> str:
    """The node that scores a trace several nodes received: the highest of
    sha1(node id, trace id) over those nodes (rendezvous hashing). Every node computes the
    same from ``traces.nodes``; a node added to that list takes over only the traces it wins."""
    return max(nodes, key=lambda node: hashlib.sha1(f"{node}/{trace_id}".encode()).digest())


__all__ = ["ORPHAN_S", "PLACE_GRACE_S", "ClusterNode", "owner", "pg_connect"]
