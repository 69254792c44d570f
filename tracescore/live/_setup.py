"""Building the live scorer's settings and registry from a parsed config file.

``load_live_config`` validates ``[live]`` (with ``[live.budget]``) and ``[[scorers]]``, imports
and builds every enabled scorer, and checks each ``filter`` by running it with ``LIMIT 0``
against an empty database of the current schema, so a bad config stops start-up with one
sentence naming the file, the entry and the key, before any trace is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._config import LiveSettings, parse_live_settings, parse_scorer_entries
from ._errors import ConfigError
from ._registry import Registry
from ._selection import filter_check_query


def load_live_config(
    document: Mapping[str, Any],
    *,
    source: str = "the config file",
    base_dir: Path | None = None,
    judge_model: str | None = None,
    judge_api_base: str | None = None,
) -> tuple[LiveSettings, Registry]:
    """Settings and registry of a parsed config; ``judge_model``/``judge_api_base`` (from
    ``TRACESCORE_JUDGE_MODEL``/``TRACESCORE_JUDGE_API_BASE``) override ``[live]``'s."""
    live_table = document.get("live")
    if live_table is not None and not isinstance(live_table, Mapping):
        raise ConfigError(f"[live] in {source}: must be a table")
    scorers = document.get("scorers")
    if scorers is not None and not isinstance(scorers, list):
        raise ConfigError(f"scorers in {source}: must be an array of tables ([[scorers]])")
    settings = parse_live_settings(live_table, source=source)
    updates = {k: v for k, v in (("judge_model", judge_model),
                                 ("judge_api_base", judge_api_base)) if v}
    if updates:
        settings = settings.model_copy(update=updates)
    entries = parse_scorer_entries(scorers, source=source)
    registry = Registry.from_entries(
        entries, base_dir=base_dir, judge_model=settings.judge_model,
        judge_api_base=settings.judge_api_base, source=source)
    check_filters(registry, source=source)
    return settings, registry


def check_filters(registry: Registry, *, source: str = "the config file") -> None:
    """Run every enabled scorer's filter once (``LIMIT 0``) over an empty ``traces`` view."""
    filtered = [reg for reg in registry.enabled() if reg.filter is not None or reg.sample]
    if not filtered:
        return
    import duckdb

    from tracescore.store import MIGRATIONS

    conn = duckdb.connect(":memory:")
    try:
        for _, _, statements in MIGRATIONS:
            for statement in statements():
                conn.execute(statement)
        for reg in filtered:
            checks = [("filter", reg.filter)] if reg.filter is not None else []
            checks += [(f"sample #{n}.where", where) for n, (where, _) in enumerate(reg.sample, 1)]
            for key, predicate in checks:
                try:
                    conn.execute(filter_check_query(predicate))
                except duckdb.Error as exc:
                    raise ConfigError(
                        f"[[scorers]] id {reg.id!r} in {source}: key {key!r}: {predicate!r} is "
                        f"not a valid SQL predicate over the traces table: "
                        f"{str(exc).splitlines()[0]}") from None
    finally:
        conn.close()
