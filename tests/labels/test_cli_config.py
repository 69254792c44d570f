"""The labels CLI on a database file, and bad ``[labels]``, ``[[canaries]]`` and ``alignment``
settings stopping with a sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.cli import main
from tracescore.labels import InvalidLabel, parse_labels_config

from .conftest import write_scores


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    return result


def test_labels_queues_and_agreement_on_a_file(store: Any, traces: Any, tmp_path: Path) -> None:
    ids = traces(4)
    write_scores(store, ids, [1.0, 0.0, 1.0, 0.0])
    db = store.path
    store.close()
    made = _run("labels", "schema", "ok", "--kind", "boolean", "--scorer", "judge", "--db", db)
    assert made.exit_code == 0 and "label schema ok (boolean) checks scorer judge" in made.output
    source = tmp_path / "labels.jsonl"
    source.write_text("".join(json.dumps({"trace_id": t, "schema": "ok", "value": v}) + "\n"
                              for t, v in zip(ids, [True, False, False, False], strict=True)))
    imported = _run("labels", "import", str(source), "--annotator", "ann", "--db", db)
    assert imported.exit_code == 0 and "imported 4 label(s)" in imported.output
    exported = _run("labels", "export", "--schema", "ok", "--db", db)
    rows = [json.loads(line) for line in exported.output.splitlines()]
    assert sorted(r["value"] for r in rows) == [False, False, False, True]
    assert {r["annotator"] for r in rows} == {"ann"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trace_id": "ab", "schema": "ok", "value": "meh"}\n')
    refused = _run("labels", "import", str(bad), "--db", db)
    assert refused.exit_code == 1 and "schema 'ok' is boolean" in refused.output
    queue = _run("queues", "create", "q", "--schema", "ok", "--size", "3", "--db", db)
    assert queue.exit_code == 0 and "queue q: 3 item(s) to label with ok" in queue.output
    listed = _run("queues", "list", "--db", db)
    assert listed.exit_code == 0 and "q " in listed.output
    agreement = _run("agreement", "--format", "json", "--db", db)
    [row] = json.loads(agreement.output)["agreement"]
    assert (row["n"], row["kappa"]) == (4, pytest.approx(0.5))  # 3 of 4 agree, chance .5
    both = _run("agreement", "--db", db, "--url", "http://127.0.0.1:9")
    assert both.exit_code == 2 and "either --url or --db" in both.output


def test_bad_labels_config_is_a_sentence() -> None:
    with pytest.raises(InvalidLabel, match=r"\[labels\] in x.toml: key 'colour': unknown key"):
        parse_labels_config({"labels": {"colour": 1}}, source="x.toml")
    with pytest.raises(InvalidLabel, match="entry #1 in x.toml: key 'every'"):
        parse_labels_config({"canaries": [{"scorer": "j", "dataset": "d", "schema": "s",
                                           "every": "soon"}]}, source="x.toml")
    with pytest.raises(InvalidLabel, match="no scorer 'j' is registered"):
        parse_labels_config({"canaries": [{"scorer": "j", "dataset": "d", "schema": "s"}]},
                            source="x.toml", scorer_ids=["other"])
    settings, [canary] = parse_labels_config(
        {"labels": {"bootstrap_resamples": 50}, "canaries": [
            {"scorer": "j", "dataset": "d", "schema": "s", "every": "6h"}]})
    assert settings.bootstrap_resamples == 50 and canary.every_s == 6 * 3600


def test_drift_webhooks_are_checked_like_monitors_webhooks() -> None:
    """A drift webhook is refused as a monitor's is, and the sentence never holds its secret
    (only validated here: nothing is sent)."""
    secret = "T000/B000/XXXXsecret"
    with pytest.raises(InvalidLabel, match=r"drift_notify in x.toml: webhook #1") as refused:
        parse_labels_config({"labels": {"drift_notify": [
            f"http://169.254.169.254/hooks/{secret}"]}}, source="x.toml")
    assert secret not in str(refused.value)
    with pytest.raises(InvalidLabel, match=r"entry #1 in x.toml: key 'notify': webhook #2"):
        parse_labels_config({"canaries": [{"scorer": "j", "dataset": "d", "schema": "s",
                                           "notify": ["https://hooks.example.com/a",
                                                      "http://127.0.0.1:9/b"]}]},
                            source="x.toml")
    settings, _ = parse_labels_config({"live": {"allow_private_webhooks": True},
                                       "labels": {"drift_notify": ["http://127.0.0.1:9/b"]}})
    assert settings.drift_notify == ["http://127.0.0.1:9/b"]


def test_an_alignment_fitted_on_another_version_stops_startup(tmp_path: Path) -> None:
    from tracescore.labels import Alignment, Example
    from tracescore.live import ConfigError, load_live_config

    entry = {"id": "strict", "use": "tracescore.scorers.checks:no_tool_errors"}
    _, registry = load_live_config({"scorers": [entry]})
    parent = registry.get("strict").version
    aligned = Alignment(scorer_id="strict", parent_version=parent, method="few_shot",
                        examples=(Example("q", "a", "true", 1.0),))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(aligned.to_json()))
    _, registry = load_live_config({"scorers": [{**entry, "alignment": str(good)}]})
    assert registry.get("strict").version == aligned.version != parent
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({**aligned.to_json(), "parent_version": "0" * 16,
                                 "version": None}))
    with pytest.raises(ConfigError, match="was fitted on version 00000000"):
        load_live_config({"scorers": [{**entry, "alignment": str(stale)}]})
    with pytest.raises(ConfigError, match="no alignment file 'nope.json'"):
        load_live_config({"scorers": [{**entry, "alignment": "nope.json"}]})
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({**aligned.to_json(), "instructions": "be kind"}))
    with pytest.raises(ConfigError, match="does not match its version"):
        load_live_config({"scorers": [{**entry, "alignment": str(edited)}]})


def test_tracescore_check_reads_labels_and_canaries(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[labels]\nbootstrap_resamples = "many"\n')
    refused = _run("check", "--config", str(bad), "--no-call")
    assert refused.exit_code == 1
    assert "[labels] in " in refused.output and "key 'bootstrap_resamples'" in refused.output
    good = tmp_path / "good.toml"
    good.write_text('[[scorers]]\nid = "short"\nuse = "tracescore.scorers.checks:no_tool_errors"'
                    '\n\n[[canaries]]\nscorer = "short"\ndataset = "canary"\nschema = "ok"\n')
    fine = _run("check", "--config", str(good), "--no-call")
    assert fine.exit_code == 0, fine.output
    assert "canary of short: dataset canary every 24h" in fine.output
