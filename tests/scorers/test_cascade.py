"""The cascade scorer: the expensive judge is asked exactly for the items the cheap one is unsure
of, by its stated confidence or by its reply's log-probabilities; ``decided_by`` says which.

Both judges are the scripted OpenAI-compatible server over real HTTP; it answers each judge by
the marker its prompt starts with, and per item as the test decides.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tracescore.live import Registry, load_live_config
from tracescore.scorers import CATALOGUE, create_cascade_scorer
from tracescore.scoring import Judge, PromptStep, ScorerDefinitionError, ScorerRunError
from tracescore.scoring import create_scorer as make
from tracescore.testing import Reply, error, token_logprobs

SURE = {0: 0.95, 1: 0.9, 2: 0.4, 3: 0.99, 4: 0.2, 5: 0.85, 6: 0.6, 7: 0.97}
"""The cheap judge's stated confidence per item: items 2, 4 and 6 are below 0.7."""


def judge_scorer(url: str, marker: str) -> Any:
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=url)
    return make(marker, f"the {marker} judge", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"{marker}: item {run.input}"))


def answer(body: dict[str, Any]) -> Reply:
    marker, _, item = body["messages"][-1]["content"].partition(": item ")
    if marker == "cheap":
        return Reply(content={"score": 1.0, "confidence": SURE[int(item)]})
    return Reply(content={"score": 0.0}, prompt_tokens=1000, completion_tokens=50)


async def test_the_expensive_judge_is_asked_for_exactly_the_unsure_items(
    llm_server: Any
) -> None:
    llm_server.set_default(answer)
    cascade = create_cascade_scorer(judge_scorer(llm_server.url, "cheap"),
                                    judge_scorer(llm_server.url, "expensive"), unsure_below=0.7)
    results = {item: await cascade.run(input=str(item), output="x") for item in SURE}
    asked = [r["messages"][-1]["content"] for r in llm_server.requests]
    unsure = sorted(item for item, c in SURE.items() if c < 0.7)
    assert sorted(int(a.rsplit(" ", 1)[1]) for a in asked if a.startswith("expensive")) == unsure
    assert sum(a.startswith("cheap") for a in asked) == len(SURE)
    for item, result in results.items():
        by = "expensive" if item in unsure else "cheap"
        assert result.decided_by == by and result.score == (0.0 if by == "expensive" else 1.0)
        assert result.analyze_step_result["cheap_confidence"] == SURE[item]
        assert result.analyze_step_result["confidence_source"] == "stated"
        steps = sorted(result.judge)
        assert steps == (["cheap.generate_score", "expensive.generate_score"] if by ==
                         "expensive" else ["cheap.generate_score"])
    assert results[2].judge_usage().input_tokens == 10 + 1000  # both judges' spend


async def test_log_probabilities_give_the_confidence_when_none_is_stated(
    llm_server: Any
) -> None:
    tokens = ['{"', "score", '":', " 1", "}"]

    def by_logprobs(body: dict[str, Any]) -> Reply:
        marker, _, item = body["messages"][-1]["content"].partition(": item ")
        if marker == "expensive":
            return Reply(content={"score": 0.0})
        sure = math.log(0.95 if item == "0" else 0.5)  # the score token's probability
        assert body.get("logprobs") is True  # the cascade asks for them
        return Reply(content={"score": 1}, logprobs=token_logprobs(
            tokens, {3: {" 1": sure, " 0": math.log(1 - math.exp(sure))}}))

    llm_server.set_default(by_logprobs)
    cascade = create_cascade_scorer(judge_scorer(llm_server.url, "cheap"),
                                    judge_scorer(llm_server.url, "expensive"), unsure_below=0.7)
    sure = await cascade.run(input="0", output="x")
    unsure = await cascade.run(input="1", output="x")
    assert (sure.decided_by, sure.analyze_step_result["confidence_source"]) == (
        "cheap", "logprobs")
    assert sure.analyze_step_result["cheap_confidence"] == pytest.approx(0.95)
    assert unsure.decided_by == "expensive"


async def test_a_failing_cheap_judge_fails_the_cascade_with_its_spend(llm_server: Any) -> None:
    llm_server.set_default(lambda body: error(400, "bad request"))
    cascade = create_cascade_scorer(judge_scorer(llm_server.url, "cheap"),
                                    judge_scorer(llm_server.url, "expensive"))
    with pytest.raises(ScorerRunError) as failed:
        await cascade.run(input="0", output="x")
    assert failed.value.failed_step == "cheap.generate_score"
    assert failed.value.result is not None
    assert list(failed.value.result.judge) == ["cheap.generate_score"]
    with pytest.raises(ScorerDefinitionError, match="unsure_below"):
        create_cascade_scorer(judge_scorer(llm_server.url, "cheap"),
                              judge_scorer(llm_server.url, "expensive"), unsure_below=2)


def test_a_config_entry_builds_both_judges_and_versions_them(tmp_path: Path,
                                                             llm_server: Any) -> None:
    (tmp_path / "judges.py").write_text(
        "from tracescore.scoring import Judge, PromptStep, create_scorer\n"
        "def graded(api_base, marker):\n"
        "    judge = Judge(model='openai/gpt-4o-mini', instructions='Grade.', "
        "api_base=api_base)\n"
        "    return create_scorer(marker, 'x', judge=judge).generate_score(\n"
        "        PromptStep('grade', lambda run, results: marker + ': item ' + run.input))\n")
    entry = {"use": "cascade", "id": "cascaded", "args": {
        "cheap": {"use": "judges.py:graded", "args": {"api_base": llm_server.url,
                                                      "marker": "cheap"}},
        "expensive": {"use": "judges.py:graded", "args": {"api_base": llm_server.url,
                                                          "marker": "expensive"}},
        "unsure_below": 0.8, "queue": "review-me"}}
    _, registry = load_live_config({"scorers": [entry]}, base_dir=tmp_path)
    reg = registry.get("cascaded")
    assert reg is not None and reg.uses_judge and "cascade" in CATALOGUE
    assert (reg.scorer.cheap.id, reg.scorer.expensive.id, reg.scorer.unsure_below,
            reg.scorer.queue) == ("cheap", "expensive", 0.8, "review-me")
    assert len(reg.scorer.judges) == 2
    changed = {**entry, "args": {**entry["args"], "unsure_below": 0.5}}
    _, other = load_live_config({"scorers": [changed]}, base_dir=tmp_path)
    assert other.get("cascaded").version != reg.version  # type: ignore[union-attr]
    assert isinstance(registry, Registry)


def test_the_documented_config_builds() -> None:
    import tomllib

    doc = (Path(__file__).resolve().parents[2] / "docs" / "scorers.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```toml\n")[1:]]
    [block] = [b for b in blocks if 'use = "cascade"' in b]
    _, registry = load_live_config(tomllib.loads(block))
    reg = registry.get("relevancy-cascade")
    assert reg is not None and reg.uses_judge
    assert {j.model for j in reg.scorer.judges} == {"openai/gpt-4o-mini", "openai/gpt-4o"}
