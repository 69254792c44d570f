"""Errors of the datasets room.

::

    TracescoreError
    └── DatasetError              (tracescore.datasets: anything a dataset call refuses)
        ├── DatasetNotFound       no dataset with that name (or no such version of it)
        ├── DatasetExists         ``create_dataset`` with a name already taken in the project
        └── InvalidDatasetItem    an item that cannot be stored (also a ValueError)
"""

from __future__ import annotations

from tracescore.model import TracescoreError


class DatasetError(TracescoreError):
    """Base class of the errors the dataset functions raise deliberately."""


class DatasetNotFound(DatasetError, LookupError):
    """The dataset, the version or the item named does not exist."""


class DatasetExists(DatasetError):
    """A dataset with this name already exists in the project."""


class InvalidDatasetItem(DatasetError, ValueError):
    """An item that cannot be stored; the message names the item and the field."""


__all__ = ["DatasetError", "DatasetExists", "DatasetNotFound", "InvalidDatasetItem"]
