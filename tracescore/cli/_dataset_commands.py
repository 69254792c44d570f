"""CLI commands: ``datasets`` (list, show, create, add, remove, export) and ``experiments``
(list, compare — the CI gate, exiting 1 when anything regressed and 2 for a usage error such
as a misspelled experiment name).

Each works against a running server (``--url``) or a database file (``--db``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._server_commands import DEFAULT_URL, _db_option, _key_option, _url_option

COMMANDS: list[click.Command] = []

T = TypeVar("T")


def _store(url: str | None, db: str | None) -> str:
    if url and db:
        raise click.UsageError("give either --url or --db, not both")
    return db or url or DEFAULT_URL


def _run(fn: Callable[[], T]) -> T:
    """Call ``fn``; the project's errors (and unreachable servers) become one sentence."""
    import httpx

    from tracescore.model import TracescoreError

    try:
        return fn()
    except TracescoreError as exc:
        raise click.ClickException(str(exc)) from None
    except httpx.HTTPError as exc:
        raise click.ClickException(
            f"cannot reach the tracescore server ({exc}); start one with `tracescore serve`, "
            "or open a database file with --db") from None


def _read_jsonl(path: str) -> list[dict[str, Any]]:
    items = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise click.ClickException(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise click.ClickException(f"{path}:{number}: each line must be a JSON object")
        items.append(value)
    return items


def _count(dataset: Any) -> int:
    """Items of the dataset's version (a change answers one page of them)."""
    return int(dataset.item_count if dataset.item_count is not None else len(dataset.items))


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@click.group("datasets")
def datasets_group() -> None:
    """Versioned eval datasets (also made from stored traces)."""


@datasets_group.command("list")
@_url_option
@_db_option
@_key_option
def datasets_list(url: str | None, db: str | None, api_key: str | None) -> None:
    """List datasets with their newest version and item count."""
    from tracescore.datasets import list_datasets

    rows = _run(lambda: list_datasets(_store(url, db), api_key=api_key))
    click.echo(f"{'name':24} {'version':>7} {'items':>6}  description")
    for row in rows:
        click.echo(f"{row.name:24} {row.current_version:>7} {row.item_count:>6}  "
                   f"{row.description or ''}")


@datasets_group.command("show")
@click.argument("name")
@click.option("--version", type=int, default=None, help="A past version (default: newest).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
@_url_option
@_db_option
@_key_option
def datasets_show(name: str, version: int | None, output_format: str, url: str | None,
                  db: str | None, api_key: str | None) -> None:
    """Show one version of dataset NAME and its items."""
    from tracescore.datasets import get_dataset
    from tracescore.model import counted

    dataset = _run(lambda: get_dataset(_store(url, db), name, version, api_key=api_key))
    if output_format == "json":
        click.echo(dataset.model_dump_json(indent=2, exclude_none=True))
        return
    click.echo(f"{dataset.name} version {dataset.version} of {dataset.current_version}: "
               f"{counted(len(dataset.items), 'item')}")
    for item in dataset.items:
        click.echo(f"  {item.item_id}  v{item.version_added}  input={_short(item.input)}  "
                   f"ground_truth={_short(item.ground_truth)}")


@datasets_group.command("create")
@click.argument("name")
@click.option("--description", default=None, help="Free text.")
@click.option("--from-jsonl", "from_jsonl", type=click.Path(exists=True, dir_okay=False),
              default=None, help="Items, one JSON object a line (input, ground_truth, ...).")
@_url_option
@_db_option
@_key_option
def datasets_create(name: str, description: str | None, from_jsonl: str | None,
                    url: str | None, db: str | None, api_key: str | None) -> None:
    """Create dataset NAME (version 1), optionally with items from a JSONL file."""
    from tracescore.datasets import create_dataset
    from tracescore.model import counted

    items = _read_jsonl(from_jsonl) if from_jsonl else []
    dataset = _run(lambda: create_dataset(_store(url, db), name, description=description,
                                          items=items, api_key=api_key))
    click.echo(f"created {dataset.name} version {dataset.version} with "
               f"{counted(_count(dataset), 'item')}")


@datasets_group.command("add")
@click.argument("name")
@click.option("--from-jsonl", "from_jsonl", type=click.Path(exists=True, dir_okay=False),
              default=None, help="Items, one JSON object a line.")
@click.option("--from-trace", "from_traces", multiple=True,
              help="A stored trace to turn into an item (repeatable).")
@click.option("--from-sql", "from_sql", default=None,
              help="A read-only query returning a trace_id column; each trace becomes an item.")
@click.option("--trajectory", is_flag=True, default=False,
              help="With --from-trace/--from-sql: keep the trajectory as expected_trajectory.")
@_url_option
@_db_option
@_key_option
def datasets_add(name: str, from_jsonl: str | None, from_traces: tuple[str, ...],
                 from_sql: str | None, trajectory: bool, url: str | None, db: str | None,
                 api_key: str | None) -> None:
    """Add items to dataset NAME as a new version."""
    from tracescore.datasets import add_items, items_from_traces
    from tracescore.model import counted

    if sum(bool(x) for x in (from_jsonl, from_traces, from_sql)) != 1:
        raise click.UsageError("give exactly one of --from-jsonl, --from-trace, --from-sql")
    store = _store(url, db)
    if from_jsonl:
        items: list[Any] = _read_jsonl(from_jsonl)
    else:
        ids = [part for value in from_traces for part in value.split(",") if part] or None
        items = _run(lambda: items_from_traces(store, ids, sql=from_sql, trajectory=trajectory,
                                               api_key=api_key))
    dataset = _run(lambda: add_items(store, name, items, api_key=api_key))
    click.echo(f"added {counted(len(items), 'item')}: {dataset.name} is now version "
               f"{dataset.version} ({counted(_count(dataset), 'item')})")


@datasets_group.command("remove")
@click.argument("name")
@click.argument("item_ids", nargs=-1, required=True)
@_url_option
@_db_option
@_key_option
def datasets_remove(name: str, item_ids: tuple[str, ...], url: str | None, db: str | None,
                    api_key: str | None) -> None:
    """Remove ITEM_IDS from dataset NAME in a new version (older versions keep them)."""
    from tracescore.datasets import remove_items
    from tracescore.model import counted

    dataset = _run(lambda: remove_items(_store(url, db), name, list(item_ids), api_key=api_key))
    click.echo(f"removed {counted(len(item_ids), 'item')}: {dataset.name} is now version "
               f"{dataset.version} ({counted(_count(dataset), 'item')})")


@datasets_group.command("export")
@click.argument("name")
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True,
              help="The JSONL file to write (one item a line).")
@click.option("--version", type=int, default=None, help="A past version (default: newest).")
@_url_option
@_db_option
@_key_option
def datasets_export(name: str, out: str, version: int | None, url: str | None, db: str | None,
                    api_key: str | None) -> None:
    """Write one version of dataset NAME as JSONL (what --from-jsonl reads back)."""
    from tracescore.datasets import export_line, get_dataset
    from tracescore.model import counted

    dataset = _run(lambda: get_dataset(_store(url, db), name, version, api_key=api_key))
    lines = [json.dumps(export_line(item), ensure_ascii=False) for item in dataset.items]
    Path(out).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    click.echo(f"wrote {counted(len(lines), 'item')} of {dataset.ref} to {out}")


COMMANDS.append(datasets_group)


@click.group("experiments")
def experiments_group() -> None:
    """Recorded run_evals experiments, and comparisons that gate CI."""


@experiments_group.command("list")
@click.option("--dataset", default=None, help="Only experiments on this dataset.")
@_url_option
@_db_option
@_key_option
def experiments_list(dataset: str | None, url: str | None, db: str | None,
                     api_key: str | None) -> None:
    """List experiments, newest first."""
    from tracescore.evals import list_experiments

    rows = _run(lambda: list_experiments(_store(url, db), dataset=dataset, api_key=api_key))
    click.echo(f"{'name':20} {'experiment_id':32} {'status':9} {'items':>5} {'errors':>6}  "
               "created_at")
    for row in rows:
        created = row.created_at.isoformat(timespec="seconds") if row.created_at else ""
        click.echo(f"{row.name:20} {row.experiment_id:32} {row.status or '':9} "
                   f"{row.item_count or 0:>5} {row.error_count or 0:>6}  {created}")


@experiments_group.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@click.option("--threshold", type=float, default=0.05, show_default=True,
              help="How far an average may move the wrong way before it is a regression.")
@click.option("--format", "output_format", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True, help="Output (markdown fits a PR comment).")
@click.option("--lower-is-better", "lower_is_better", multiple=True,
              help="A scorer id whose lower scores are better (repeatable; the catalogue's "
                   "hallucination, bias and toxicity scorers already are).")
@click.option("--agreement-floor", type=float, default=0.6, show_default=True,
              help="Warn about judge scorers whose κ with people's labels is below this, or "
                   "unknown.")
@_url_option
@_db_option
@_key_option
def experiments_compare(baseline: str, candidate: str, threshold: float, output_format: str,
                        lower_is_better: tuple[str, ...], agreement_floor: float,
                        url: str | None, db: str | None, api_key: str | None) -> None:
    """Compare experiment CANDIDATE with BASELINE (names or ids); exit 1 if anything regressed,
    2 for a usage error (an experiment that does not exist, a bad option)."""
    from tracescore.evals import (
        EvalValidationError,
        compare_experiments,
        format_markdown,
        format_table,
    )

    def compare() -> Any:
        try:
            return compare_experiments(_store(url, db), baseline, candidate,
                                       threshold=threshold, lower_is_better=lower_is_better,
                                       api_key=api_key)
        except EvalValidationError as exc:  # a misspelled name must not read as a regression
            raise click.UsageError(str(exc)) from None

    result = _run(compare)
    if output_format == "json":
        click.echo(result.model_dump_json(indent=2))
    elif output_format == "markdown":
        click.echo(format_markdown(result))
    else:
        click.echo(format_table(result))
    for line in _agreement_warnings(result, agreement_floor, url=url, db=db, api_key=api_key):
        click.echo(f"warning: {line}", err=True)
    if result.regressed:
        raise SystemExit(1)


JUDGES_SQL = """
SELECT DISTINCT scorer_id FROM scores
WHERE list_contains(?::VARCHAR[], experiment_id) AND coalesce(judge_total_tokens, 0) > 0
"""


def _agreement_warnings(result: Any, floor: float, *, url: str | None, db: str | None,
                        api_key: str | None) -> list[str]:
    """Judge scorers of the comparison whose agreement with people is unknown or low."""
    from tracescore.labels import BEST_BY_SCORER_SQL, gating_warnings

    from ._server_commands import run_sql

    ids = [result.baseline.experiment_id, result.candidate.experiment_id]
    try:
        _, judged, _, _ = run_sql(JUDGES_SQL, [ids], url=url, db=db, api_key=api_key,
                                  timeout_s=60.0)
        gating = sorted({row[0] for row in judged} & set(result.scorers))
        if not gating:
            return []
        columns, rows, _, _ = run_sql(BEST_BY_SCORER_SQL, [gating], url=url, db=db,
                                      api_key=api_key, timeout_s=60.0)
    except click.ClickException as exc:
        return [f"could not read judge agreement: {exc.message}"]
    return gating_warnings([dict(zip(columns, row, strict=True)) for row in rows], gating,
                           floor)


COMMANDS.append(experiments_group)

__all__ = ["COMMANDS"]
