"""[[scorers]] use = "<id>": prebuilt scorers by their catalogue id."""

from __future__ import annotations

from typing import Any

import pytest

from tracescore.live import ConfigError, load_live_config


def load(*entries: dict[str, Any], **kwargs: Any) -> Any:
    return load_live_config({"scorers": list(entries)}, source="test.toml", **kwargs)


def test_code_scorers_by_id() -> None:
    _, registry = load({"use": "check-includes", "args": {"expected": "sunny"}},
                       {"use": "code-tool-call-accuracy-scorer", "id": "searched",
                        "args": {"expected_tool": "search"}})
    assert [r.id for r in registry] == ["check-includes", "searched"]
    assert registry.get("searched").scorer.id == "code-tool-call-accuracy-scorer"
    assert not any(r.uses_judge for r in registry)


def test_a_judge_scorer_by_id_gets_the_judge_model_and_api_base() -> None:
    entry = {"use": "bias-scorer", "needs_judge": True, "args": {"scale": 2}}
    _, off = load(entry)
    assert off.enabled() == []
    _, registry = load(entry, judge_model="openai/gpt-4o-mini",
                       judge_api_base="http://127.0.0.1:9/v1")
    [reg] = registry.enabled()
    assert reg.id == "bias-scorer" and reg.uses_judge
    judge = reg.scorer.judge
    assert judge is not None
    assert (judge.model, judge.api_base) == ("openai/gpt-4o-mini", "http://127.0.0.1:9/v1")


def test_id_and_import_path_name_the_same_factory() -> None:
    _, registry = load({"use": "faithfulness-scorer", "id": "a", "args": {"model": "openai/x"}},
                       {"use": "tracescore.scorers:create_faithfulness_scorer", "id": "b",
                        "args": {"model": "openai/x"}})
    assert registry.get("a").scorer.id == registry.get("b").scorer.id == "faithfulness-scorer"
    assert registry.get("a").version != registry.get("b").version


@pytest.mark.parametrize(("entry", "expected"), [
    ({"use": "no-such-scorer"}, "or be a prebuilt scorer id"),
    ({"use": "context-recall-scorer", "args": {"model": "openai/x"}},
     "Either context or contextExtractor is required for Context Recall scoring"),
    ({"use": "bias-scorer", "args": {"model": "openai/x", "bogus": 1}}, "key 'args'"),
])
def test_bad_catalogue_entries(entry: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load({**entry, "id": "bad"})
    assert "'bad'" in str(info.value) and expected in str(info.value)


def test_text_code_scorers_and_conversation_judges_by_id() -> None:
    _, registry = load({"use": "tone-scorer", "args": {"reference_tone": "Glad to help!"}},
                       {"use": "keyword-coverage-scorer"},
                       {"use": "multi-turn-judge-scorer", "needs_judge": True,
                        "args": {"criterion": "The agent answered every question."}},
                       {"use": "rubric-scorer", "needs_judge": True,
                        "args": {"criteria": "- Names the city\n- Gives a temperature"}},
                       judge_model="openai/gpt-4o-mini")
    assert [r.id for r in registry.enabled()] == ["tone-scorer", "keyword-coverage-scorer",
                                                  "multi-turn-judge-scorer", "rubric-scorer"]
    assert [r.uses_judge for r in registry.enabled()] == [False, False, True, True]
    tone = registry.get("tone-scorer").scorer.run_sync(input="q", output="Glad to help!")
    assert tone.score == 1.0
