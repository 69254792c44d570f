"""Datasets in an open ``Store``: reads on cursors, changes as one writer transaction each.

A change reads the current version and writes the next inside the same transaction on the
writer thread, so two changes never make the same version.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ._errors import DatasetError, DatasetExists, DatasetNotFound
from ._models import Dataset, DatasetInfo
from ._rows import item_rows, row_item
from ._versions import VISIBLE_SQL, check_version

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


def create(store: Any, name: str, *, description: str | None, items: Iterable[Any],
           project: str) -> Dataset:
    """Create ``name`` as version 1 holding ``items``."""
    if not name or "@" in name:
        raise DatasetError(f"dataset names are non-empty and have no '@'; got {name!r}")
    items = list(items)
    dataset_id = uuid.uuid4().hex
    now = _now()
    rows = item_rows(items, dataset_id=dataset_id, version=1, now=now, taken=set())

    def write(conn: Any) -> None:
        if conn.execute("SELECT 1 FROM datasets WHERE project = ? AND name = ?",
                        [project, name]).fetchone():
            raise DatasetExists(
                f"a dataset named {name!r} already exists in project {project!r}; add items "
                "to it (add_items) or pick another name"
            )
        conn.execute("INSERT INTO datasets VALUES (?, ?, ?, ?, ?, ?)",
                     [dataset_id, project, name, description, now, 1])
        _insert_items(conn, rows)

    store.write_sync(write)
    return get(store, name, version=None, project=project)


def add(store: Any, name: str, items: Iterable[Any], *, project: str) -> Dataset:
    """Add ``items`` as a new version."""
    items = list(items)

    def write(conn: Any) -> None:
        dataset_id, current = _head(conn, name, project)
        taken = {r[0] for r in conn.execute(
            "SELECT item_id FROM dataset_items WHERE dataset_id = ?", [dataset_id]).fetchall()}
        rows = item_rows(items, dataset_id=dataset_id, version=current + 1, now=_now(),
                         taken=taken)
        _insert_items(conn, rows)
        conn.execute("UPDATE datasets SET current_version = ? WHERE dataset_id = ?",
                     [current + 1, dataset_id])

    store.write_sync(write)
    return get(store, name, version=None, project=project)


def remove(store: Any, name: str, item_ids: Sequence[str], *, project: str) -> Dataset:
    """Mark ``item_ids`` removed in a new version (their rows stay for older versions)."""
    wanted = list(dict.fromkeys(item_ids))

    def write(conn: Any) -> None:
        dataset_id, current = _head(conn, name, project)
        live = {r[0] for r in conn.execute(
            f"SELECT item_id FROM dataset_items WHERE dataset_id = ? AND {VISIBLE_SQL}",
            [dataset_id, current, current]).fetchall()}
        missing = [item_id for item_id in wanted if item_id not in live]
        if missing:
            raise DatasetNotFound(
                f"dataset {name!r} version {current} has no items {missing}; nothing was removed"
            )
        conn.execute(
            "UPDATE dataset_items SET version_removed = ? WHERE dataset_id = ? "
            "AND list_contains(?, item_id)",
            [current + 1, dataset_id, wanted],
        )
        conn.execute("UPDATE datasets SET current_version = ? WHERE dataset_id = ?",
                     [current + 1, dataset_id])

    store.write_sync(write)
    return get(store, name, version=None, project=project)


def get(store: Any, name: str, *, version: int | None, project: str) -> Dataset:
    """Version ``version`` (default: the newest) of ``name``, read exactly."""
    heads = store.read(_HEAD, [project, name])
    if not heads:
        raise DatasetNotFound(
            f"no dataset named {name!r} in project {project!r}; list them with "
            "`tracescore datasets list`"
        )
    head = heads[0]
    chosen = check_version(name, version, int(head["current_version"]))
    rows = store.read(
        f"SELECT * FROM dataset_items WHERE dataset_id = ? AND {VISIBLE_SQL} "
        "ORDER BY version_added, rowid",
        [head["dataset_id"], chosen, chosen],
    )
    return Dataset(
        dataset_id=head["dataset_id"], name=head["name"], description=head["description"],
        version=chosen, current_version=int(head["current_version"]),
        created_at=head["created_at"], items=[row_item(row) for row in rows],
    )


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


__all__ = ["add", "create", "get", "listing", "remove"]
