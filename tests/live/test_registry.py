"""Building the registry from [[scorers]] entries: use strings, files, factories, versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tracescore.live import ConfigError, load_live_config, scorer_version

REPO = Path(__file__).resolve().parents[2]


def load(*entries: dict[str, Any], live: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    document: dict[str, Any] = {"scorers": list(entries)}
    if live is not None:
        document["live"] = live
    return load_live_config(document, source="test.toml", **kwargs)


def test_module_factory_and_dotted_attribute() -> None:
    _, registry = load(
        {"id": "no-tool-errors", "use": "tracescore.scorers.checks:no_tool_errors"},
        {"use": "tracescore.scorers:checks.no_tool_errors", "args": {"id": "nte-2"}},
        {"use": "tracescore.live:trajectory_efficiency_scorer", "args": {"max_steps": 12},
         "target": "agent_run"},
    )
    assert [r.id for r in registry] == ["no-tool-errors", "nte-2", "trajectory-efficiency"]
    assert registry.get("no-tool-errors").scorer.type == "agent"
    assert registry.get("trajectory-efficiency").target == "agent_run"
    assert not any(r.uses_judge for r in registry)


def test_file_path_with_a_factory_and_a_scorer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    _, registry = load(
        {"use": "config/scorers.example.py:answer_length", "args": {"max_chars": 10}},
        {"use": "config/scorers.example.py:mentions_a_tool", "sample_rate": 0.5},
    )
    assert [r.id for r in registry] == ["answer-length", "mentions-a-tool"]
    assert registry.get("answer-length").scorer.description.endswith("10 characters")


def test_file_path_relative_to_the_config_directory(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from tracescore import create_scorer\n"
        "scorer = create_scorer('mine', 'x').generate_score(lambda run, r: 1.0)\n")
    _, registry = load({"use": "mine.py:scorer"}, base_dir=tmp_path)
    assert registry.get("mine") is not None


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"use": "no_such_module_xyz:thing"}, "cannot import 'no_such_module_xyz'"),
        ({"use": "tracescore.scorers.checks:nope"}, "has no attribute 'nope'"),
        ({"use": "tracescore.scorers"}, "must look like"),
        ({"use": "missing/file.py:x"}, "no file 'missing/file.py'"),
        ({"use": "tracescore.scorers.checks:no_tool_errors", "args": {"bogus": 1}},
         "key 'args': calling"),
        ({"use": "tracescore.live:LiveStats"}, "returned a LiveStats, not a Scorer"),
        ({"use": "tracescore.live:TARGETS"}, "not a Scorer or a factory"),
        ({"use": "tracescore.scorers.checks:no_tool_errors", "filter": "nope = 1"},
         "key 'filter'"),
    ],
)
def test_bad_entries_name_the_entry_and_key(entry: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load({"use": "tracescore.scorers.checks:no_tool_errors", "id": "fine"},
             {**entry, "id": "bad"})
    message = str(info.value)
    assert "'bad'" in message and "test.toml" in message
    assert expected in message


def test_a_scorer_object_refuses_args(tmp_path: Path) -> None:
    (tmp_path / "obj.py").write_text(
        "from tracescore import create_scorer\n"
        "s = create_scorer('obj', 'x').generate_score(lambda run, r: 1.0)\n")
    with pytest.raises(ConfigError, match="is a Scorer, not a factory"):
        load({"use": "obj.py:s", "args": {"a": 1}}, base_dir=tmp_path)


def test_judge_entries_need_a_judge_model() -> None:
    entry = {"id": "relevancy", "use": "tracescore.live:answer_relevancy_scorer",
             "needs_judge": True}
    _, without = load(entry)
    [reg] = list(without)
    assert not reg.enabled and "TRACESCORE_JUDGE_MODEL" in (reg.disabled_reason or "")
    assert without.enabled() == []
    settings, with_model = load(entry, judge_model="openai/gpt-4o-mini",
                                judge_api_base="http://127.0.0.1:9/v1")
    [reg] = list(with_model)
    assert reg.enabled and reg.uses_judge
    assert reg.args == {"model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1"}
    assert settings.judge_model == "openai/gpt-4o-mini"


def test_disabled_entries_need_no_id_and_are_never_scheduled() -> None:
    _, registry = load(
        {"use": "tracescore.live:trajectory_efficiency_scorer", "enabled": False},
        {"use": "tracescore.live:faithfulness_scorer", "needs_judge": True},
        {"use": "tracescore.scorers.checks:no_tool_errors"},
    )
    assert [r.id for r in registry] == ["trajectory-efficiency", "faithfulness-scorer",
                                        "check-no-tool-errors"]
    off, judge, on = registry
    assert not off.enabled and off.disabled_reason == "enabled = false"
    assert not judge.enabled and "TRACESCORE_JUDGE_MODEL" in (judge.disabled_reason or "")
    assert [r.id for r in registry.enabled()] == ["check-no-tool-errors"]
    with pytest.raises(ConfigError, match="entry #1.*cannot import"):
        load({"use": "no_such_package.mod:thing", "enabled": False})
    # A catalogue id names a disabled entry by itself (nothing is built).
    _, catalogue = load({"use": "toxicity-scorer", "needs_judge": True, "enabled": False})
    [reg] = list(catalogue)
    assert reg.id == "toxicity-scorer" and reg.scorer is None and not reg.enabled


def test_version_follows_the_entry_config() -> None:
    base = {"use": "m:a", "args": {"x": 1, "y": [1, 2]}, "target": "trace", "filter": None,
            "sample_rate": 1.0}
    same = scorer_version(**{**base, "args": {"y": [1, 2], "x": 1}})
    assert scorer_version(**base) == same
    for change in ({"args": {"x": 2, "y": [1, 2]}}, {"target": "tool_call"},
                   {"filter": "service_name = 'a'"}, {"sample_rate": 0.5}, {"use": "m:b"}):
        assert scorer_version(**{**base, **change}) != same
    _, one = load({"use": "tracescore.scorers.checks:no_tool_errors", "id": "a"})
    _, two = load({"use": "tracescore.scorers.checks:no_tool_errors", "id": "a",
                   "enabled": True})
    assert one.get("a").version == two.get("a").version


def test_live_table_errors() -> None:
    with pytest.raises(ConfigError, match=r"\[live\] in test.toml: key 'interval_seconds'"):
        load(live={"interval_seconds": 0})
    with pytest.raises(ConfigError, match="must be an array of tables"):
        load_live_config({"scorers": {"use": "x:y"}}, source="test.toml")
