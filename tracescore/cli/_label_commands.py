"""CLI commands: ``labels`` (schema, import, export), ``queues`` (create, list) and
``agreement`` (``align`` is in ``_align_commands.py``).

Each works against a running server (``--url``, default http://127.0.0.1:4318) or a database
file no server holds (``--db``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._server_commands import (
    DEFAULT_URL,
    _client,
    _db_option,
    _key_option,
    _server_error,
    _unreachable,
    _url_option,
    format_rows,
)

COMMANDS: list[click.Command] = []

T = TypeVar("T")


def _pick(url: str | None, db: str | None) -> None:
    if url and db:
        raise click.UsageError("give either --url or --db, not both")


def _errors(fn: Callable[[], T]) -> T:
    """Call ``fn``; the project's errors become one sentence."""
    from tracescore.model import TracescoreError

    try:
        return fn()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from None


def _http(url: str | None, api_key: str | None, method: str, path: str, *,
          body: Any = None, params: dict[str, Any] | None = None,
          timeout_s: float = 60.0) -> Any:
    import httpx

    base = url or DEFAULT_URL
    try:
        with _client(base, api_key, timeout_s) as client:
            response = client.request(method, path, json=body, params=params)
    except httpx.HTTPError as exc:
        raise _unreachable(base, exc) from None
    if response.status_code != 200:
        raise _server_error(response)
    return response.json()


def _open(db: str, *, read_only: bool) -> Any:
    from tracescore.store import Store, StoreError

    try:
        return Store(db, read_only=read_only).open()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


def _on_file(db: str, fn: Callable[[Any], T], *, read_only: bool = False) -> T:
    store = _open(db, read_only=read_only)
    try:
        return _errors(lambda: fn(store))
    finally:
        store.close()


# -- labels ------------------------------------------------------------------------------------


@click.group("labels")
def labels_group() -> None:
    """Human labels: schemas, import and export as JSONL."""


@labels_group.command("schema")
@click.argument("name")
@click.option("--kind", type=click.Choice(["boolean", "categorical", "numeric"]), required=True,
              help="What a label is: true/false, one of --values, or a number in a range.")
@click.option("--values", "values", default=None,
              help="Categorical: the values, comma-separated, worst first.")
@click.option("--min", "min_value", type=float, default=None, help="Numeric: the lowest value.")
@click.option("--max", "max_value", type=float, default=None, help="Numeric: the highest value.")
@click.option("--rubric", default=None, help="What annotators should look for.")
@click.option("--scorer", "scorer_id", default=None,
              help="The scorer whose scores these labels check (agreement is kept for it).")
@click.option("--threshold", type=float, default=None,
              help="A score (and normalized label) at or above this is positive (default 0.5).")
@_url_option
@_db_option
@_key_option
def labels_schema(name: str, kind: str, values: str | None, min_value: float | None,
                  max_value: float | None, rubric: str | None, scorer_id: str | None,
                  threshold: float | None, url: str | None, db: str | None,
                  api_key: str | None) -> None:
    """Create or update the label schema NAME."""
    _pick(url, db)
    body = {"name": name, "kind": kind, "rubric": rubric, "scorer_id": scorer_id,
            "threshold": threshold, "min_value": min_value, "max_value": max_value,
            "values": [v.strip() for v in values.split(",")] if values else None}
    body = {k: v for k, v in body.items() if v is not None}
    if db:
        from tracescore.labels import create_schema

        made = _on_file(db, lambda store: create_schema(store, body).model_dump(mode="json"))
    else:
        made = _http(url, api_key, "POST", "/api/label-schemas", body=body)
    click.echo(f"label schema {made['name']} ({made['kind']})"
               + (f" checks scorer {made['scorer_id']}" if made.get("scorer_id") else ""))


@labels_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--annotator", default=None, help="The annotator of lines that name none.")
@_url_option
@_db_option
@_key_option
def labels_import(path: str, annotator: str | None, url: str | None, db: str | None,
                  api_key: str | None) -> None:
    """Add the labels of a JSONL file (one {"trace_id", "span_id"?, "schema", "value",
    "annotator"?, "comment"?} per line); nothing is stored when a line is bad."""
    _pick(url, db)
    from tracescore.labels import import_labels, parse_jsonl

    if db:
        count = _on_file(db, lambda store: import_labels(store, path, annotator=annotator))
    else:
        with open(path, encoding="utf-8") as handle:
            lines = _errors(lambda: list(parse_jsonl(handle)))
        answer = _http(url, api_key, "POST", "/api/labels",
                       body={"labels": lines, "annotator": annotator}, timeout_s=300.0)
        count = int(answer["written"])
    click.echo(f"imported {count} label(s) from {path}")


@labels_group.command("export")
@click.option("--schema", "schema_name", default=None, help="Only labels of this schema.")
@click.option("--all", "history", is_flag=True, default=False,
              help="Every label, superseded ones too (default: the current label of each "
                   "target, schema and annotator).")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write to this file (default: standard output).")
@_url_option
@_db_option
@_key_option
def labels_export(schema_name: str | None, history: bool, out: str | None, url: str | None,
                  db: str | None, api_key: str | None) -> None:
    """Write labels as JSONL (what `labels import` reads back)."""
    _pick(url, db)
    if db:
        from tracescore.labels import list_labels

        rows = _on_file(db, lambda store: list_labels(store, schema_name=schema_name,
                                                      current=not history, limit=10_000_000),
                        read_only=True)
    else:
        params: dict[str, Any] = {"current": str(not history).lower(), "limit": 100_000}
        if schema_name:
            params["schema_name"] = schema_name
        rows = _http(url, api_key, "GET", "/api/labels", params=params)["labels"]
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(rows)} label(s) to {out}", err=True)
    else:
        click.echo(text, nl=False)


COMMANDS.append(labels_group)


# -- queues ------------------------------------------------------------------------------------


@click.group("queues")
def queues_group() -> None:
    """Review queues: what people label next."""


@queues_group.command("create")
@click.argument("name")
@click.option("--schema", "schemas", multiple=True, required=True,
              help="A label schema asked for each item (repeatable, in order).")
@click.option("--selection", default=None,
              help="A SQL predicate over traces (sessions, dataset_items for other targets).")
@click.option("--target", type=click.Choice(["trace", "session", "item"]), default="trace",
              show_default=True, help="What is labelled.")
@click.option("--dataset", default=None, help="With --target item: the dataset.")
@click.option("--size", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Items in the queue at most.")
@click.option("--order", type=click.Choice(["random", "newest", "oldest"]), default="random",
              show_default=True, help="Which matching targets are taken.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --order random.")
@click.option("--annotators-per-item", type=click.IntRange(1, 50), default=1, show_default=True,
              help="How many people label each item.")
@click.option("--scorer", "scorer_id", default=None,
              help="Whose score the page reveals after labelling (default: the first schema's).")
@click.option("--show-judge", is_flag=True, default=False,
              help="Show the judge's score and reason before the item is labelled.")
@click.option("--lease-seconds", type=float, default=900.0, show_default=True,
              help="How long a claimed item stays with its annotator.")
@_url_option
@_db_option
@_key_option
def queues_create(name: str, schemas: tuple[str, ...], selection: str | None, target: str,
                  dataset: str | None, size: int, order: str, seed: int,
                  annotators_per_item: int, scorer_id: str | None, show_judge: bool,
                  lease_seconds: float, url: str | None, db: str | None,
                  api_key: str | None) -> None:
    """Create the review queue NAME from a selection (the chosen items are frozen)."""
    _pick(url, db)
    body: dict[str, Any] = {
        "name": name, "schemas": list(schemas), "selection": selection, "target_type": target,
        "dataset": dataset, "size": size, "order": order, "seed": seed,
        "annotators_per_item": annotators_per_item, "scorer_id": scorer_id,
        "lease_seconds": lease_seconds}
    if show_judge:
        body["hide_judge"] = False
    body = {k: v for k, v in body.items() if v is not None}
    if db:
        from tracescore.labels import create_queue

        made = _on_file(db, lambda store: create_queue(store, body))
    else:
        made = _http(url, api_key, "POST", "/api/queues", body=body)
    click.echo(f"queue {made['name']}: {made['items']} item(s) to label with "
               f"{', '.join(made['schemas'])}")


QUEUE_COLUMNS = ("name", "target_type", "schemas", "items", "annotators_per_item", "done",
                 "skipped", "needed")


@queues_group.command("list")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
@_url_option
@_db_option
@_key_option
def queues_list(output_format: str, url: str | None, db: str | None,
                api_key: str | None) -> None:
    """Every review queue with its progress."""
    _pick(url, db)
    if db:
        from tracescore.labels import list_queues

        rows = _on_file(db, list_queues, read_only=True)
    else:
        rows = _http(url, api_key, "GET", "/api/queues")["queues"]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    table = [[", ".join(r[c]) if c == "schemas" else r.get(c) for c in QUEUE_COLUMNS]
             for r in rows]
    click.echo(format_rows(list(QUEUE_COLUMNS), table, "table"), nl=False)


COMMANDS.append(queues_group)


# -- agreement ---------------------------------------------------------------------------------


AGREEMENT_COLUMNS = ("scorer_id", "scorer_version", "schema_name", "n", "kappa", "tpr", "tnr",
                     "spearman", "mae", "threshold")


def _interval(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if value is None:
        return ""
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    return f"{value:.2f}" + (f" [{low:.2f}–{high:.2f}]" if low is not None and high is not None
                             else "")


@click.command("agreement")
@click.option("--scorer", "scorer_id", default=None, help="Only this scorer.")
@click.option("--schema", "schema_name", default=None, help="Only this label schema.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
@_url_option
@_db_option
@_key_option
def agreement_command(scorer_id: str | None, schema_name: str | None, output_format: str,
                      url: str | None, db: str | None, api_key: str | None) -> None:
    """How each judge version agrees with people (κ, TPR/TNR or ρ/MAE, 95 % intervals), and
    how annotators agree with each other."""
    _pick(url, db)
    if db:
        from tracescore.labels import agreement, agreement_json, annotator_agreement

        def read(store: Any) -> dict[str, Any]:
            rows = agreement(store, scorer_id=scorer_id, schema_name=schema_name, refresh=True)
            return {"agreement": [agreement_json(r) for r in rows],
                    "annotators": annotator_agreement(store, schema_name=schema_name)}

        answer = _on_file(db, read)
    else:
        params = {k: v for k, v in (("scorer_id", scorer_id), ("schema_name", schema_name)) if v}
        answer = _http(url, api_key, "GET", "/api/agreement", params=params)
    if output_format == "json":
        click.echo(json.dumps(answer, indent=2, default=str))
        return
    rows = answer["agreement"]
    table = [[_interval(r, c) if c in ("kappa", "tpr", "tnr", "spearman", "mae")
              else r.get(c) for c in AGREEMENT_COLUMNS] for r in rows]
    click.echo(format_rows(list(AGREEMENT_COLUMNS), table, "table"), nl=False)
    for row in answer["annotators"]:
        if row.get("value") is not None:
            click.echo(f"annotators on {row['schema_name']}: {row['metric']} "
                       f"{_interval(row, 'value').replace('value', '')}"
                       f" over {row['n']} item(s), {row['annotators']} annotator(s)")


COMMANDS.append(agreement_command)


__all__ = ["COMMANDS"]
