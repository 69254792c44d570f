"""The Done-when path against a real `tracescore serve`: three production traces become a
dataset over HTTP, two agent versions run against it with run_evals(store=URL, experiment=...),
and `tracescore experiments compare v1 v2 --url` shows the regression and exits 1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from datasets_helpers import AGENT_FOLDERS, SCENARIO, body, trace_id
from server_process import ServerProcess, running_server

from tracescore.cli import main
from tracescore.datasets import (
    DatasetExists,
    DatasetNotFound,
    add_items,
    create_dataset,
    get_dataset,
    items_from_traces,
    list_datasets,
)
from tracescore.evals import compare_experiments, list_experiments, run_evals
from tracescore.model import get_assistant_message
from tracescore.scoring import create_scorer

API_KEY = "datasets-secret"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("datasets-server")
    with running_server(root / "tracescore.duckdb", args=["--no-grpc"],
                        api_key=API_KEY) as running:
        for folder in AGENT_FOLDERS:
            response = httpx.post(f"{running.url}/v1/traces", content=body(folder), timeout=30,
                                  headers={"content-type": "application/x-protobuf",
                                           **running.headers})
            assert response.status_code == 200, response.text
        yield running


class Agent:
    """Answers the last user message; ``v2`` forgets the umbrella advice."""

    def __init__(self, version: str) -> None:
        self.version = version

    def generate(self, input: Any, **options: Any) -> str:
        question = input[-1]["content"]  # the new user turn, after the history
        if "umbrella" in question:
            return "No idea." if self.version == "v2" else SCENARIO["turn2"]["final_text"]
        return SCENARIO["turn1"]["final_text"]


def _exact() -> Any:
    return create_scorer("exact", "equals the expected answer").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) == run.ground_truth
        else 0.0)


def test_traces_to_dataset_to_experiments_to_gate(server: ServerProcess) -> None:
    url, headers = server.url, server.headers
    first = AGENT_FOLDERS[0]
    traces = [trace_id(first, "turn1"), trace_id(first, "turn2"), trace_id(AGENT_FOLDERS[1],
                                                                          "turn2")]
    made = items_from_traces(url, traces[:1], trajectory=True, api_key=API_KEY)
    assert made[0].source_trace_id == traces[0] and made[0].expected_trajectory
    created = create_dataset(url, "prod-failures", description="from prod", api_key=API_KEY)
    assert created.version == 1 and created.items == []
    with pytest.raises(DatasetExists, match="409"):
        create_dataset(url, "prod-failures", api_key=API_KEY)
    # what the dashboard's "Add to dataset" sends: trace ids and an edited expected output
    edited = {traces[2]: "Yes, take an umbrella."}
    response = httpx.post(f"{url}/api/datasets/prod-failures/items", headers=headers,
                          json={"from_trace_ids": traces, "ground_truth": edited}, timeout=30)
    assert response.status_code == 200, response.text
    v2 = response.json()
    assert v2["version"] == 2 and len(v2["items"]) == 3
    by_trace = {i["source_trace_id"]: i for i in v2["items"]}
    assert by_trace[traces[2]]["ground_truth"] == "Yes, take an umbrella."
    assert by_trace[traces[1]]["ground_truth"] == SCENARIO["turn2"]["final_text"]
    # v3 drops the edited item; v2 still reads it back
    removed = httpx.delete(f"{url}/api/datasets/prod-failures/items/"
                           f"{by_trace[traces[2]]['item_id']}", headers=headers, timeout=30)
    assert removed.status_code == 200 and removed.json()["version"] == 3
    assert len(get_dataset(url, "prod-failures@2", api_key=API_KEY).items) == 3
    old = httpx.get(f"{url}/api/datasets/prod-failures", params={"version": 2},
                    headers=headers, timeout=30)
    assert [i["item_id"] for i in old.json()["items"]] == [i["item_id"] for i in v2["items"]]
    assert [(d.name, d.current_version, d.item_count) for d in
            list_datasets(url, api_key=API_KEY)] == [("prod-failures", 3, 2)]
    missing = httpx.get(f"{url}/api/datasets/nope", headers=headers, timeout=30)
    assert missing.status_code == 404 and "no dataset named 'nope'" in \
        missing.json()["error"]["message"]
    with pytest.raises(DatasetNotFound):
        add_items(url, "nope", [{"input": "x"}], api_key=API_KEY)

    import asyncio

    results = [asyncio.run(run_evals(Agent(version), "prod-failures", scorers=[_exact()],
                                     store=url, store_api_key=API_KEY, experiment=version))
               for version in ("v1", "v2")]
    assert [r.store_errors for r in results] == [[], []]
    assert [r.scores["exact"] for r in results] == [1.0, 0.5]
    listed = list_experiments(url, dataset="prod-failures", api_key=API_KEY)
    assert [(e.name, e.dataset_version, e.status) for e in listed] == [
        ("v2", 3, "completed"), ("v1", 3, "completed")]
    comparison = compare_experiments(url, "v1", "v2", api_key=API_KEY)
    assert comparison.regressed and comparison.regressed_scorers == ["exact"]
    assert [i.item_id for i in comparison.items] == [by_trace[traces[1]]["item_id"]]
    assert comparison.items[0].candidate_output[0]["content"] == "No idea."
    scores = httpx.post(f"{url}/api/sql", headers=headers, timeout=30, json={
        "sql": "SELECT count(*) FROM scores WHERE experiment_id = ?",
        "params": [results[1].experiment_id]}).json()
    assert scores["rows"] == [[2]]

    runner = CliRunner()
    gate = runner.invoke(main, ["experiments", "compare", "v1", "v2", "--url", url,
                                "--api-key", API_KEY, "--format", "markdown"])
    assert gate.exit_code == 1, gate.output
    assert "❌ **Regressed:** `exact`" in gate.output and "No idea." in gate.output
    same = runner.invoke(main, ["experiments", "compare", "v1", "v1", "--url", url,
                                "--api-key", API_KEY])
    assert same.exit_code == 0 and "no regression" in same.output


def test_cli_datasets_commands(server: ServerProcess, tmp_path: Path) -> None:
    url = server.url
    common = ["--url", url, "--api-key", API_KEY]
    runner = CliRunner()
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text('{"item_id": "q1", "input": "Paris?", "ground_truth": "cloudy"}\n\n'
                     '{"input": "Lima?"}\n')
    created = runner.invoke(main, ["datasets", "create", "cli-set", "--from-jsonl", str(jsonl),
                                   *common])
    assert created.exit_code == 0, created.output
    assert "version 1 with 2 items" in created.output
    tid = trace_id(AGENT_FOLDERS[0], "turn1")
    added = runner.invoke(main, ["datasets", "add", "cli-set", "--from-trace", tid, *common])
    assert added.exit_code == 0 and "now version 2 (3 items)" in added.output, added.output
    by_sql = runner.invoke(main, ["datasets", "add", "cli-set", "--from-sql",
                                  f"SELECT '{trace_id(AGENT_FOLDERS[1], 'turn1')}' AS trace_id",
                                  *common])
    assert by_sql.exit_code == 0 and "now version 3 (4 items)" in by_sql.output, by_sql.output
    shown = runner.invoke(main, ["datasets", "show", "cli-set", "--version", "1", *common])
    assert shown.exit_code == 0 and "version 1 of 3: 2 items" in shown.output
    assert "q1" in shown.output
    listed = runner.invoke(main, ["datasets", "list", *common])
    assert "cli-set" in listed.output
    out = tmp_path / "export.jsonl"
    exported = runner.invoke(main, ["datasets", "export", "cli-set", "--out", str(out),
                                    "--version", "2", *common])
    assert exported.exit_code == 0, exported.output
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and '"q1"' in lines[0] and tid in lines[2]
    again = runner.invoke(main, ["datasets", "create", "copy", "--from-jsonl", str(out),
                                 *common])
    assert again.exit_code == 0 and "with 3 items" in again.output
    copy = get_dataset(url, "copy", api_key=API_KEY)
    assert copy.items[2].source_trace_id == tid
    removed = runner.invoke(main, ["datasets", "remove", "cli-set", "q1", *common])
    assert removed.exit_code == 0 and "now version 4 (3 items)" in removed.output
    bad = runner.invoke(main, ["datasets", "show", "nope", *common])
    assert bad.exit_code == 1 and "no dataset named 'nope'" in bad.output
    both = runner.invoke(main, ["datasets", "add", "cli-set", "--from-jsonl", str(jsonl),
                                "--from-trace", tid, *common])
    assert both.exit_code == 2 and "exactly one of" in both.output
    experiments = runner.invoke(main, ["experiments", "list", *common])
    assert experiments.exit_code == 0 and "experiment_id" in experiments.output
