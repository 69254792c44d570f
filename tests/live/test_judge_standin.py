"""Trying judges without a key: ``tracescore judge-standin`` and ``tracescore demo``.

The stand-in runs as its own process (the command users run); ``tracescore demo`` starts a real
server on the embedded default config with the environment the stand-in printed, so the three
default judge scorers score the demo's traces with the stand-in's schema-derived answers. A
judge that cannot be reached makes the demo say so instead of waiting out its timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from server_process import free_port

from tracescore.cli._demo_notes import judge_explanations

JUDGES = ("answer-relevancy", "faithfulness", "hallucination")


@pytest.fixture
def standin() -> Iterator[dict[str, str]]:
    """A running ``tracescore judge-standin``; yields the environment it printed."""
    process = subprocess.Popen([sys.executable, "-m", "tracescore.cli", "judge-standin"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    env = {}
    try:
        while len(env) < 3:
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else "no output"
            name, _, value = line.removeprefix("export ").strip().partition("=")
            env[name] = value
        yield env
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert "judge stand-in answered" in err


def demo(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracescore.cli", "demo", "--traces", "2",
                           "--timeout", "120"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_the_default_judges_score_against_the_standin(standin: dict[str, str]) -> None:
    assert standin["TRACESCORE_JUDGE_API_BASE"].startswith("http://127.0.0.1:")
    assert standin["TRACESCORE_JUDGE_API_BASE"].endswith("/v1")
    done = demo(standin)
    assert done.returncode == 0, done.stderr
    rows = [[cell.strip() for cell in line.split("|")] for line in done.stdout.splitlines()
            if "|" in line]
    judged = [row for row in rows if row[1] in JUDGES]
    assert len(judged) == 2 * len(JUDGES), done.stdout
    assert {row[2] for row in judged} == {"success"}, done.stdout
    assert "did not score" not in done.stderr


def test_the_demo_says_why_a_judge_did_not_score() -> None:
    unreachable = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    done = demo({"TRACESCORE_JUDGE_MODEL": "openai/gpt-4o-mini",
                 "TRACESCORE_JUDGE_API_BASE": unreachable, "OPENAI_API_KEY": "unused"})
    assert done.returncode == 0, done.stderr
    assert "judge scorer faithfulness did not score: it is failing and retrying" in done.stderr
    assert "did not finish within" not in done.stderr  # it did not wait out its timeout


def test_paused_and_disabled_judges_are_explained() -> None:
    rows: list[dict[str, Any]] = [
        {"id": "a", "uses_judge": True, "state": "paused",
         "note": "judge openai/gpt-4o-mini has no credentials: set OPENAI_API_KEY"},
        {"id": "b", "uses_judge": True, "state": "disabled",
         "note": "needs a judge model: set TRACESCORE_JUDGE_MODEL"},
        {"id": "c", "uses_judge": False, "state": "disabled", "note": "enabled = false"},
        {"id": "d", "uses_judge": True, "state": "running", "note": None},
    ]
    assert judge_explanations(rows, []) == [
        "judge scorer a did not score: paused: judge openai/gpt-4o-mini has no credentials: "
        "set OPENAI_API_KEY",
        "judge scorer b did not score: disabled: needs a judge model: set "
        "TRACESCORE_JUDGE_MODEL"]
