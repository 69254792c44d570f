"""Judge set-up checks: a missing key pauses the scorer at start-up, a bad model string is a
config error, a missing key at run time pauses it too, and ``tracescore check`` calls each
judge once (the scripted server stands in for the provider)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import running_server

from tracescore.live import (
    ConfigError,
    Registry,
    check_judges,
    probe_judges,
    start_paused,
)
from tracescore.scoring import Judge, PromptStep, create_scorer
from tracescore.testing import Reply, error

from .conftest import fast_settings, open_decisions, scheduler


def judged(model: str, api_base: str | None = None, id: str = "judged") -> Any:  # noqa: A002
    judge = Judge(model=model, instructions="You grade answers.", api_base=api_base)
    return create_scorer(id, "judge test", type="agent", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade: {run.output[-1].content}"))


def registry_of(*scorers: Any) -> Registry:
    registry = Registry()
    for scorer in scorers:
        registry.register(scorer)
    return registry


def cli(*args: str, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "tracescore.cli", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})}, cwd=cwd)


def test_missing_key_pauses_and_a_bad_model_string_is_refused(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    code = create_scorer("code", "no judge").generate_score(lambda run, results: 1.0)
    registry = registry_of(judged("openai/gpt-4o-mini"), code)
    assert check_judges(registry) == {}  # OPENAI_API_KEY is set by the test fixtures
    monkeypatch.delenv("OPENAI_API_KEY")
    with caplog.at_level("WARNING", logger="tracescore.live"):
        paused = check_judges(registry)
    assert list(paused) == ["judged"] and "OPENAI_API_KEY" in paused["judged"]
    assert any(r.levelname == "WARNING" and "judged" in r.getMessage() for r in caplog.records)
    # A key on the judge itself is enough.
    keyed = Judge(model="openai/gpt-4o-mini", instructions="x", api_key="sk-own")
    own = create_scorer("own", "own key", judge=keyed).generate_score(
        PromptStep("grade", lambda run, results: "grade"))
    assert check_judges(registry_of(own)) == {}
    # A local model needs no key (its address has a default): not paused.
    assert check_judges(registry_of(judged("ollama/llama3.1"))) == {}
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    anthropic = check_judges(registry_of(judged("anthropic/claude-3-5-haiku-latest")))
    assert "ANTHROPIC_API_KEY" in anthropic["judged"]
    with pytest.raises(ConfigError, match="'gpt4o-mini' names no provider.*openai/gpt-4o-mini"):
        check_judges(registry_of(judged("gpt4o-mini")))


async def test_start_up_pause_and_missing_key_at_run_time_hold_the_scorer(
    store: Any, add_traces: Any, llm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_traces(2)
    llm_server.set_default(lambda body: Reply(content={"score": 0.5}))
    monkeypatch.delenv("OPENAI_API_KEY")
    # Run time: litellm refuses before any request ("Missing credentials", sent as a 500);
    # that is an authentication problem, not a transient one.
    live = scheduler(store, judged("openai/gpt-4o-mini", llm_server.url),
                     settings=fast_settings(concurrency=1))
    for _ in range(3):
        await live.tick()
        await live.drain()
    [state] = live.status()
    assert state["state"] == "paused", state
    assert "authentication" in state["note"] and "OPENAI_API_KEY" in state["note"]
    assert llm_server.requests == [] and open_decisions(store) == 2
    # Start-up: the check's pause holds the scorer before its first run.
    again = scheduler(store, judged("openai/gpt-4o-mini", llm_server.url, id="second"))
    start_paused(again, check_judges(again.registry))
    [state] = again.status()
    assert state["state"] == "paused" and "has no credentials" in state["note"]


async def test_probe_calls_each_judge_once(llm_server: Any) -> None:
    llm_server.script(Reply(content="OK"))
    registry = registry_of(judged("openai/gpt-4o-mini", llm_server.url),
                           judged("openai/gpt-4o-mini", llm_server.url, id="twin"))
    [probe] = await probe_judges(registry)
    assert probe.ok and probe.scorer_ids == ("judged", "twin") and "OK" in probe.message
    assert len(llm_server.requests) == 1
    llm_server.set_default(lambda body: error(401, "invalid api key"))
    [probe] = await probe_judges(registry)
    assert not probe.ok and probe.message.startswith("auth:") and "invalid api key" in (
        probe.message)


def test_serve_starts_judges_paused_and_check_reports_it(
    tmp_path: Path, llm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    env = {"TRACESCORE_JUDGE_MODEL": "openai/gpt-4o-mini",
           "TRACESCORE_JUDGE_API_BASE": llm_server.url}
    with running_server(tmp_path / "db.duckdb", args=["--no-grpc"], env=env) as server:
        deadline = time.monotonic() + 120  # the judge checks run once litellm has loaded
        while httpx.get(f"{server.url}/healthz", timeout=30).json()["judges"] != "ready":
            assert time.monotonic() < deadline, server.log()[-3000:]
            time.sleep(0.2)
        answer = httpx.get(f"{server.url}/api/live/scorers", timeout=30).json()
        states = {row["id"]: (row["state"], row["note"]) for row in answer["scorers"]}
        assert states["no-tool-errors"] == ("running", None)
        for name in ("answer-relevancy", "faithfulness", "hallucination"):
            assert states[name][0] == "paused" and "OPENAI_API_KEY" in states[name][1]
        listing = cli("scorers", "--url", server.url)
        assert listing.returncode == 0, listing.stderr
        assert "faithfulness: paused: judge openai/gpt-4o-mini has no credentials" in (
            listing.stdout)
        log = server.log()
    assert "WARNING" in log and "faithfulness starts paused" in log
    assert llm_server.requests == []

    checked = cli("check", env=env)
    assert checked.returncode == 1
    assert "answer-relevancy: would start paused" in checked.stdout
    assert "Traceback" not in checked.stderr and "problem(s)" in checked.stderr

    bad = cli("serve", "--db", str(tmp_path / "db.duckdb"), "--http-port", "0", "--no-grpc",
              env={"TRACESCORE_JUDGE_MODEL": "gpt4o-mini"})
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    [line] = [x for x in bad.stderr.splitlines() if x.startswith("Error:")]
    assert "'gpt4o-mini' names no provider" in line


def test_check_calls_each_judge_once(tmp_path: Path, llm_server: Any) -> None:
    env = {"TRACESCORE_JUDGE_MODEL": "openai/gpt-4o-mini",
           "TRACESCORE_JUDGE_API_BASE": llm_server.url}
    llm_server.set_default(lambda body: Reply(content="OK", prompt_tokens=7,
                                              completion_tokens=1))
    good = cli("check", env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "judge openai/gpt-4o-mini at" in good.stdout and "OK, answered 'OK'" in good.stdout
    assert len(llm_server.requests) == 1  # three scorers, one judge
    assert llm_server.requests[0]["max_tokens"] <= 5
    llm_server.set_default(lambda body: error(401, "invalid api key"))
    refused = cli("check", env=env)
    assert refused.returncode == 1
    assert "FAILED: auth:" in refused.stdout and "invalid api key" in refused.stdout
    offline = cli("check", "--no-call", env=env)
    assert offline.returncode == 0 and len(llm_server.requests) == 2
