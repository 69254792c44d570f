"""Judges you can trust, end to end on a real server: agent traces arrive through the
OpenTelemetry SDK, a scripted judge scores them live (agreeing with people on 17 of 20, so κ is
known in advance), people's labels arrive over HTTP, and agreement shows up in the API, on each
score, in ``/metrics``, in ``tracescore scorers``; queues hand out items; ``tracescore align``
fits a new version on held-out labels; a changed provider model and a canary set that stops
agreeing raise judge-drift events that reach a webhook."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from live.test_monitors import Receiver
from server_process import ServerProcess, running_server, sql

from tracescore.labels import split_keys
from tracescore.testing import ScriptedLLMServer

from .helpers import ScriptedJudge, qa_pairs, send_qa_traces, write_judge_file

PEOPLE = [1.0] * 11 + [0.0] * 9
JUDGE = [1.0] * 10 + [0.0] + [1.0] * 2 + [0.0] * 7  # agrees with people on 17 of 20
KAPPA = 0.34 / 0.49  # observed .85, chance .6 * .55 + .4 * .45 = .51
NAMES = [f"item-{i:02d}" for i in range(20)]
CANARY = [f"item-C{i}" for i in range(8)]

CONFIG = """
[live]
interval_seconds = 0.3
settle_seconds = 0.5
allow_private_webhooks = true

[labels]
agreement_interval_seconds = 0.5
bootstrap_resamples = 300
drift_notify = ["{hook}/drift"]

[[scorers]]
id = "correct"
use = "{judge_file}:make"
args = {{ api_base = "{llm}" }}

[[canaries]]
scorer = "correct"
dataset = "canary"
schema = "correct-canary"
every = "1s"
max_cost_usd = 1.0
"""


@dataclass
class World:
    server: ServerProcess
    judge: ScriptedJudge
    receiver: Receiver
    trace_ids: list[str]
    folder: Path
    config: Path

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        with self.server.client() as client:
            return client.request(method, path, **kwargs)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.api(method, path, **kwargs)
        assert response.status_code == 200, response.text
        return response.json()

    def cli(self, *args: str) -> Any:
        """Run ``tracescore ARGS`` in this process (``.returncode``, ``.stdout``, ``.stderr``)."""
        from click.testing import CliRunner

        from tracescore.cli import main

        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        result.returncode = result.exit_code
        return result


def poll(what: str, check: Callable[[], Any], *, deadline_s: float = 60.0,
         server: ServerProcess | None = None) -> Any:
    """Call ``check`` until it returns something truthy (not a timing assert)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    log = server.log()[-3000:] if server is not None else ""
    raise AssertionError(f"{what} did not happen within {deadline_s} s\n{log}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("labels-server")
    judge = ScriptedJudge()
    judge.verdicts = dict(zip(NAMES, JUDGE, strict=True))
    judge.truth = dict(zip(NAMES, PEOPLE, strict=True))
    receiver = Receiver()
    with ScriptedLLMServer() as llm:
        llm.set_default(judge)
        config = folder / "tracescore.toml"
        config.write_text(CONFIG.format(hook=receiver.url, llm=llm.url,
                                        judge_file=write_judge_file(folder)))
        try:
            with running_server(folder / "labels.duckdb",
                                args=["--config", str(config), "--no-grpc"]) as server:
                ids = send_qa_traces(server.url, qa_pairs(NAMES))
                poll("live scoring of 20 traces", lambda: sql(
                    server, "SELECT count(*) FROM scores WHERE scorer_id = 'correct' AND "
                    "status = 'success'")[0][0] >= 20, server=server)
                yield World(server, judge, receiver, ids, folder, config)
        finally:
            receiver.close()


def _label_everything(world: World) -> None:
    world.ok("POST", "/api/label-schemas", json={
        "name": "correct", "kind": "boolean", "scorer_id": "correct",
        "rubric": "Is the answer right?"})
    world.ok("POST", "/api/labels", json=[
        {"trace_id": t, "schema": "correct", "value": bool(p), "annotator": "ann"}
        for t, p in zip(world.trace_ids, PEOPLE, strict=True)])


def test_agreement_is_known_and_shown_everywhere(world: World) -> None:
    _label_everything(world)
    [row] = world.ok("GET", "/api/agreement", params={"scorer_id": "correct"})["agreement"]
    assert (row["schema_name"], row["n"], row["threshold"]) == ("correct", 20, 0.5)
    assert row["kappa"] == pytest.approx(KAPPA)
    assert row["kappa_low"] < row["kappa"] < row["kappa_high"]
    assert (row["tpr"], row["tnr"]) == (pytest.approx(10 / 11), pytest.approx(7 / 9))
    assert row["text"].startswith("agrees with people κ 0.69 [")

    scores = world.ok("GET", f"/api/traces/{world.trace_ids[0][:12]}/scores")["scores"]
    [score] = [s for s in scores if s["scorer_id"] == "correct"]
    assert score["agreement"]["kappa"] == pytest.approx(KAPPA)
    assert score["agreement"]["text"] == row["text"]

    def gauge() -> str | None:
        text = world.api("GET", "/metrics").text
        line = next((ln for ln in text.splitlines()
                     if ln.startswith("tracescore_judge_agreement_kappa{")), None)
        return line
    line = poll("the agreement gauge", gauge, server=world.server)
    assert 'scorer_id="correct"' in line and 'schema="correct"' in line
    assert float(line.rsplit(" ", 1)[1]) == pytest.approx(KAPPA)

    [live] = [s for s in world.ok("GET", "/api/live/scorers")["scorers"] if s["id"] == "correct"]
    assert live["agreement"]["kappa"] == pytest.approx(KAPPA)
    shown = world.cli("scorers", "--url", world.server.url)
    assert shown.returncode == 0, shown.stderr
    assert "κ 0.69 [" in shown.stdout and "n 20" in shown.stdout
    table = world.cli("agreement", "--url", world.server.url)
    assert table.returncode == 0 and "0.69 [" in table.stdout and "0.91 [" in table.stdout


def test_queues_over_http(world: World) -> None:
    world.ok("POST", "/api/label-schemas", json={"name": "helpful", "kind": "categorical",
                                                  "values": ["no", "somewhat", "yes"],
                                                  "scorer_id": "correct"})
    low = ("trace_id IN (SELECT trace_id FROM scores WHERE scorer_id = 'correct' "
           "AND score < 0.5)")
    made = world.ok("POST", "/api/queues", json={"name": "low", "schemas": ["helpful"],
                                                 "selection": low, "size": 50})
    assert (made["items"], made["needed"], made["done"]) == (8, 8, 0)
    first = world.ok("POST", "/api/queues/low/next", json={"annotator": "ann"})["item"]
    second = world.ok("POST", "/api/queues/low/next", json={"annotator": "bo"})["item"]
    assert first["item_key"] != second["item_key"]
    assert first["judge_hidden"] and first["judge"] is None
    assert first["schemas"][0]["choices"] == ["no", "somewhat", "yes"]
    world.ok("POST", "/api/labels", json=[{"trace_id": first["trace_id"], "schema": "helpful",
                                           "value": "somewhat", "annotator": "ann",
                                           "queue": "low"}])
    seen = world.ok("GET", "/api/queues/low/item",
                    params={"key": first["item_key"], "annotator": "ann"})
    assert not seen["judge_hidden"] and seen["judge"]["score"] == 0.0
    assert seen["progress"]["done"] == 1
    listed = world.cli("queues", "list", "--url", world.server.url)
    assert listed.returncode == 0 and "low" in listed.stdout
    for method, path, body, status, words in [
        ("POST", "/api/queues/nope/next", {"annotator": "a"}, 404, "no review queue"),
        ("POST", "/api/queues", {"name": "low", "schemas": ["helpful"]}, 409, "exists"),
        ("POST", "/api/labels", [{"trace_id": first["trace_id"], "schema": "helpful",
                                  "value": "maybe"}], 422, "takes one of"),
        ("POST", "/api/queues", {"name": "bad", "schemas": ["helpful"],
                                 "selection": "nope("}, 422, "selection does not run"),
    ]:
        response = world.api(method, path, json=body)
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["status"] == status and words in error["message"]


def _seed_with_disagreements(world: World) -> int:
    """A split seed whose training and held-out parts both hold a disagreement, and whose
    held-out part holds both answers people gave (κ of one answer says nothing, so no version
    could prove itself there). The trace ids, and so the split, differ from run to run."""
    keys = [f"trace:{t}" for t in world.trace_ids]
    people = {f"trace:{t}": p for t, p in zip(world.trace_ids, PEOPLE, strict=True)}
    wrong = {f"trace:{t}" for t, p, j in zip(world.trace_ids, PEOPLE, JUDGE, strict=True)
             if p != j}
    for seed in range(100):
        train, held = split_keys(keys, seed=seed, holdout=0.3)
        if wrong & set(train) and wrong & set(held) and len({people[k] for k in held}) == 2:
            return seed
    raise AssertionError("no seed splits the disagreements")


def test_align_fits_a_version_that_proves_itself(world: World) -> None:
    if not world.ok("GET", "/api/labels", params={"schema_name": "correct"})["labels"]:
        _label_everything(world)
    seed = _seed_with_disagreements(world)
    url = world.server.url
    dry = world.cli("align", "correct", "--schema", "correct", "--url", url, "--config",
                    str(world.config), "--seed", str(seed), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "dry run: a real run makes about" in dry.stdout
    assert sql(world.server, "SELECT count(*) FROM scorer_versions")[0][0] == 0

    out = world.folder / "aligned.json"
    done = world.cli("align", "correct", "--schema", "correct", "--url", url, "--config",
                     str(world.config), "--seed", str(seed), "--out", str(out))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "14 training and 6 held-out label(s)" in done.stdout
    assert world.judge.examples_seen > 0  # the few-shot versions reached the judge
    [row] = world.ok("GET", "/api/scorer-versions", params={"scorer_id": "correct"})["versions"]
    before, after = row["before"]["agreement"], row["after"]["agreement"]
    assert after["kappa"] == pytest.approx(1.0) and before["kappa"] < after["kappa"]
    assert row["method"] in ("few_shot", "rewrite+few_shot")
    assert (row["label_count"], row["holdout_count"], row["seed"]) == (14, 6, seed)
    [live] = [s for s in world.ok("GET", "/api/live/scorers")["scorers"] if s["id"] == "correct"]
    assert row["parent_version"] == live["version"]  # the running version is its parent
    assert f"new version {row['version']}" in done.stdout
    assert "backfill: re-scoring the" in done.stdout and "≈ $" in done.stdout
    written = json.loads(out.read_text())
    assert written["version"] == row["version"] and written["examples"]

    # the entry opts in with `alignment = ...`: the same version, and the examples in its prompt
    from tracescore.live import load_live_config
    from tracescore.server import read_config

    path, document = read_config(str(world.config))
    document["scorers"][0]["alignment"] = str(out)
    _, registry = load_live_config(document, source=str(path), base_dir=world.folder)
    aligned = registry.get("correct")
    assert aligned is not None and aligned.version == row["version"]
    seen = world.judge.examples_seen
    result = aligned.scorer.run_sync(input="What is the capital of country item-10?",
                                     output="The capital of item-10 is Town 10.")
    assert result.score == 1.0 and world.judge.examples_seen == seen + 1  # people said yes


def test_a_changed_provider_model_raises_drift(world: World) -> None:
    world.judge.model = "gpt-4o-mini-2099-01-01"
    try:
        send_qa_traces(world.server.url, qa_pairs(["item-90", "item-91"]))
        rows = poll("a judge_drift event for the new model", lambda: sql(
            world.server, "SELECT scorer_id, state, detail FROM monitor_events WHERE "
            "kind = 'judge_drift' AND detail->>'check' = 'model'"), server=world.server)
    finally:
        world.judge.model = None
    scorer_id, state, detail = rows[0]
    detail = json.loads(detail) if isinstance(detail, str) else detail
    assert (scorer_id, state) == ("correct", "drift")
    assert (detail["from"], detail["to"]) == ("gpt-4o-mini", "gpt-4o-mini-2099-01-01")
    [models] = sql(world.server, "SELECT list(DISTINCT response_model ORDER BY response_model) "
                   "FROM judge_executions WHERE scorer_id = 'correct'")[0]
    assert "gpt-4o-mini-2099-01-01" in models
    post = poll("the drift webhook", lambda: [p for p in world.receiver.posts
                                              if p[0] == "/drift" and "model" in p[1]["text"]])
    assert post[0][1]["text"].startswith("tracescore judge drift on correct: the provider now "
                                         "reports model gpt-4o-mini-2099-01-01")
    assert post[0][1]["kind"] == "judge_drift"


def test_a_canary_that_stops_agreeing_raises_drift(world: World) -> None:
    judge = world.judge
    truth = {name: float(i % 2) for i, name in enumerate(CANARY)}
    judge.verdicts.update(truth)
    world.ok("POST", "/api/label-schemas", json={"name": "correct-canary", "kind": "boolean",
                                                  "scorer_id": "correct"})
    items = [{"item_id": name, "input": [{"role": "user", "content":
                                          f"What is the capital of country {name}?"}],
              "ground_truth": f"The capital of {name} is Town {i}."}
             for i, name in enumerate(CANARY)]
    world.ok("POST", "/api/datasets", json={"name": "canary", "items": items})
    world.ok("POST", "/api/labels", json=[
        {"item_id": name, "schema": "correct-canary", "value": bool(truth[name])}
        for name in CANARY])
    first = poll("the first canary run", lambda: sql(
        world.server, "SELECT n, kappa, kappa_low, kappa_high, drift, response_models "
        "FROM canary_runs ORDER BY created_at LIMIT 1"), server=world.server)
    n, kappa, low, high, drift, models = first[0]
    assert (n, kappa, low, high, drift) == (8, 1.0, 1.0, 1.0, None)
    assert "gpt-4o-mini" in json.loads(models) if isinstance(models, str) else models
    for name in CANARY[:3]:  # the judge now gets three of eight wrong
        judge.verdicts[name] = 1.0 - truth[name]
    drifted = poll("a canary run outside the baseline", lambda: sql(
        world.server, "SELECT kappa, drift FROM canary_runs WHERE drift IS NOT NULL"),
        server=world.server)
    assert drifted[0][0] < 1.0 and "outside the first run's interval [1.00, 1.00]" in \
        drifted[0][1]
    [event] = sql(world.server, "SELECT state, value, samples, detail->>'check' FROM "
                  "monitor_events WHERE kind = 'judge_drift' AND detail->>'check' = 'canary' "
                  "ORDER BY created_at LIMIT 1")
    assert event[0] == "drift" and event[1] < 1.0 and event[2] == 8
    poll("the canary drift webhook", lambda: [p for p in world.receiver.posts
                                              if "canary canary" in p[1]["text"]])
    [scored] = sql(world.server, "SELECT count(*) FROM scores WHERE source = 'canary' AND "
                   "metadata->>'item_id' = 'item-C0'")[0]
    assert scored >= 2
