"""docs/scoring.md: its examples run, and every public name of the room is documented."""

from __future__ import annotations

import re
from pathlib import Path

import tracescore.scoring

DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_function_example_runs() -> None:
    namespace: dict[str, object] = {}
    exec(_blocks()[0], namespace)  # noqa: S102 - our own documentation
    result = namespace["result"]
    assert result.score == 5 / 6  # type: ignore[attr-defined]


def test_prompt_example_builds() -> None:
    namespace: dict[str, object] = {}
    exec("from tracescore import *\n" + _blocks()[3], namespace)  # noqa: S102
    assert namespace["gluten_checker"].steps == [  # type: ignore[attr-defined]
        "analyze", "generate_score", "generate_reason"]


def test_public_names_are_documented() -> None:
    text = DOC.read_text()
    internal = {"StepResults", "NotScorableSignal", "load_litellm", "normalise_usage"}
    missing = [n for n in tracescore.scoring.__all__ if n not in internal and n not in text]
    assert missing == []


def test_classifier_example_builds() -> None:
    block = next(b for b in _blocks() if "create_classifier_scorer(" in b)
    namespace: dict[str, object] = {}
    exec(block, namespace)  # noqa: S102 - our own documentation
    assert namespace["correctness"].steps == [  # type: ignore[attr-defined]
        "analyze", "generate_score", "generate_reason"]
