"""The embedded default config: its code scorers, and its judge scorers once a model is set."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from tracescore.live import LiveScheduler, load_live_config
from tracescore.testing import Reply

from .conftest import fast_settings, run_until_quiet

DEFAULT = Path(__file__).resolve().parents[2] / "config" / "tracescore.toml"

EVERYTHING = {  # one reply that fits every step of the three judge scorers
    "statements": ["It is cloudy in Paris."], "claims": ["It is cloudy in Paris."],
    "results": [{"statement": "It is cloudy in Paris.", "result": "yes", "reason": "on topic"}],
    "verdicts": [{"claim": "It is cloudy in Paris.", "statement": "It is cloudy in Paris.",
                  "verdict": "yes", "reason": "the tool said so"}],
    "reason": "fine", "score": 1,
}


def default_scheduler(store: Any, **judge: str) -> LiveScheduler:
    document = tomllib.loads(DEFAULT.read_text())
    _, registry = load_live_config(document, source=str(DEFAULT), **judge)
    return LiveScheduler(store, registry, fast_settings())


async def test_default_code_scorers(store: Any, add_traces: Any) -> None:
    add_traces(2)
    live = default_scheduler(store)
    assert [r.id for r in live.registry.enabled()] == [
        "no-tool-errors", "tool-failures", "trajectory-efficiency"]
    await run_until_quiet(live)
    rows = store.read("SELECT scorer_id, status, score FROM scores ORDER BY 1")
    assert [(r["scorer_id"], r["status"]) for r in rows] == [
        ("no-tool-errors", "success")] * 2 + [("tool-failures", "success")] * 2 + [
        ("trajectory-efficiency", "success")] * 2


async def test_default_judge_scorers_with_a_model(store: Any, add_traces: Any,
                                                  llm_server: Any) -> None:
    add_traces(1)
    llm_server.set_default(lambda body: Reply(content=EVERYTHING, prompt_tokens=50,
                                              completion_tokens=10))
    live = default_scheduler(store, judge_model="openai/gpt-4o-mini",
                             judge_api_base=llm_server.url)
    await run_until_quiet(live)
    rows = store.read("SELECT scorer_id, status, score, judge_total_tokens, error FROM scores "
                      "WHERE scorer_id IN ('answer-relevancy', 'faithfulness', 'hallucination') "
                      "ORDER BY 1")
    assert [(r["scorer_id"], r["status"]) for r in rows] == [
        ("answer-relevancy", "success"), ("faithfulness", "success"),
        ("hallucination", "success")], rows
    assert all(r["judge_total_tokens"] and r["judge_total_tokens"] >= 60 for r in rows)
    prompts = " ".join(m["content"] for req in llm_server.requests for m in req["messages"]
                       if isinstance(m.get("content"), str))
    assert "get_weather: " in prompts and "temperatureC" in prompts  # tool results as context


def test_a_single_step_reads_as_one_step() -> None:
    from tracescore.live import trajectory_efficiency_scorer
    from tracescore.model import Trajectory

    one = Trajectory.model_validate({"steps": [{"step_type": "tool_call", "name": "a"}]})
    assert trajectory_efficiency_scorer().run_sync(input="x", output=one).reason == "1 step"
