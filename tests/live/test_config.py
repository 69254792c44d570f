"""The [live], [live.budget] and [[scorers]] settings: defaults, validation, error sentences."""

from __future__ import annotations

import pytest

from tracescore.live import ConfigError, parse_live_settings, parse_scorer_entries


def test_defaults_match_the_documented_values() -> None:
    live = parse_live_settings(None)
    assert (live.interval_seconds, live.settle_seconds, live.max_wait_seconds) == (2, 10, 300)
    assert (live.concurrency, live.max_attempts, live.retry_base_seconds) == (8, 3, 30)
    assert live.budget.max_judge_cost_usd_per_hour == 5.0
    assert live.totals_busy_share == 0.25


def test_issue_example_parses() -> None:
    live = parse_live_settings(
        {
            "interval_seconds": 2,
            "settle_seconds": 10,
            "budget": {"max_judge_cost_usd_per_hour": 5.0, "max_judge_tokens_per_hour": 2_000_000},
        }
    )
    assert live.budget.max_judge_cost_usd_per_hour == 5.0
    [entry] = parse_scorer_entries(
        [
            {
                "id": "no-tool-errors",
                "use": "tracescore.scorers.checks:no_tool_errors",
                "args": {},
                "target": "trace",
                "sample_rate": 1.0,
                "filter": "service_name = 'support-bot'",
                "enabled": True,
            }
        ]
    )
    assert entry.id == "no-tool-errors" and entry.filter == "service_name = 'support-bot'"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"use": "m:a", "sample_rate": 1.5}, "key 'sample_rate'"),
        ({"use": "m:a", "target": "span"}, "key 'target'"),
        ({"use": "m:a", "smaple_rate": 0.5}, "key 'smaple_rate': unknown key"),
        ({}, "key 'use'"),
        ({"use": "m:a", "filter": "1=1; DROP TABLE spans"}, "key 'filter'"),
        ({"use": "m:a", "args": [1]}, "key 'args'"),
    ],
)
def test_bad_entry_names_the_entry_and_key(raw: dict[str, object], expected: str) -> None:
    entries = [{"use": "m:fine"}, {**raw, "id": raw.get("id", "bad-one")}]
    with pytest.raises(ConfigError) as info:
        parse_scorer_entries(entries, source="my.toml")
    message = str(info.value)
    assert "[[scorers]] entry #2 (id 'bad-one')" in message
    assert expected in message
    assert "my.toml" in message


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ConfigError, match="already used by \\[\\[scorers\\]\\] entry #1"):
        parse_scorer_entries([{"use": "m:a", "id": "x"}, {"use": "m:b", "id": "x"}])


def test_bad_live_key_names_the_table() -> None:
    with pytest.raises(ConfigError,
                       match=r"\[live\] in f.toml: key 'budget.max_judge_cost_usd_per_hour'"):
        parse_live_settings({"budget": {"max_judge_cost_usd_per_hour": -1}}, source="f.toml")
    with pytest.raises(ConfigError, match="key 'concurency': unknown key"):
        parse_live_settings({"concurency": 4})
    with pytest.raises(ConfigError, match="key 'totals_busy_share'"):
        parse_live_settings({"totals_busy_share": 0})
