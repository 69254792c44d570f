"""Labels, schemas and queues in a real store: validation, history, JSONL round trips, leases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tracescore import labels
from tracescore.labels import InvalidLabel, LabelsNotFound, QueueExists

from .conftest import write_scores


def _count(store: Any, sql: str) -> int:
    return int(store.read(sql)[0]["n"])


def test_schema_kinds_are_checked(store: Any) -> None:
    with pytest.raises(InvalidLabel, match="at least two values"):
        labels.create_schema(store, {"name": "tone", "kind": "categorical", "values": ["ok"]})
    with pytest.raises(InvalidLabel, match="min_value and max_value"):
        labels.create_schema(store, {"name": "stars", "kind": "numeric"})
    with pytest.raises(InvalidLabel, match="unknown key"):
        labels.create_schema(store, {"name": "x", "kind": "boolean", "colour": "red"})
    made = labels.create_schema(store, {"name": "stars", "kind": "numeric", "min_value": 1,
                                        "max_value": 5, "scorer_id": "judge"})
    assert made.choices() == ["1", "2", "3", "4", "5"]
    assert [s.name for s in labels.list_schemas(store)] == ["stars"]


def test_a_schema_keeps_its_meaning_once_labelled(store: Any, traces: Any) -> None:
    [trace] = traces(1)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "rubric": "is it right?"})
    labels.add(store, [{"trace_id": trace, "schema": "ok", "value": True}])
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    assert labels.get_schema(store, "ok").scorer_id == "judge"
    with pytest.raises(InvalidLabel, match="already has 1 label"):
        labels.create_schema(store, {"name": "ok", "kind": "categorical", "values": ["a", "b"]})


def test_a_bad_label_stores_none_of_its_batch(store: Any, traces: Any) -> None:
    a, b = traces(2)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    with pytest.raises(InvalidLabel, match="label 1: schema 'ok' is boolean"):
        labels.add(store, [{"trace_id": a, "schema": "ok", "value": "yes"},
                           {"trace_id": b, "schema": "ok", "value": "perhaps"}])
    with pytest.raises(InvalidLabel, match="no label schema named 'nope'"):
        labels.add(store, [{"trace_id": a, "schema": "nope", "value": 1}])
    with pytest.raises(InvalidLabel, match="a span label needs trace_id"):
        labels.add(store, [{"span_id": "ab" * 8, "schema": "ok", "value": 1,
                            "target_type": "span"}])
    assert _count(store, "SELECT count(*) AS n FROM labels") == 0


def test_the_newest_label_is_current_and_earlier_ones_are_kept(store: Any, traces: Any) -> None:
    [trace] = traces(1)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.add(store, [{"trace_id": trace, "schema": "ok", "value": True, "annotator": "ann"}])
    labels.add(store, [{"trace_id": trace, "schema": "ok", "value": False, "annotator": "ann",
                        "comment": "missed the umbrella"}])
    labels.add(store, [{"trace_id": trace, "schema": "ok", "value": True, "annotator": "bo"}])
    current = labels.list_labels(store)
    assert sorted((r["annotator"], r["value"]) for r in current) == [("ann", False),
                                                                     ("bo", True)]
    assert len(labels.list_labels(store, current=False)) == 3
    [row] = store.read("SELECT value, numeric_value, comment FROM current_labels "
                       "WHERE annotator = 'ann'")
    assert (row["value"], row["numeric_value"], row["comment"]) == ("false", 0.0,
                                                                    "missed the umbrella")


def test_jsonl_round_trip_and_line_errors(store: Any, traces: Any, tmp_path: Path) -> None:
    a, b = traces(2)
    labels.create_schema(store, {"name": "tone", "kind": "categorical",
                                 "values": ["rude", "neutral", "kind"]})
    source = tmp_path / "in.jsonl"
    source.write_text(
        f'{{"trace_id": "{a}", "schema": "tone", "value": "kind", "annotator": "ann"}}\n\n'
        f'{{"trace_id": "{b.upper()}", "span_id": "{"0f" * 8}", "schema": "tone", '
        '"value": "rude", "comment": "snippy"}\n')
    assert labels.import_labels(store, source, annotator="importer") == 2
    exported = sorted(labels.list_labels(store), key=lambda r: r["target_type"], reverse=True)
    assert [(r["target_type"], r["value"], r["annotator"]) for r in exported] == [
        ("trace", "kind", "ann"), ("span", "rude", "importer")]
    assert exported[1]["trace_id"] == b  # ids are stored lower-case
    again = tmp_path / "again.jsonl"
    import json

    again.write_text("".join(json.dumps(r) + "\n" for r in exported))
    labels.import_labels(store, again)  # the same label ids: nothing new
    assert _count(store, "SELECT count(*) AS n FROM labels") == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f'{{"trace_id": "{a}", "schema": "tone", "value": "kind"}}\nnot json\n')
    with pytest.raises(InvalidLabel, match="line 2: not JSON"):
        labels.import_labels(store, bad)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(f'{{"trace_id": "{a}", "schema": "tone", "value": "meh"}}\n')
    with pytest.raises(InvalidLabel, match="label 0: schema 'tone' takes one of"):
        labels.import_labels(store, wrong)


def test_a_queue_freezes_its_selection(store: Any, traces: Any) -> None:
    ids = traces(8)
    write_scores(store, ids, [0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.05, 0.95])
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    low = "trace_id IN (SELECT trace_id FROM scores WHERE scorer_id = 'judge' AND score < 0.5)"
    made = labels.create_queue(store, {"name": "low", "schemas": ["ok"], "selection": low,
                                       "size": 10, "seed": 4})
    assert made["items"] == 4 and made["scorer_id"] == "judge" and made["hide_judge"] is True
    keys = [r["item_key"] for r in store.read(
        "SELECT item_key FROM review_items WHERE queue_name = 'low' ORDER BY position")]
    assert sorted(keys) == sorted(f"trace:{ids[i]}" for i in (0, 2, 4, 6))
    labels.create_queue(store, {"name": "low2", "schemas": ["ok"], "selection": low,
                                "size": 10, "seed": 4})
    assert keys == [r["item_key"] for r in store.read(
        "SELECT item_key FROM review_items WHERE queue_name = 'low2' ORDER BY position")]
    write_scores(store, traces(1), [0.0])  # a later low score does not join the queue
    assert labels.get_queue(store, "low")["items"] == 4
    with pytest.raises(QueueExists):
        labels.create_queue(store, {"name": "low", "schemas": ["ok"]})
    with pytest.raises(LabelsNotFound, match="no label schema named 'nope'"):
        labels.create_queue(store, {"name": "x", "schemas": ["nope"]})
    with pytest.raises(InvalidLabel, match="selection does not run"):
        labels.create_queue(store, {"name": "y", "schemas": ["ok"],
                                    "selection": "no_such_column > 1"})
    with pytest.raises(InvalidLabel, match="without ';'"):
        labels.create_queue(store, {"name": "z", "schemas": ["ok"],
                                    "selection": "true; DROP TABLE labels"})


def test_items_handed_to_a_queue_join_it_once_after_its_selection(
    store: Any, traces: Any
) -> None:
    """A cascade's unsure runs (``tracescore.live``) join an existing queue after its frozen
    selection, each target once; an unknown queue is a ``LookupError``."""
    ids = traces(3)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.create_queue(store, {"name": "unsure", "schemas": ["ok"], "selection": "false"})
    unsure = [{"trace_id": ids[0], "span_id": "s1", "session_id": None, "scorer_id": "c"},
              {"trace_id": ids[1], "span_id": None, "session_id": None, "scorer_id": "c"},
              {"trace_id": ids[0], "span_id": "s2", "session_id": None, "scorer_id": "c"}]
    assert labels.enqueue_review_items(store, "unsure", unsure) == 2
    assert labels.enqueue_review_items(store, "unsure", unsure[:1]) == 0
    rows = store.read("SELECT item_key, position FROM review_items "
                      "WHERE queue_name = 'unsure' ORDER BY position")
    assert [(r["item_key"], r["position"]) for r in rows] == [
        (f"trace:{ids[0]}", 0), (f"trace:{ids[1]}", 1)]
    assert labels.next_item(store, "unsure", "ann")["trace_id"] == ids[0]
    with pytest.raises(LookupError, match="no review queue named 'nope'"):
        labels.enqueue_review_items(store, "nope", unsure)


def test_leases_hand_each_item_to_one_annotator(store: Any, traces: Any) -> None:
    ids = traces(3)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.create_queue(store, {"name": "q", "schemas": ["ok"], "order": "oldest",
                                "lease_seconds": 60})
    first = labels.next_item(store, "q", "ann")
    second = labels.next_item(store, "q", "bo")
    assert first is not None and second is not None
    assert first["item_key"] != second["item_key"]
    assert labels.next_item(store, "q", "ann")["item_key"] == first["item_key"]  # resumes
    third = labels.next_item(store, "q", "cy")
    assert third is not None and labels.next_item(store, "q", "dee") is None
    # ann's lease runs out: her item goes to dee
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=61)
    assert labels.next_item(store, "q", "dee", now=later)["item_key"] == first["item_key"]
    labels.add(store, [{"trace_id": second["trace_id"], "schema": "ok", "value": True,
                        "annotator": "bo", "queue": "q"}])
    progress = labels.item_detail(store, "q", second["item_key"], "bo")["progress"]
    assert (progress["done"], progress["mine"], progress["needed"]) == (1, 1, 3)
    labels.skip_item(store, "q", third["item_key"], "cy")
    # first: dee's lease; second: done by bo; third: skipped by cy
    assert labels.next_item(store, "q", "cy", now=later) is None
    assert labels.next_item(store, "q", "eve", now=later)["item_key"] == third["item_key"]
    assert set(ids) == {first["trace_id"], second["trace_id"], third["trace_id"]}


def test_several_annotators_per_item(store: Any, traces: Any) -> None:
    traces(1)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.create_queue(store, {"name": "q", "schemas": ["ok"], "annotators_per_item": 2})
    a = labels.next_item(store, "q", "ann")
    b = labels.next_item(store, "q", "bo")
    assert a is not None and b is not None and a["item_key"] == b["item_key"]
    assert labels.next_item(store, "q", "cy") is None
    labels.add(store, [{"trace_id": a["trace_id"], "schema": "ok", "value": 1,
                        "annotator": "ann", "queue": "q"}])
    assert labels.next_item(store, "q", "ann") is None  # done by her


def test_the_judge_stays_hidden_until_labelled(store: Any, traces: Any) -> None:
    [trace] = traces(1)
    write_scores(store, [trace], [0.3], reason="the answer is off topic")
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "judge"})
    labels.create_queue(store, {"name": "q", "schemas": ["ok"]})
    item = labels.next_item(store, "q", "ann")
    assert item is not None and item["judge_hidden"] and item["judge"] is None
    assert item["schemas"][0]["choices"] == ["true", "false"]
    labels.add(store, [{"trace_id": trace, "schema": "ok", "value": False, "annotator": "ann",
                        "queue": "q"}])
    shown = labels.item_detail(store, "q", item["item_key"], "ann")
    assert not shown["judge_hidden"]
    assert (shown["judge"]["score"], shown["judge"]["reason"]) == (0.3,
                                                                    "the answer is off topic")
    assert [label["value"] for label in shown["labels"]] == [False]
    labels.create_queue(store, {"name": "open", "schemas": ["ok"], "hide_judge": False})
    assert labels.next_item(store, "open", "bo")["judge"]["score"] == 0.3


def test_a_label_for_an_item_outside_its_queue_is_refused(store: Any, traces: Any) -> None:
    a, b = traces(2)
    labels.create_schema(store, {"name": "ok", "kind": "boolean"})
    labels.create_queue(store, {"name": "q", "schemas": ["ok"], "order": "oldest", "size": 1})
    [member] = store.read("SELECT trace_id FROM review_items WHERE queue_name = 'q'")
    outsider = b if member["trace_id"] == a else a
    with pytest.raises(InvalidLabel, match="is not an item of queue 'q'"):
        labels.add(store, [{"trace_id": outsider, "schema": "ok", "value": 1,
                            "annotator": "ann", "queue": "q"}])
    with pytest.raises(InvalidLabel, match="needs an annotator"):
        labels.add(store, [{"trace_id": member["trace_id"], "schema": "ok", "value": 1,
                            "queue": "q"}])
    assert _count(store, "SELECT count(*) AS n FROM labels") == 0
