"""items_from_traces on the captured traces of real clients: the agent input with its
history, the final answer as ground_truth, the trajectory when asked, the trace kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from datasets_helpers import AGENT_FOLDERS, SCENARIO, has, load_fixtures, trace_id

from tracescore.datasets import DatasetError, add_items, create_dataset, items_from_traces
from tracescore.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store(tmp_path_factory.mktemp("from-traces") / "t.duckdb") as opened:
        load_fixtures(opened)
        yield opened


@pytest.mark.parametrize("folder", AGENT_FOLDERS)
def test_turn1_item_is_the_question_and_the_final_answer(store: Store, folder: str) -> None:
    tid = trace_id(folder, "turn1")
    [item] = items_from_traces(store, [tid], trajectory=True)
    question = SCENARIO["turn1"]["input_messages"][0]["text"]
    assert item.input == [{"role": "user", "content": question}]
    assert item.ground_truth == SCENARIO["turn1"]["final_text"]
    assert item.source_trace_id == tid and item.source_span_id
    steps = item.expected_trajectory["steps"]
    tools = [s["name"] for s in steps if s.get("step_type") == "tool_call"]
    assert tools == ["get_weather", "convert_temperature"]
    assert SCENARIO["system_prompt"] in item.metadata["system"]


@pytest.mark.parametrize("folder", AGENT_FOLDERS)
def test_turn2_item_carries_the_history(store: Store, folder: str) -> None:
    [item] = items_from_traces(store, trace_id(folder, "turn2"))
    assert item.expected_trajectory is None  # only when asked
    history, last = item.input[:-1], item.input[-1]
    assert last == {"role": "user", "content": "Should I bring an umbrella?"}
    assert history[0] == {"role": "user",
                          "content": SCENARIO["turn1"]["input_messages"][0]["text"]}
    assert any(m["role"] == "assistant" and m["content"] == SCENARIO["turn1"]["final_text"]
               for m in history)
    assert item.ground_truth == SCENARIO["turn2"]["final_text"]


def test_sql_selects_the_traces_and_items_are_stored_with_their_source(store: Store) -> None:
    folder = AGENT_FOLDERS[0]
    wanted = [trace_id(folder, "turn1"), trace_id(folder, "turn2")]
    items = items_from_traces(
        store, sql=f"SELECT trace_id FROM traces WHERE trace_id IN ('{wanted[0]}', "
                   f"'{wanted[1]}') ORDER BY start_time")
    assert sorted(i.source_trace_id for i in items) == sorted(wanted)
    items[0].ground_truth = "an edited expected answer"
    create_dataset(store, "from-prod")
    dataset = add_items(store, "from-prod", items)
    stored = {i.source_trace_id: i for i in dataset.items}
    assert stored[items[0].source_trace_id].ground_truth == "an edited expected answer"
    assert stored[items[1].source_trace_id].input == items[1].input
    rows = store.read("SELECT source_trace_id, source_span_id FROM dataset_items")
    assert {r["source_trace_id"] for r in rows} == set(wanted)
    assert all(r["source_span_id"] for r in rows)


def test_unknown_trace_and_bad_sql_are_refused(store: Store, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no spans stored for trace"):
        items_from_traces(store, ["0" * 32])
    with pytest.raises(DatasetError, match="trace_id column"):
        items_from_traces(store, sql="SELECT 1 AS x")
    with pytest.raises(DatasetError, match="exactly one of"):
        items_from_traces(store)


@pytest.mark.parametrize("folder", [f for f in AGENT_FOLDERS if has(f, "workflow")])
def test_workflow_trace_gives_the_workflow_input_and_result(store: Store, folder: str) -> None:
    [item] = items_from_traces(store, trace_id(folder, "workflow"), trajectory=True)
    assert "how is the weather in Lisbon?" in json.dumps(item.input)
    assert "[Lisbon] Right now it is cloudy in Lisbon at 18°C (64.4°F)." in json.dumps(
        item.ground_truth, ensure_ascii=False)
    assert item.metadata == {"source": "trace", "target": "workflow"}
    names = [s["name"] for s in item.expected_trajectory["steps"]]
    assert names, item.expected_trajectory
