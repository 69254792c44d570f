"""The datasets and experiments API: ``/api/datasets`` (versioned items, also from stored
traces) and ``/api/experiments`` (recording runs, listing, comparing).

Views call the datasets room and the evals room's store functions in a worker thread; dataset
errors map to 404 (not found), 409 (name taken) and 422 (a bad item).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from pydantic import BaseModel, Field

from ._experiment_models import ExperimentRequest

router = APIRouter()

T = TypeVar("T")


class CreateDatasetRequest(BaseModel):
    """Body of POST /api/datasets."""

    name: str = Field(description="Unique per project; no '@'.")
    description: str | None = None
    items: list[dict[str, Any]] = Field(default_factory=list)


class AddItemsRequest(BaseModel):
    """Body of POST /api/datasets/{name}/items: items, or traces to turn into items."""

    items: list[dict[str, Any]] | None = None
    from_trace_ids: list[str] | None = None
    trajectory: bool = Field(False, description="With from_trace_ids: keep the trajectory as "
                             "expected_trajectory.")
    ground_truth: dict[str, Any] | None = Field(
        None, description="With from_trace_ids: trace id → the expected output to store instead "
        "of the trace's own final answer.")


class RemoveItemsRequest(BaseModel):
    """Body of POST /api/datasets/{name}/remove."""

    item_ids: list[str]


class ItemsFromTracesRequest(BaseModel):
    """Body of POST /api/datasets/items-from-traces."""

    trace_ids: list[str] | None = None
    sql: str | None = None
    trajectory: bool = False


async def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    from tracescore.datasets import DatasetExists, DatasetNotFound, InvalidDatasetItem

    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except DatasetNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except DatasetExists as exc:
        raise HTTPException(409, str(exc)) from None
    except InvalidDatasetItem as exc:
        raise HTTPException(422, str(exc)) from None


def _dump(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(mode="json")
    return dumped


@router.get("/api/datasets", tags=["datasets"])
async def list_datasets(request: Request) -> dict[str, Any]:
    """Every dataset with its newest version and item count."""
    from tracescore.datasets import list_datasets as listing

    rows = await _call(listing, request.app.state.store)
    return {"datasets": [_dump(row) for row in rows]}


@router.post("/api/datasets", tags=["datasets"])
async def create_dataset(request: Request, body: CreateDatasetRequest) -> dict[str, Any]:
    """Create a dataset (version 1 holds ``items``)."""
    from tracescore.datasets import create_dataset as create

    return _dump(await _call(create, request.app.state.store, body.name,
                             description=body.description, items=body.items,
                             max_value_bytes=request.app.state.settings.max_attribute_bytes))


@router.post("/api/datasets/items-from-traces", tags=["datasets"])
async def items_from_traces(request: Request, body: ItemsFromTracesRequest) -> dict[str, Any]:
    """Items made from stored traces, not stored (edit, then POST them to a dataset)."""
    from tracescore.datasets import DatasetError
    from tracescore.datasets import items_from_traces as build

    try:
        items = await _call(build, request.app.state.store, body.trace_ids, sql=body.sql,
                            trajectory=body.trajectory)
    except DatasetError as exc:
        raise HTTPException(400, str(exc)) from None
    return {"items": [_dump(item) for item in items]}


@router.get("/api/datasets/{name}", tags=["datasets"])
async def get_dataset(request: Request, name: str,
                      version: int | None = Query(None, ge=1),
                      offset: int = Query(0, ge=0),
                      limit: int = Query(1000, ge=1, le=10_000)) -> dict[str, Any]:
    """One version of a dataset (default: the newest) with one page of its items: at most
    ``limit`` from ``offset``, stopping past ``sql_max_bytes`` of item JSON; ``item_count``
    and ``next_offset`` say what is left."""
    from tracescore.datasets import get_dataset_page

    store, settings = request.app.state.store, request.app.state.settings
    return _dump(await _call(get_dataset_page, store, name, version, offset=offset,
                             limit=limit, max_bytes=settings.sql_max_bytes))


@router.post("/api/datasets/{name}/items", tags=["datasets"])
async def add_items(request: Request, name: str, body: AddItemsRequest) -> dict[str, Any]:
    """Add items (or items made from ``from_trace_ids``) as a new version."""
    from tracescore.datasets import DatasetError, add_items, items_from_traces

    store = request.app.state.store
    if (body.items is None) == (body.from_trace_ids is None):
        raise HTTPException(400, "send exactly one of items or from_trace_ids")
    items: list[Any] = list(body.items or [])
    if body.from_trace_ids is not None:
        from ._api import full_trace_id

        ids = [await full_trace_id(store, given) for given in body.from_trace_ids]  # prefixes
        truth = {full: body.ground_truth[given] for given, full in zip(
            body.from_trace_ids, ids, strict=True) if body.ground_truth and given in
            body.ground_truth}
        try:
            made = await _call(items_from_traces, store, ids, trajectory=body.trajectory)
        except DatasetError as exc:
            raise HTTPException(400, str(exc)) from None
        for item in made:
            if item.source_trace_id in truth:
                item.ground_truth = truth[item.source_trace_id]
        items = made
    return _dump(await _call(add_items, store, name, items,
                             max_value_bytes=request.app.state.settings.max_attribute_bytes))


@router.post("/api/datasets/{name}/remove", tags=["datasets"])
async def remove_items(request: Request, name: str, body: RemoveItemsRequest) -> dict[str, Any]:
    """Remove several items in one new version."""
    from tracescore.datasets import remove_items as remove

    return _dump(await _call(remove, request.app.state.store, name, body.item_ids))


@router.delete("/api/datasets/{name}/items/{item_id}", tags=["datasets"])
async def delete_item(request: Request, name: str, item_id: str) -> dict[str, Any]:
    """Remove one item in a new version (older versions still hold it; nothing is deleted)."""
    from tracescore.datasets import remove_items as remove

    return _dump(await _call(remove, request.app.state.store, name, [item_id]))


@router.post("/api/experiments", tags=["experiments"])
async def post_experiment(request: Request, body: ExperimentRequest) -> dict[str, Any]:
    """Store an experiment's row (replacing it) and its result rows (each replacing the
    stored one with the same experiment, item, scorer and repetition)."""
    from tracescore.store import experiment_writer

    try:
        experiment, results = body.rows()
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    writer = await asyncio.to_thread(experiment_writer, experiment, results)
    await request.app.state.store.write(writer)
    return {"experiment_id": experiment["experiment_id"], "results": len(results)}


@router.get("/api/experiments", tags=["experiments"])
async def list_experiments(request: Request,
                           dataset: str | None = Query(None, description="A dataset name.")
                           ) -> dict[str, Any]:
    """Recorded experiments, newest first."""
    from tracescore.evals import list_experiments as listing

    rows = await asyncio.to_thread(listing, request.app.state.store, dataset=dataset)
    return {"experiments": [_dump(row) for row in rows]}


@router.get("/api/experiments/compare", tags=["experiments"])
async def compare(request: Request, baseline: str, candidate: str,
                  threshold: float = Query(0.05, ge=0),
                  lower_is_better: list[str] | None = Query(None),  # noqa: B008
                  ) -> dict[str, Any]:
    """Two experiments side by side (names mean the newest run of that name)."""
    from tracescore.evals import EvalValidationError, compare_experiments

    try:
        result = await asyncio.to_thread(compare_experiments, request.app.state.store, baseline,
                                         candidate, threshold=threshold,
                                         lower_is_better=lower_is_better or ())
    except EvalValidationError as exc:
        raise HTTPException(404, str(exc)) from None
    return _dump(result)


def mount_datasets(app: FastAPI) -> None:
    """Add the ``/api/datasets`` and ``/api/experiments`` routes."""
    app.include_router(router)


__all__ = ["mount_datasets", "router"]
