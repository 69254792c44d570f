"""What a newcomer tripped over, fixed: a trace-id prefix works for items made from traces, JSONL
item errors count from 1 and name the unknown key, counts read as singular for one, and
``experiments compare`` exits 2 for a name that does not exist (1 is kept for a regression)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from datasets_helpers import AGENT_FOLDERS, load_fixtures, trace_id

from tracescore.cli import main
from tracescore.store import Store


def test_prefixes_jsonl_errors_counts_and_usage_errors(tmp_path: Path) -> None:
    db = tmp_path / "newcomer.duckdb"
    with Store(db) as store:
        load_fixtures(store)
    runner = CliRunner()
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text('{"input": "Paris?", "ground_truth": "cloudy"}\n'
                     '{"input": "Lima?", "grund_truth": "sunny"}\n')
    bad = runner.invoke(main, ["datasets", "create", "set", "--from-jsonl", str(jsonl),
                               "--db", str(db)])
    assert bad.exit_code == 1
    assert "item 2: unknown key 'grund_truth'" in bad.output, bad.output
    jsonl.write_text('{"input": "Paris?", "ground_truth": "cloudy"}\n')
    made = runner.invoke(main, ["datasets", "create", "set", "--from-jsonl", str(jsonl),
                                "--db", str(db)])
    assert made.exit_code == 0 and "with 1 item" in made.output, made.output
    full = trace_id(AGENT_FOLDERS[0], "turn1")
    added = runner.invoke(main, ["datasets", "add", "set", "--from-trace", full[:8],
                                 "--db", str(db)])
    assert added.exit_code == 0, added.output
    assert "added 1 item: set is now version 2 (2 items)" in added.output
    with Store(db, read_only=True) as store:
        [row] = store.read("SELECT source_trace_id FROM dataset_items WHERE version_added = 2")
    assert row["source_trace_id"] == full
    misspelled = runner.invoke(main, ["experiments", "compare", "basline", "candidate",
                                      "--db", str(db)])
    assert misspelled.exit_code == 2
    assert "no experiment named 'basline'" in misspelled.output
