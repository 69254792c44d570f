"""What a dataset is in Python: ``Dataset`` (one version, read exactly) of ``DatasetItem``.

A ``DatasetItem`` is an ``EvalItem`` (so ``run_evals`` takes it as it is) that also carries its
id, metadata and the trace it was made from.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from tracescore.evals import EvalItem


class DatasetItem(EvalItem):
    """One item of a dataset: an ``EvalItem`` with an id and where it came from."""

    item_id: str | None = None
    """Unique within the dataset; generated when not given."""
    metadata: dict[str, Any] | None = None
    """Anything the user keeps with the item (tags, why it was added, ...)."""
    source_trace_id: str | None = None
    """The production trace the item was made from (``items_from_traces``)."""
    source_span_id: str | None = None
    """The agent run's span in that trace."""
    version_added: int | None = None
    """The dataset version that added the item (set when read from a store)."""

    @model_validator(mode="before")
    @classmethod
    def _drop_empty_shapes(cls, data: Any) -> Any:
        """JSON of a stored item carries ``inputs``/``turns`` as null: not set, not given."""
        if isinstance(data, dict) and (data.get("inputs", 0) is None
                                       or data.get("turns", 0) is None):
            data = {k: v for k, v in data.items() if not (k in ("inputs", "turns") and v is None)}
        return data


class Dataset(BaseModel):
    """One version of a dataset with exactly the items that version holds."""

    dataset_id: str
    """The dataset's id (``datasets.dataset_id``)."""
    name: str
    """Unique per project; ``run_evals(data="name@version", store=...)`` reads it."""
    description: str | None = None
    """Free text."""
    version: int
    """The version these items are (``current_version`` when none was asked for)."""
    current_version: int
    """The dataset's newest version."""
    created_at: datetime | None = None
    """When the dataset was created (UTC)."""
    items: list[DatasetItem] = Field(default_factory=list)
    """The items of ``version``, in the order they were added (over HTTP, and in the answer of
    a change, one page of them: see ``next_offset``)."""
    item_count: int | None = None
    """How many items ``version`` holds in all."""
    offset: int = 0
    """Position of ``items[0]`` among the version's items."""
    next_offset: int | None = None
    """Where the next page starts, or None when ``items`` reaches the version's last item."""

    @property
    def ref(self) -> str:
        """``name@version``: what ``run_evals`` and experiments record."""
        return f"{self.name}@{self.version}"


class DatasetInfo(BaseModel):
    """A dataset in a listing: its versions and how many items the newest holds."""

    dataset_id: str
    """The dataset's id."""
    name: str
    """The dataset's name."""
    description: str | None = None
    """Free text."""
    current_version: int
    """The newest version."""
    item_count: int
    """Items in the newest version."""
    created_at: datetime | None = None
    """When the dataset was created (UTC)."""


__all__ = ["Dataset", "DatasetInfo", "DatasetItem"]
