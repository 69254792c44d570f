"""The public dataset functions: one signature whatever ``store`` is.

``store`` is a database path (opened for the call and closed after), an open ``Store``, or a
running server's ``http(s)://`` URL (through ``/api/datasets``; ``api_key=`` for a server with
keys), as for ``run_evals(store=...)``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from . import _local
from ._errors import DatasetError
from ._from_traces import items_from_store
from ._http import DatasetsClient
from ._models import Dataset, DatasetInfo, DatasetItem
from ._versions import parse_ref

DEFAULT_PROJECT = "default"


def _is_url(store: Any) -> bool:
    return isinstance(store, str) and store.startswith(("http://", "https://"))


@contextlib.contextmanager
def open_store(store: Any) -> Iterator[Any]:
    """An open ``Store`` for a path or a ``Store`` (``tracescore.store.opened_store``)."""
    from tracescore.store import StoreError, opened_store

    try:
        manager = opened_store(store)
        opened = manager.__enter__()
    except StoreError as exc:
        raise DatasetError(str(exc)) from None
    try:
        yield opened
    finally:
        manager.__exit__(None, None, None)


def create_dataset(store: Any, name: str, *, description: str | None = None,
                   items: Iterable[Any] = (), project: str = DEFAULT_PROJECT,
                   api_key: str | None = None) -> Dataset:
    """Create dataset ``name`` (unique per project) as version 1 holding ``items``."""
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).create(name, description=description,
                                                              items=items)
    with open_store(store) as opened:
        return _local.create(opened, name, description=description, items=items,
                             project=project)


def add_items(store: Any, name: str, items: Iterable[Any], *, project: str = DEFAULT_PROJECT,
              api_key: str | None = None) -> Dataset:
    """Add ``items`` (dicts, ``EvalItem`` or ``DatasetItem``) as a new version."""
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).add(name, items)
    with open_store(store) as opened:
        return _local.add(opened, name, items, project=project)


def remove_items(store: Any, name: str, item_ids: Sequence[str], *,
                 project: str = DEFAULT_PROJECT, api_key: str | None = None) -> Dataset:
    """Remove ``item_ids`` in a new version; older versions still read them."""
    if isinstance(item_ids, str):
        item_ids = [item_ids]
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).remove(name, item_ids)
    with open_store(store) as opened:
        return _local.remove(opened, name, item_ids, project=project)


def get_dataset(store: Any, name: str, version: int | None = None, *,
                project: str = DEFAULT_PROJECT, api_key: str | None = None) -> Dataset:
    """Version ``version`` of ``name`` (default: the newest); ``name`` may be ``"name@N"``."""
    ref_name, ref_version = parse_ref(name)
    if ref_version is not None:
        if version is not None and version != ref_version:
            raise DatasetError(f"{name!r} names version {ref_version} but version={version}")
        name, version = ref_name, ref_version
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).get(name, version=version)
    with open_store(store) as opened:
        return _local.get(opened, name, version=version, project=project)


def list_datasets(store: Any, *, project: str = DEFAULT_PROJECT,
                  api_key: str | None = None) -> list[DatasetInfo]:
    """Every dataset of the project, by name."""
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).listing()
    with open_store(store) as opened:
        return _local.listing(opened, project=project)


def items_from_traces(store: Any, trace_ids: Sequence[str] | None = None, *,
                      sql: str | None = None, trajectory: bool = False,
                      api_key: str | None = None) -> list[DatasetItem]:
    """Items made from stored traces (not added yet: edit ``ground_truth``, then ``add_items``).

    Give the trace ids, or ``sql=`` a read-only query returning a ``trace_id`` column. Each
    item's ``input`` is the agent run's conversation (history, then the new user turn), its
    ``ground_truth`` the final answer, its ``expected_trajectory`` the trajectory when
    ``trajectory=True``; ``source_trace_id``/``source_span_id`` name the run.
    """
    if isinstance(trace_ids, str):
        trace_ids = [trace_ids]
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).items_from_traces(
            trace_ids, sql=sql, trajectory=trajectory)
    with open_store(store) as opened:
        return items_from_store(opened, trace_ids, sql=sql, trajectory=trajectory)


__all__ = [
    "add_items",
    "create_dataset",
    "get_dataset",
    "items_from_traces",
    "list_datasets",
    "open_store",
    "remove_items",
]
