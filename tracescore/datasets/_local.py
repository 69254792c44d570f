"""Datasets in an open ``Store``: reads on cursors, changes as one writer transaction each.

A change reads the current version and writes the next inside the same transaction on the
writer thread, so two changes never make the same version.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from tracescore.model import NAME_RULE, name_problem

from ._errors import DatasetError, DatasetExists, DatasetNotFound
from ._models import Dataset, DatasetInfo
from ._rows import MAX_VALUE_BYTES, item_rows, row_item
from ._versions import VISIBLE_SQL, check_version

log = logging.getLogger(__name__)

ANSWER_ITEMS = 1_000
"""Items a change answers with at most (the first page of the version it made)."""
ANSWER_BYTES = 8 * 1024 * 1024
"""... and no more than about this much of their JSON text."""

_HEAD = ("SELECT dataset_id, name, description, created_at, current_version FROM datasets "
         "WHERE project = ? AND name = ?")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _head(conn: Any, name: str, project: str) -> tuple[str, int]:
    row = conn.execute(
        "SELECT dataset_id, current_version FROM datasets WHERE project = ? AND name = ?",
        [project, name],
    ).fetchone()
    if row is None:
        raise DatasetNotFound(
            f"no dataset named {name!r} in project {project!r}; create it first "
            "(create_dataset or `tracescore datasets create`)"
        )
    return str(row[0]), int(row[1])


def _insert_items(conn: Any, rows: list[dict[str, Any]]) -> None:
    if rows:
        from tracescore.store import insert_arrow, rows_table

        insert_arrow(conn, "dataset_items", rows_table("dataset_items", rows))


def check_name(name: Any) -> None:
    """Refuse a dataset name outside ``NAME_RULE`` (``/``, ``..``, ``@``, blank, NUL, ...)."""
    problem = name_problem(name)
    if problem is not None:
        shown = repr(name)[:80] if isinstance(name, str) else type(name).__name__
        raise DatasetError(f"{shown} is not a valid dataset name: {problem} (a name is "
                           f"{NAME_RULE})")


def create(store: Any, name: str, *, description: str | None, items: Iterable[Any],
           project: str, max_value_bytes: int = MAX_VALUE_BYTES) -> Dataset:
    """Create ``name`` as version 1 holding ``items``."""
    check_name(name)
    items = list(items)
    dataset_id = uuid.uuid4().hex
    now = _now()
    rows = item_rows(items, dataset_id=dataset_id, version=1, now=now, taken=set(),
                     max_value_bytes=max_value_bytes)

    def write(conn: Any) -> int:
        if conn.execute("SELECT 1 FROM datasets WHERE project = ? AND name = ?",
                        [project, name]).fetchone():
            raise DatasetExists(
                f"a dataset named {name!r} already exists in project {project!r}; add items "
                "to it (add_items) or pick another name"
            )
        conn.execute("INSERT INTO datasets VALUES (?, ?, ?, ?, ?, ?)",
                     [dataset_id, project, name, description, now, 1])
        _insert_items(conn, rows)
        return 1

    return _answer(store, name, store.write_sync(write), project)


def add(store: Any, name: str, items: Iterable[Any], *, project: str,
        max_value_bytes: int = MAX_VALUE_BYTES) -> Dataset:
    """Add ``items`` as a new version (none: no new version, the current one is answered)."""
    items = list(items)
    if not items:
        return _answer(store, name, None, project)
    now = _now()

    def write(conn: Any) -> int:
        dataset_id, current = _head(conn, name, project)
        taken = {r[0] for r in conn.execute(
            "SELECT item_id FROM dataset_items WHERE dataset_id = ?", [dataset_id]).fetchall()}
        rows = item_rows(items, dataset_id=dataset_id, version=current + 1, now=now,
                         taken=taken, max_value_bytes=max_value_bytes)
        _insert_items(conn, rows)
        conn.execute("UPDATE datasets SET current_version = ? WHERE dataset_id = ?",
                     [current + 1, dataset_id])
        return current + 1

    return _answer(store, name, store.write_sync(write), project)


def remove(store: Any, name: str, item_ids: Sequence[str], *, project: str) -> Dataset:
    """Mark ``item_ids`` removed in a new version (their rows stay for older versions)."""
    wanted = list(dict.fromkeys(item_ids))
    if not wanted:
        return _answer(store, name, None, project)

    def write(conn: Any) -> int:
        dataset_id, current = _head(conn, name, project)
        live = {r[0] for r in conn.execute(
            f"SELECT item_id FROM dataset_items WHERE dataset_id = ? AND {VISIBLE_SQL}",
            [dataset_id, current, current]).fetchall()}
        missing = [item_id for item_id in wanted if item_id not in live]
        if missing:
            raise DatasetNotFound(
                f"dataset {name!r} version {current} has no items {missing[:20]}; nothing was "
                "removed"
            )
        conn.execute(
            "UPDATE dataset_items SET version_removed = ? WHERE dataset_id = ? "
            "AND list_contains(?, item_id)",
            [current + 1, dataset_id, wanted],
        )
        conn.execute("UPDATE datasets SET current_version = ? WHERE dataset_id = ?",
                     [current + 1, dataset_id])
        return current + 1

    return _answer(store, name, store.write_sync(write), project)


def _answer(store: Any, name: str, version: int | None, project: str) -> Dataset:
    """What a change answers: the version it made (not whatever is newest by now), with the
    first page of its items. The change has committed: a failure to read it back is logged
    and answered with the version alone, never raised (a client would retry and add the items
    twice)."""
    try:
        return get(store, name, version=version, project=project, limit=ANSWER_ITEMS,
                   max_bytes=ANSWER_BYTES)
    except Exception:
        if version is None:  # nothing was written: the error is the answer
            raise
        log.exception("dataset %r version %d was written but could not be read back", name,
                      version)
    return Dataset(dataset_id="", name=name, version=version, current_version=version)


def get(store: Any, name: str, *, version: int | None, project: str, offset: int = 0,
        limit: int | None = None, max_bytes: int | None = None) -> Dataset:
    """Version ``version`` (default: the newest) of ``name``, read exactly; with ``limit``
    or ``max_bytes``, one page of its items from ``offset`` (at least one item per page)."""
    heads = store.read(_HEAD, [project, name])
    if not heads:
        raise DatasetNotFound(
            f"no dataset named {name!r} in project {project!r}; list them with "
            "`tracescore datasets list`"
        )
    head = heads[0]
    chosen = check_version(name, version, int(head["current_version"]))
    params = [head["dataset_id"], chosen, chosen]
    [count] = store.read(
        f"SELECT count(*) AS n FROM dataset_items WHERE dataset_id = ? AND {VISIBLE_SQL}", params)
    rows = _page(store, params, offset=offset, limit=limit, max_bytes=max_bytes)
    end = offset + len(rows)
    return Dataset(
        dataset_id=head["dataset_id"], name=head["name"], description=head["description"],
        version=chosen, current_version=int(head["current_version"]),
        created_at=head["created_at"], items=[row_item(row) for row in rows],
        item_count=int(count["n"]), offset=offset,
        next_offset=end if end < int(count["n"]) else None,
    )


def _page(store: Any, params: list[Any], *, offset: int, limit: int | None,
          max_bytes: int | None) -> list[dict[str, Any]]:
    """The version's item rows from ``offset``: at most ``limit`` rows, and no more once their
    JSON text passes ``max_bytes`` (read a chunk at a time, never the whole version)."""
    sql = (f"SELECT * FROM dataset_items WHERE dataset_id = ? AND {VISIBLE_SQL} "
           f"ORDER BY version_added, rowid LIMIT {limit if limit is not None else 'ALL'} "
           f"OFFSET {int(offset)}")
    cursor = store.cursor()
    try:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description or ()]
        rows: list[dict[str, Any]] = []
        size = 0
        while True:
            chunk = cursor.fetchmany(64)
            if not chunk:
                return rows
            for values in chunk:
                row = dict(zip(names, values, strict=True))
                size += sum(len(v) for v in values if isinstance(v, str))
                if rows and max_bytes is not None and size > max_bytes:
                    return rows
                rows.append(row)
    finally:
        cursor.close()


def listing(store: Any, *, project: str) -> list[DatasetInfo]:
    """Every dataset of the project with its newest version's item count."""
    rows = store.read(
        "SELECT d.dataset_id, d.name, d.description, d.created_at, d.current_version, "
        "(SELECT count(*) FROM dataset_items i WHERE i.dataset_id = d.dataset_id "
        " AND i.version_added <= d.current_version AND (i.version_removed IS NULL "
        " OR i.version_removed > d.current_version)) AS item_count "
        "FROM datasets d WHERE d.project = ? ORDER BY d.name",
        [project],
    )
    return [DatasetInfo.model_validate(row) for row in rows]


__all__ = ["ANSWER_BYTES", "ANSWER_ITEMS", "add", "check_name", "create", "get", "listing",
           "remove"]
