"""docs/scorers.md lists every CATALOGUE id with its factory and every option it takes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

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


def test_catalogue_example_against_the_scripted_judge(llm_server: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", llm_server.url)
    llm_server.script({"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "r"},
                                    {"context_index": 1, "verdict": "no", "reason": "r"}]},
                      "The score is 1 because the useful piece comes first.")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
               if 'CATALOGUE["context-precision-scorer"]' in b]
    namespace: dict[str, Any] = {}
    exec(block, namespace)  # noqa: S102 - our own documentation
    assert namespace["result"].score == 1.0
    assert "Norway has more than a thousand fjords." in llm_server.requests[0]["messages"][-1][
        "content"]
