"""The scorers room: cheap to import, every public name reachable as spelled."""

from __future__ import annotations

import subprocess
import sys

import tracescore
import tracescore.scorers as scorers

PUBLIC = [
    "checks", "create_faithfulness_scorer", "create_hallucination_scorer",
    "create_answer_relevancy_scorer", "create_trajectory_accuracy_scorer_code",
    "create_trajectory_scorer_code", "create_tool_call_accuracy_scorer_code",
    "extract_tool_calls", "extract_tool_results", "extract_trajectory",
    "extract_workflow_trajectory", "compare_trajectories", "check_trajectory_efficiency",
    "check_trajectory_blacklist", "analyze_tool_failures",
]


def test_import_does_not_load_litellm() -> None:
    code = ("import sys, tracescore.scorers; from tracescore.scorers import checks; "
            "print(sorted(m for m in ('litellm', 'duckdb', 'fastapi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_from_room_and_package() -> None:
    for name in PUBLIC:
        assert getattr(scorers, name) is getattr(tracescore, name), name
        assert name in scorers.__all__


def test_checks_namespace() -> None:
    from tracescore.scorers import checks

    names = ["includes", "excludes", "equals", "matches", "similarity", "called_tool",
             "did_not_call", "tool_order", "max_tool_calls", "used_no_tools", "no_tool_errors"]
    assert all(callable(getattr(checks, n)) for n in names)


def test_record_reads_as_dict_and_attributes() -> None:
    record = scorers.Record(score=1.0, nested={"inner": [{"x": 1}]})
    assert record.score == record["score"] == 1.0
    assert record.nested.inner[0].x == 1
    assert record == {"score": 1.0, "nested": {"inner": [{"x": 1}]}}
    try:
        record.missing  # noqa: B018
    except AttributeError as exc:
        assert "missing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a missing key must raise AttributeError")


def test_round_score_is_half_up() -> None:
    assert scorers.round_score(0.575) == 0.58
    assert scorers.round_score(1.005) == 1.01
    assert scorers.round_score(0.125) == 0.13
    assert scorers.round_score(2 / 3) == 0.67
    assert scorers.round_score(0.1 + 0.2) == 0.3
