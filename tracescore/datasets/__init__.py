"""Datasets: versioned eval items, also made from production traces, for ``run_evals``.

Every change makes a new version and nothing is deleted, so ``get_dataset(store, name,
version=N)`` (or ``"name@N"``) reads any past version exactly. ``store`` is a database path, an
open ``Store`` or a server URL. Importing this room is cheap: DuckDB and httpx load on use.
"""

from ._api import (
    add_items,
    create_dataset,
    get_dataset,
    get_dataset_page,
    items_from_traces,
    list_datasets,
    remove_items,
)
from ._errors import DatasetError, DatasetExists, DatasetNotFound, InvalidDatasetItem
from ._from_traces import item_from_trace
from ._models import Dataset, DatasetInfo, DatasetItem
from ._rows import MAX_VALUE_BYTES, TRUNCATED_KEY, export_line
from ._versions import is_visible, parse_ref

__all__ = [
    "MAX_VALUE_BYTES",
    "TRUNCATED_KEY",
    "Dataset",
    "DatasetError",
    "DatasetExists",
    "DatasetInfo",
    "DatasetItem",
    "DatasetNotFound",
    "InvalidDatasetItem",
    "add_items",
    "create_dataset",
    "export_line",
    "get_dataset",
    "get_dataset_page",
    "is_visible",
    "item_from_trace",
    "items_from_traces",
    "list_datasets",
    "parse_ref",
    "remove_items",
]
