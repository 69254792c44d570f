"""docs/scorers.md lists every CATALOGUE id with its factory and every option it takes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tracescore.scorers import CATALOGUE

DOC = Path(__file__).resolve().parents[2] / "docs" / "scorers.md"
ROW = re.compile(r"^\| `(?P<id>[a-z0-9-]+)` \| `(?P<factory>[\w.]+)` \| (?P<options>.*) \|$")
NOT_OPTIONS = {"options", "id", "name"}


def _rows() -> dict[str, tuple[str, str]]:
    section = DOC.read_text().split("## The catalogue", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            rows[match["id"]] = (match["factory"], match["options"])
    return rows


def test_every_catalogue_id_has_a_row_and_no_row_is_stale() -> None:
    assert sorted(_rows()) == sorted(CATALOGUE)


def test_each_row_names_the_factory_and_all_its_options() -> None:
    rows = _rows()
    problems = []
    for scorer_id, factory in CATALOGUE.items():
        named, options = rows[scorer_id]
        if named.rsplit(".", 1)[-1] != factory.__name__:
            problems.append(f"{scorer_id}: factory {named} is not {factory.__name__}")
        documented = set(re.findall(r"`(\w+)`", options))
        params = set(inspect.signature(factory).parameters) - NOT_OPTIONS
        if params - documented:
            problems.append(f"{scorer_id}: undocumented options {sorted(params - documented)}")
        if documented - params:
            problems.append(f"{scorer_id}: documented options it does not take "
                            f"{sorted(documented - params)}")
    assert problems == []
