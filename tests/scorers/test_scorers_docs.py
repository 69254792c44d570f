"""docs/scorers.md: its examples run as written, and every public name is documented."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import tracescore.scorers
from tracescore.scorers import checks

DOC = Path(__file__).resolve().parents[2] / "docs" / "scorers.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def _exec(*indexes: int, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    namespace = {} if namespace is None else namespace
    for i in indexes:
        exec(_blocks()[i], namespace)  # noqa: S102 - our own documentation
    return namespace


def test_checks_example(capsys: pytest.CaptureFixture[str]) -> None:
    namespace = _exec(0)
    assert set(namespace["scores"].values()) == {1.0}


def test_llm_example_against_the_scripted_judge(llm_server: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", llm_server.url)
    claims = ["The first Star Wars movie came out in 1977.", "It was directed by George Lucas.",
              "It made over $1 billion at the box office.", "It was filmed entirely in California."]
    llm_server.script({"claims": claims},
                      {"verdicts": [{"statement": c, "verdict": v, "reason": "r"}
                                    for c, v in zip(claims, ["no", "no", "yes", "yes"],
                                                    strict=True)]},
                      "The score is 0.5 because the box-office and filming claims contradict it.")
    namespace = _exec(1, 2)
    assert namespace["result"].score == 0.5
    assert llm_server.requests[0]["temperature"] == 0


def test_get_context_example_builds() -> None:
    assert _exec(3)["grounded"].id == "hallucination-scorer"


def test_compare_example() -> None:
    namespace = _exec(4)
    assert namespace["relaxed"].score == 1.0
    assert namespace["relaxed"].extra_steps == ["validate"]
    assert namespace["strict"].score == 0.25


def test_code_scorer_example() -> None:
    _exec(5)


def test_text_code_scorer_example(capsys: pytest.CaptureFixture[str]) -> None:
    block = next(b for b in _blocks() if "create_keyword_coverage_scorer()" in b)
    exec(block, {})  # noqa: S102 - our own documentation
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "0.4"
    assert "'chlorophyll'" in printed[1]


def test_public_names_are_documented() -> None:
    text = DOC.read_text()
    missing = [n for n in tracescore.scorers.__all__ if n not in text]
    missing += [n for n in checks.__all__ if f"{n}(" not in text]
    assert missing == []
