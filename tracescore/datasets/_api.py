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
from ._rows import MAX_VALUE_BYTES
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
                   api_key: str | None = None,
                   max_value_bytes: int = MAX_VALUE_BYTES) -> Dataset:
    """Create dataset ``name`` (unique per project; see ``NAME_RULE``) as version 1 holding
    ``items``. String values longer than ``max_value_bytes`` are cut (a server uses its own
    ``max_attribute_bytes``) and listed in the item's ``metadata["tracescore.truncated"]``.
    The answer holds the first page of the items (``item_count`` says how many)."""
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).create(name, description=description,
                                                              items=items)
    with open_store(store) as opened:
        return _local.create(opened, name, description=description, items=items,
                             project=project, max_value_bytes=max_value_bytes)


def add_items(store: Any, name: str, items: Iterable[Any], *, project: str = DEFAULT_PROJECT,
              api_key: str | None = None, max_value_bytes: int = MAX_VALUE_BYTES) -> Dataset:
    """Add ``items`` (dicts, ``EvalItem`` or ``DatasetItem``) as a new version and answer that
    version (its first page of items); no items make no new version."""
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).add(name, items)
    with open_store(store) as opened:
        return _local.add(opened, name, items, project=project,
                          max_value_bytes=max_value_bytes)


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
    """Version ``version`` of ``name`` (default: the newest) with all its items; ``name``
    may be ``"name@N"``. From a server the items are read page by page."""
    ref_name, ref_version = parse_ref(name)
    if ref_version is not None:
        if version is not None and version != ref_version:
            raise DatasetError(f"{name!r} names version {ref_version} but version={version}")
        name, version = ref_name, ref_version
    if _is_url(store):
        return DatasetsClient(store, api_key=api_key).get(name, version=version)
    with open_store(store) as opened:
        return _local.get(opened, name, version=version, project=project)


def get_dataset_page(store: Any, name: str, version: int | None = None, *, offset: int = 0,
                     limit: int = 1000, max_bytes: int | None = None,
                     project: str = DEFAULT_PROJECT) -> Dataset:
    """One page of a version's items (``GET /api/datasets/{name}``): at most ``limit`` from
    ``offset``, no more once their JSON passes ``max_bytes``; ``next_offset`` says where the
    next page starts. ``store`` is a database path or an open ``Store``."""
    with open_store(store) as opened:
        return _local.get(opened, name, version=version, project=project, offset=offset,
                          limit=limit, max_bytes=max_bytes)


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
    "get_dataset_page",
    "items_from_traces",
    "list_datasets",
    "open_store",
    "remove_items",
]
