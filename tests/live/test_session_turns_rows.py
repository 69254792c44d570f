"""``session_turns`` (migration 11): the totals maintainer stores each session trace as a turn,
and the turns route reads the same turns from those rows as it computes from the spans when a
trace has no row (a database from before the migration)."""

from __future__ import annotations

import json
from typing import Any

from tracescore.live import TotalsMaintainer
from tracescore.server._sessions_api import PAGE_SQL, turns_of

SESSION = "conv-fixture-1"  # gen_ai.conversation.id of the capture's turns


def plain(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import orjson

    return json.loads(orjson.dumps(turns))


async def test_stored_turns_equal_turns_computed_from_spans(store: Any, add_traces: Any) -> None:
    [turn1] = add_traces(1, index=0)
    [turn2] = add_traces(1, index=1)
    add_traces(1, index=0)  # the same conversation id: a third turn
    totals = TotalsMaintainer(store, settle_s=0.0, max_wait_s=0.0)
    while await totals.run_once():
        pass
    stored = store.read("SELECT trace_id, session_id FROM session_turns ORDER BY trace_id")
    assert {r["session_id"] for r in stored} == {SESSION} and len(stored) == 3
    rows = store.read(PAGE_SQL, [SESSION, 10, 0])
    from_rows = plain(turns_of(store, SESSION, rows, first_number=3))
    store.write_sync(lambda conn: conn.execute("DELETE FROM session_turns"))
    from_spans = plain(turns_of(store, SESSION, rows, first_number=3))
    assert from_rows == from_spans
    assert [t["turn"] for t in from_rows] == [3, 2, 1]
    by_id = {t["trace_id"]: t for t in from_rows}
    assert by_id[turn1]["input"][0]["role"] == "user"
    assert by_id[turn2]["output"][-1]["role"] == "assistant"
    assert all(t["error"] is None for t in from_rows)
