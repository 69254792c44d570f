"""Versioning: every change is a new version and any past version reads back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracescore.datasets import (
    DatasetExists,
    DatasetNotFound,
    InvalidDatasetItem,
    add_items,
    create_dataset,
    get_dataset,
    is_visible,
    list_datasets,
    parse_ref,
    remove_items,
)
from tracescore.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "t.duckdb") as opened:
        yield opened


def _ids(dataset: object) -> list[str]:
    return [item.item_id for item in dataset.items]  # type: ignore[attr-defined]


def test_each_change_is_a_version_and_old_versions_read_back_exactly(store: Store) -> None:
    v1 = create_dataset(store, "qa", description="weather",
                        items=[{"item_id": "a", "input": "Paris?", "ground_truth": "cloudy"},
                               {"item_id": "b", "input": "Lima?"}])
    assert (v1.version, _ids(v1)) == (1, ["a", "b"])
    v2 = add_items(store, "qa", [{"item_id": "c", "input": "Oslo?"}])
    v3 = remove_items(store, "qa", ["a"])
    v4 = add_items(store, "qa", [{"item_id": "d", "input": "Rome?"}])
    v5 = remove_items(store, "qa", ["b", "c"])
    assert [v.version for v in (v2, v3, v4, v5)] == [2, 3, 4, 5]
    expected = {1: ["a", "b"], 2: ["a", "b", "c"], 3: ["b", "c"], 4: ["b", "c", "d"], 5: ["d"]}
    for version, ids in expected.items():
        assert _ids(get_dataset(store, "qa", version)) == ids
        assert _ids(get_dataset(store, f"qa@{version}")) == ids
    newest = get_dataset(store, "qa")
    assert (newest.version, newest.current_version, _ids(newest)) == (5, 5, ["d"])
    item = get_dataset(store, "qa@1").items[0]
    assert (item.input, item.ground_truth, item.version_added) == ("Paris?", "cloudy", 1)
    # nothing was deleted: every row is still there, with the version that removed it
    rows = store.read("SELECT item_id, version_added, version_removed FROM dataset_items "
                      "ORDER BY item_id")
    assert [(r["item_id"], r["version_added"], r["version_removed"]) for r in rows] == [
        ("a", 1, 3), ("b", 1, 5), ("c", 2, 5), ("d", 4, None)]
    info = list_datasets(store)
    assert [(d.name, d.current_version, d.item_count, d.description) for d in info] == [
        ("qa", 5, 1, "weather")]


def test_visibility_rule_matches_the_stored_reads() -> None:
    assert is_visible(1, None, 1) and is_visible(1, 3, 2)
    assert not is_visible(1, 3, 3) and not is_visible(2, None, 1)
    assert parse_ref("qa@12") == ("qa", 12) and parse_ref("qa") == ("qa", None)
    with pytest.raises(DatasetNotFound, match="name@VERSION"):
        parse_ref("qa@latest")


def test_refusals_name_what_to_fix(store: Store) -> None:
    create_dataset(store, "qa", items=[{"item_id": "a", "input": "x"}])
    with pytest.raises(DatasetExists, match="already exists"):
        create_dataset(store, "qa")
    with pytest.raises(InvalidDatasetItem, match="'a' is already in the dataset"):
        add_items(store, "qa", [{"item_id": "a", "input": "y"}])
    remove_items(store, "qa", ["a"])
    with pytest.raises(InvalidDatasetItem, match="never reused"):  # removed ids stay taken
        add_items(store, "qa", [{"item_id": "a", "input": "y"}])
    with pytest.raises(DatasetNotFound, match=r"has no items \['a'\]"):
        remove_items(store, "qa", ["a"])
    with pytest.raises(DatasetNotFound, match="versions 1 to 2; version 3"):
        get_dataset(store, "qa", 3)
    with pytest.raises(DatasetNotFound, match="no dataset named 'nope'"):
        add_items(store, "nope", [{"input": "x"}])
    with pytest.raises(InvalidDatasetItem, match="`input` is missing"):
        add_items(store, "qa", [{"ground_truth": "x"}])
    with pytest.raises(InvalidDatasetItem, match="instead of `inputs` or `turns`"):
        add_items(store, "qa", [{"inputs": ["a", "b"]}])
    assert get_dataset(store, "qa").version == 2  # refused changes made no version


def test_a_database_path_is_opened_per_call(tmp_path: Path) -> None:
    path = tmp_path / "file.duckdb"
    create_dataset(path, "qa", items=[{"input": {"text": "hi"}, "metadata": {"tag": "x"}}])
    add_items(str(path), "qa", [{"input": [{"role": "user", "content": "yo"}]}])
    dataset = get_dataset(path, "qa")
    assert [item.input for item in dataset.items] == [
        {"text": "hi"}, [{"role": "user", "content": "yo"}]]
    assert dataset.items[0].metadata == {"tag": "x"}
    assert all(len(item.item_id or "") == 32 for item in dataset.items)  # generated ids
