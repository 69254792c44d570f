"""The labels API: label schemas, labels, review queues, judge agreement, aligned versions, and
each trace's scores with their judge's agreement.

Routes: ``POST``/``GET /api/label-schemas``; ``POST /api/labels`` (a list, or
``{"labels": [...]}``), ``GET /api/labels``; ``POST``/``GET /api/queues``, ``GET
/api/queues/{name}``, ``POST /api/queues/{name}/next`` (claims the annotator's next item),
``GET /api/queues/{name}/item?key=`` and ``POST /api/queues/{name}/skip``; ``GET
/api/agreement`` (``scorer_id``, ``schema_name``); ``GET``/``POST /api/scorer-versions``;
``GET /api/traces/{id}/scores`` (each score with an ``agreement`` object, or null).

``mount_labels(app)`` (in ``DEFAULT_MOUNTS``) reads ``[labels]`` and ``[[canaries]]`` from the
config (a bad entry stops ``create_app`` with a sentence) into ``app.state.labels_setup``; the
live scheduler's ``JudgeTrust`` is built from it. Views call ``tracescore.labels`` in a worker
thread; its errors map to 404 (not found), 409 (queue name taken) and 422 (a bad label, schema
or queue).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from pydantic import BaseModel, Field

from ._errors import ConfigError

router = APIRouter(tags=["labels"])

T = TypeVar("T")


async def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    from tracescore.labels import AlignError, InvalidLabel, LabelsNotFound, QueueExists

    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except LabelsNotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except QueueExists as exc:
        raise HTTPException(409, str(exc)) from None
    except (InvalidLabel, AlignError) as exc:
        raise HTTPException(422, str(exc)) from None


def _settings(request: Request) -> Any:
    setup = getattr(request.app.state, "labels_setup", None)
    if setup is None:
        from tracescore.labels import LabelsSettings

        return LabelsSettings()
    return setup[0]


def _poke(request: Request) -> None:
    """New labels: the live scorer refreshes agreement at its next tick."""
    live = getattr(request.app.state, "live", None)
    trust = getattr(live, "trust", None) if live is not None else None
    if trust is not None:
        trust.poke()


@router.post("/api/label-schemas")
async def post_schema(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """Create (or update) a label schema."""
    from tracescore.labels import create_schema

    schema = await _call(create_schema, request.app.state.store, body)
    return schema.model_dump(mode="json")


@router.get("/api/label-schemas")
async def get_schemas(request: Request) -> dict[str, Any]:
    """Every label schema."""
    from tracescore.labels import list_schemas

    schemas = await _call(list_schemas, request.app.state.store)
    return {"schemas": [s.model_dump(mode="json") for s in schemas]}


@router.post("/api/labels")
async def post_labels(request: Request, body: list[dict[str, Any]] | dict[str, Any]
                      ) -> dict[str, Any]:
    """Store labels (a JSON list, or ``{"labels": [...], "annotator": ...}``); all or none."""
    from tracescore.labels import add

    annotator = None
    if isinstance(body, dict):
        if not isinstance(body.get("labels"), list):
            raise HTTPException(422, "send a JSON list of labels, or {\"labels\": [...]}")
        annotator = body.get("annotator")
        labels = body["labels"]
    else:
        labels = body
    rows = await _call(add, request.app.state.store, labels, annotator=annotator)
    _poke(request)
    return {"written": len(rows), "label_ids": [r["label_id"] for r in rows]}


@router.get("/api/labels")
async def get_labels(request: Request, schema_name: str | None = None,
                     trace_id: str | None = None, annotator: str | None = None,
                     queue: str | None = None, current: bool = True,
                     limit: int = Query(1000, ge=1, le=100_000)) -> dict[str, Any]:
    """Labels as JSONL-shaped objects, oldest first (``current``: the newest of each target ×
    schema × annotator only)."""
    from tracescore.labels import list_labels

    rows = await _call(list_labels, request.app.state.store, schema_name=schema_name,
                       trace_id=trace_id, annotator=annotator, queue=queue, current=current,
                       limit=limit)
    return {"labels": rows}


@router.post("/api/queues")
async def post_queue(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """Create a review queue from its selection (the chosen items are frozen)."""
    from tracescore.labels import create_queue, get_queue

    settings = _settings(request)
    store = request.app.state.store
    made = await _call(create_queue, store, body, hide_judge=settings.hide_judge)
    return await _call(get_queue, store, made["name"])


@router.get("/api/queues")
async def get_queues(request: Request) -> dict[str, Any]:
    """Every review queue with its progress."""
    from tracescore.labels import list_queues

    return {"queues": await _call(list_queues, request.app.state.store)}


@router.get("/api/queues/{name}")
async def get_queue(request: Request, name: str, annotator: str | None = None
                    ) -> dict[str, Any]:
    """One review queue with its progress (``mine``: what ``annotator`` did)."""
    from tracescore.labels import get_queue as one

    return await _call(one, request.app.state.store, name, annotator=annotator)


class AnnotatorRequest(BaseModel):
    """Who is labelling (``next``), and which item (``skip``)."""

    annotator: str = Field(min_length=1, max_length=200)
    item_key: str | None = None


@router.post("/api/queues/{name}/next")
async def post_next(request: Request, name: str, body: AnnotatorRequest) -> dict[str, Any]:
    """Claim the annotator's next item (a lease); ``{"item": null}`` when none is left."""
    from tracescore.labels import next_item

    return {"item": await _call(next_item, request.app.state.store, name, body.annotator)}


@router.get("/api/queues/{name}/item")
async def get_item(request: Request, name: str, key: str,
                   annotator: str | None = None) -> dict[str, Any]:
    """One item of a queue as the annotator sees it (the judge hidden until labelled)."""
    from tracescore.labels import item_detail

    return await _call(item_detail, request.app.state.store, name, key, annotator)


@router.post("/api/queues/{name}/skip")
async def post_skip(request: Request, name: str, body: AnnotatorRequest) -> dict[str, Any]:
    """The annotator passes on an item (others still get it)."""
    from tracescore.labels import skip_item

    if not body.item_key:
        raise HTTPException(422, "say which item to skip: item_key")
    await _call(skip_item, request.app.state.store, name, body.item_key, body.annotator)
    return {"skipped": body.item_key}


@router.get("/api/agreement")
async def get_agreement(request: Request, scorer_id: str | None = None,
                        schema_name: str | None = None) -> dict[str, Any]:
    """``judge_agreement`` (brought up to date first) and how annotators agree per schema."""
    from tracescore.labels import agreement, agreement_json, annotator_agreement

    store = request.app.state.store
    settings = _settings(request)
    live = getattr(request.app.state, "live", None)
    keeper = getattr(getattr(live, "trust", None), "keeper", None)

    def read() -> dict[str, Any]:
        from tracescore.labels import AgreementKeeper

        (keeper or AgreementKeeper(resamples=settings.bootstrap_resamples,
                                   seed=settings.bootstrap_seed)).refresh(store)
        rows = agreement(store, scorer_id=scorer_id, schema_name=schema_name)
        return {"agreement": [agreement_json(r) for r in rows],
                "annotators": annotator_agreement(store, schema_name=schema_name),
                "floor": settings.agreement_floor}

    return await _call(read)


@router.get("/api/scorer-versions")
async def get_versions(request: Request, scorer_id: str | None = None) -> dict[str, Any]:
    """Judge versions ``tracescore align`` fitted (newest first)."""
    from tracescore.store import json_safe

    where, params = ("WHERE scorer_id = ?", [scorer_id]) if scorer_id else ("", [])
    rows = await request.app.state.store.aread(
        f"SELECT * FROM scorer_versions {where} ORDER BY created_at DESC", params)
    return {"versions": [_parsed(json_safe(r), VERSION_JSON) for r in rows]}


VERSION_JSON = ("examples", "before", "after", "candidates")


def _parsed(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    import json

    return {k: json.loads(v) if k in names and isinstance(v, str) else v
            for k, v in row.items()}


@router.post("/api/scorer-versions")
async def post_version(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """Store one aligned version's row (what ``tracescore align --url`` sends)."""
    from tracescore.store import InvalidRow, insert_arrow, rows_table

    try:
        table = rows_table("scorer_versions", [body])
    except InvalidRow as exc:
        raise HTTPException(422, str(exc)) from None

    def write(conn: Any) -> None:
        insert_arrow(conn, "scorer_versions", table, "INSERT OR REPLACE")

    await request.app.state.store.write(write)
    return {"scorer_id": body.get("scorer_id"), "version": body.get("version")}


TRACE_SCORES_SQL = """
SELECT score_id, trace_id, span_id, scorer_id, scorer_name, scorer_version, source, status,
       score, reason, created_at, duration_ms, judge_input_tokens, judge_output_tokens,
       judge_total_tokens, judge_cost, session_id
FROM scores WHERE trace_id = ? ORDER BY created_at, score_id LIMIT 1000
"""


@router.get("/api/traces/{trace_id}/scores", tags=["query"])
async def get_trace_scores(request: Request, trace_id: str) -> dict[str, Any]:
    """A trace's scores, each with its scorer version's agreement with people (null when no
    labels check that version)."""
    from tracescore.labels import agreement_for
    from tracescore.store import json_safe

    from ._api import full_trace_id

    store = request.app.state.store
    trace_id = await full_trace_id(store, trace_id)

    def read() -> list[dict[str, Any]]:
        rows = store.read(TRACE_SCORES_SQL, [trace_id])
        found = agreement_for(store.read, [(r["scorer_id"], r["scorer_version"]) for r in rows])
        return [{**json_safe(r), "agreement": found.get((r["scorer_id"], r["scorer_version"]))}
                for r in rows]

    return {"trace_id": trace_id, "scores": await asyncio.to_thread(read)}


def agreement_families(live: Any) -> Iterator[Any]:
    """``tracescore_judge_agreement_kappa`` (with ``_low``/``_high``) and
    ``tracescore_judge_agreement_labels`` per scorer version and schema, from the live
    scorer's last refresh (no query at scrape time; nothing before the first refresh)."""
    from prometheus_client.core import GaugeMetricFamily

    trust = getattr(live, "trust", None) if live is not None else None
    rows = getattr(trust, "agreement_rows", None) or []
    if not rows:
        return
    names = ["scorer_id", "scorer_version", "schema"]
    kappa = GaugeMetricFamily("tracescore_judge_agreement_kappa",
                              "Cohen's kappa between a judge version and people's labels",
                              labels=names)
    low = GaugeMetricFamily("tracescore_judge_agreement_kappa_low",
                            "Lower end of kappa's bootstrap 95% interval", labels=names)
    high = GaugeMetricFamily("tracescore_judge_agreement_kappa_high",
                             "Upper end of kappa's bootstrap 95% interval", labels=names)
    count = GaugeMetricFamily("tracescore_judge_agreement_labels",
                              "Labelled targets a judge version's agreement rests on",
                              labels=names)
    nan = float("nan")
    for row in rows:
        key = [row["scorer_id"], row["scorer_version"], row["schema_name"]]
        kappa.add_metric(key, nan if row["kappa"] is None else row["kappa"])
        low.add_metric(key, nan if row["kappa_low"] is None else row["kappa_low"])
        high.add_metric(key, nan if row["kappa_high"] is None else row["kappa_high"])
        count.add_metric(key, float(row["n"] or 0))
    yield from (kappa, low, high, count)


def mount_labels(app: FastAPI) -> None:
    """Read ``[labels]`` and ``[[canaries]]`` and add the labels routes."""
    from tracescore.labels import InvalidLabel, parse_labels_config

    settings = app.state.settings
    source = getattr(settings, "config_path", None) or "the built-in defaults"
    live_setup = getattr(app.state, "live_setup", None)
    ids = [reg.id for reg in live_setup[1]] if live_setup is not None else None
    try:
        app.state.labels_setup = parse_labels_config(
            getattr(settings, "config", None) or {}, source=source, scorer_ids=ids)
    except InvalidLabel as exc:
        raise ConfigError(str(exc)) from None
    app.include_router(router)


__all__ = ["agreement_families", "mount_labels", "router"]
