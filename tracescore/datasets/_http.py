"""Datasets on a running server, through its JSON API (``/api/datasets``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

from pydantic_core import to_jsonable_python

from ._errors import DatasetError, DatasetExists, DatasetNotFound, InvalidDatasetItem
from ._models import Dataset, DatasetInfo, DatasetItem


class DatasetsClient:
    """Calls ``/api/datasets`` on ``url``; server errors come back as the dataset errors."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        try:
            response = httpx.request(method, f"{self.url}{path}", headers=self._headers,
                                     timeout=self._timeout_s, **kwargs)
        except httpx.HTTPError as exc:
            raise DatasetError(f"could not reach {self.url}: {exc}; is the server running?") \
                from None
        if response.status_code < 400:
            return response.json()
        try:
            message = response.json()["error"]["message"]
        except Exception:
            message = response.text[:300]
        kind = {404: DatasetNotFound, 409: DatasetExists, 422: InvalidDatasetItem}.get(
            response.status_code, DatasetError)
        raise kind(f"{method} {path} answered {response.status_code}: {message}")

    def create(self, name: str, *, description: str | None, items: Iterable[Any]) -> Dataset:
        """POST /api/datasets."""
        body = {"name": name, "description": description, "items": _jsonable(items)}
        return Dataset.model_validate(self._call("POST", "/api/datasets", json=body))

    def add(self, name: str, items: Iterable[Any]) -> Dataset:
        """POST /api/datasets/{name}/items."""
        return Dataset.model_validate(self._call(
            "POST", f"/api/datasets/{quote(name, safe='')}/items",
            json={"items": _jsonable(items)}))

    def add_from_traces(self, name: str, trace_ids: Sequence[str], *,
                        trajectory: bool) -> Dataset:
        """POST /api/datasets/{name}/items with ``from_trace_ids``."""
        return Dataset.model_validate(self._call(
            "POST", f"/api/datasets/{quote(name, safe='')}/items",
            json={"from_trace_ids": list(trace_ids), "trajectory": trajectory}))

    def remove(self, name: str, item_ids: Sequence[str]) -> Dataset:
        """DELETE /api/datasets/{name}/items/{item_id}, one new version for all of them."""
        return Dataset.model_validate(self._call(
            "POST", f"/api/datasets/{quote(name, safe='')}/remove",
            json={"item_ids": list(item_ids)}))

    def get(self, name: str, *, version: int | None) -> Dataset:
        """GET /api/datasets/{name}?version=N, page after page until every item is read."""
        path = f"/api/datasets/{quote(name, safe='')}"
        params = {"version": version} if version is not None else {}
        first = Dataset.model_validate(self._call("GET", path, params=params))
        items, page = list(first.items), first
        while page.next_offset is not None:
            # the version is pinned, so a change made meanwhile cannot mix into the pages
            page = Dataset.model_validate(self._call(
                "GET", path, params={"version": first.version, "offset": page.next_offset}))
            items.extend(page.items)
        return first.model_copy(update={"items": items, "next_offset": None})

    def listing(self) -> list[DatasetInfo]:
        """GET /api/datasets."""
        body = self._call("GET", "/api/datasets")
        return [DatasetInfo.model_validate(row) for row in body["datasets"]]

    def items_from_traces(self, trace_ids: Sequence[str] | None, *, sql: str | None,
                          trajectory: bool) -> list[DatasetItem]:
        """POST /api/datasets/items-from-traces (items built on the server, not stored)."""
        body = self._call("POST", "/api/datasets/items-from-traces", json={
            "trace_ids": list(trace_ids) if trace_ids is not None else None,
            "sql": sql, "trajectory": trajectory})
        return [DatasetItem.model_validate(item) for item in body["items"]]


def _jsonable(items: Iterable[Any]) -> list[Any]:
    out = []
    for item in items:
        if hasattr(item, "model_dump"):
            item = item.model_dump(exclude_unset=True)
        out.append(to_jsonable_python(item, fallback=repr))
    return out


__all__ = ["DatasetsClient"]
