"""CLI command: ``align`` — fit a judge to people's labels and prove it on held-out labels.

It builds the scorer from ``--config`` (the embedded default without it), reads the labels and
stored scores from a running server (``--url``) or a database file (``--db``), and calls the
judge from this process.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ._label_commands import _errors, _http, _interval, _on_file, _open, _pick
from ._server_commands import _db_option, _key_option, _url_option, format_rows

COMMANDS: list[click.Command] = []


def _align_reader(url: str | None, db: str | None, api_key: str | None
                  ) -> tuple[Callable[[str, Any], list[dict[str, Any]]], Callable[[], None]]:
    """``read(sql, params)`` over a database file or a server's /api/sql, and its closer."""
    if db:
        store = _open(db, read_only=True)
        return store.read, store.close

    def read(sql: str, params: Any) -> list[dict[str, Any]]:
        answer = _http(url, api_key, "POST", "/api/sql", body={"sql": sql, "params": params})
        return [dict(zip(answer["columns"], row, strict=True)) for row in answer["rows"]]

    return read, lambda: None


def describe_align(report: Any) -> str:
    """The align report for people: each version on the held-out labels, then the verdict."""
    lines = [f"{report.scorer_id}: {report.train} training and {report.holdout} held-out "
             f"label(s) of {report.schema_name} (seed {report.seed}); {report.disagreements} "
             "training disagreement(s) with the current version"]
    if report.candidates:
        columns = ["version", "name", "n", "kappa", "tpr", "tnr", "spearman", "mae",
                   "cost_per_call"]
        table = []
        for c in report.candidates:
            a = c.agreement
            cost = (f"${c.cost_per_call_usd:.6f}" if c.cost_per_call_usd is not None
                    else "unpriced")
            table.append([c.version[:8], c.name, a.get("n"), *(_interval(a, k) for k in
                          ("kappa", "tpr", "tnr", "spearman", "mae")), cost])
        lines.append(format_rows(columns, table, "table").rstrip("\n"))
    if report.dry_run:
        cost = (f", ≈ ${report.estimated_cost_usd:.4f} at the current version's average judge "
                "cost" if report.estimated_cost_usd is not None else "")
        lines.append(f"dry run: a real run makes about {report.estimated_calls} judge scorer "
                     f"run(s){cost}; nothing was called or written")
    for note in report.notes:
        lines.append(note)
    return "\n".join(lines)


@click.command("align")
@click.argument("scorer_id", metavar="SCORER")
@click.option("--schema", "schema_name", required=True, help="The label schema to align to.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the train / held-out split, the examples and the intervals.")
@click.option("--holdout", type=click.FloatRange(0.05, 0.95), default=0.3, show_default=True,
              help="Share of the labelled items held out to measure on.")
@click.option("--examples", type=click.IntRange(0, 20), default=4, show_default=True,
              help="Few-shot examples taken from training disagreements.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Where to write the new version's alignment file (default: "
                   "alignments/SCORER-VERSION.json).")
@click.option("--dry-run", is_flag=True, default=False,
              help="Only split the labels and estimate the judge calls; call nothing.")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
              help="The config whose [[scorers]] entry SCORER is (default: the embedded one).")
@_url_option
@_db_option
@_key_option
def align_command(scorer_id: str, schema_name: str, seed: int, holdout: float, examples: int,
                  out: str | None, dry_run: bool, config: str | None, url: str | None,
                  db: str | None, api_key: str | None) -> None:
    """Fit judge SCORER to the labels of --schema and measure it on held-out labels; write the
    winner as a new version (never replacing the running one) with its backfill cost."""
    _pick(url, db)
    from datetime import UTC, datetime

    from tracescore.labels import align, get_schema, version_row

    from ._live_commands import _file_setup

    _, registry, _, path = _file_setup(config)
    reg = registry.get(scorer_id)
    if reg is None or reg.scorer is None:
        known = ", ".join(r.id for r in registry.enabled()) or "none"
        raise click.ClickException(f"scorer {scorer_id!r} is not an enabled scorer of {path} "
                                   f"(the enabled scorers are: {known})")
    read, close = _align_reader(url, db, api_key)
    try:
        if db:
            from tracescore.store import Store

            with Store(db, read_only=True) as store:
                schema = _errors(lambda: get_schema(store, schema_name))
        else:
            from tracescore.labels import LabelSchema

            schemas = _http(url, api_key, "GET", "/api/label-schemas")["schemas"]
            named = [s for s in schemas if s["name"] == schema_name]
            if not named:
                raise click.ClickException(f"no label schema named {schema_name!r} on {url}")
            schema = LabelSchema.model_validate(named[0])
        report = _errors(lambda: asyncio.run(align(
            read, reg.scorer, scorer_id=scorer_id, parent_version=reg.version, schema=schema,
            seed=seed, holdout=holdout, examples=examples, dry_run=dry_run)))
    finally:
        close()
    click.echo(describe_align(report))
    winner = report.winner
    if winner is None:
        return
    target = Path(out or f"alignments/{scorer_id}-{winner.version[:8]}.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(winner.to_json(), indent=2, ensure_ascii=False) + "\n",
                      encoding="utf-8")
    row = version_row(report, now=datetime.now(UTC).replace(tzinfo=None))
    if db:
        from tracescore.store import insert_arrow, rows_table

        table = rows_table("scorer_versions", [row])
        _on_file(db, lambda store: store.write_sync(
            lambda conn: insert_arrow(conn, "scorer_versions", table, "INSERT OR REPLACE")))
    else:
        _http(url, api_key, "POST", "/api/scorer-versions",
              body=json.loads(json.dumps(row, default=str)))
    before, after = report.candidates[0], next(c for c in report.candidates
                                               if c.version == winner.version)
    click.echo(f"new version {winner.version} ({winner.method}) of {scorer_id}, parent "
               f"{winner.parent_version}: held-out κ {_interval(before.agreement, 'kappa')} → "
               f"{_interval(after.agreement, 'kappa')}; fitted on {winner.label_count} label(s) "
               f"(label set {winner.label_set})")
    click.echo(f"wrote {target}; the running version is unchanged. To score with it, add to "
               f"the [[scorers]] entry of {scorer_id} in {path}:\n"
               f"  alignment = \"{target}\"")
    if report.backfill_cost_usd is not None:
        click.echo(f"backfill: re-scoring the {report.backfill_runs} stored run(s) of version "
                   f"{reg.version[:8]} with it would cost ≈ ${report.backfill_cost_usd:.4f} "
                   f"(`tracescore backfill --scorer {scorer_id}` once it runs)")
    else:
        click.echo(f"backfill: {report.backfill_runs} stored run(s) of version "
                   f"{reg.version[:8]}; the judge's cost is unknown (unpriced model)")
    sys.stdout.flush()


COMMANDS.append(align_command)


__all__ = ["COMMANDS", "describe_align"]
