"""Issue 27, item 4's residue: user SQL statements run at most ``sql_max_concurrent`` at once.

DuckDB hands each 2,048-row vector to its client whole, outside its memory limit, so one
statement can hold 2,048 times its widest value whatever the byte cap (``SELECT repeat('x',
1000000) FROM range(2048)``: 2 GB). The byte cap cannot bound that; the number of statements
running at once can. On the old code every request ran at once: a second statement answered
while the first still ran, and nothing counted them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, running_server

from tracescore.store import SqlBusy, Store

# ~10^11 rows: far past any time limit here, so the statement holds its slot until stopped
ENDLESS = "SELECT sum(a.range * b.range) FROM range(100000) a, range(1000000) b"


def _gauges(server: ServerProcess) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("tracescore_sql_statements_"):
            name, value = line.split()
            out[name] = float(value)
    return out


def _wait_for(check: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def test_a_statement_waits_for_a_free_slot_and_runs_after(tmp_path: Path) -> None:
    config = tmp_path / "one.toml"
    config.write_text("[server]\nsql_max_concurrent = 1\nsql_timeout_seconds = 6\n")
    finished: list[str] = []
    answers: dict[str, httpx.Response] = {}

    def post(name: str, sql: str) -> None:
        answers[name] = httpx.post(f"{server.url}/api/sql", json={"sql": sql}, timeout=120)
        finished.append(name)

    with running_server(tmp_path / "one.duckdb", args=["--config", str(config)]) as server:
        assert _gauges(server) == {"tracescore_sql_statements_running": 0.0,
                                   "tracescore_sql_statements_waiting": 0.0}
        endless = threading.Thread(target=post, args=("endless", ENDLESS))
        endless.start()
        _wait_for(lambda: _gauges(server)["tracescore_sql_statements_running"] == 1,
                  "the endless statement running")
        quick = threading.Thread(target=post, args=("quick", "SELECT 42 AS answer"))
        quick.start()
        _wait_for(lambda: _gauges(server)["tracescore_sql_statements_waiting"] == 1,
                  "the quick statement waiting")
        assert "quick" not in finished  # it waits while the endless one holds the only slot
        running_seen = set()
        while quick.is_alive():  # never both at once
            running_seen.add(_gauges(server)["tracescore_sql_statements_running"])
            time.sleep(0.05)
        endless.join(120)
        after = _gauges(server)

    assert running_seen <= {0.0, 1.0}, running_seen
    assert answers["endless"].status_code == 400
    assert "longer than 6 s" in answers["endless"].json()["error"]["message"]
    assert answers["quick"].status_code == 200, answers["quick"].text
    assert answers["quick"].json()["rows"] == [[42]]
    assert after == {"tracescore_sql_statements_running": 0.0,
                     "tracescore_sql_statements_waiting": 0.0}


def test_no_free_slot_within_the_time_limit_is_refused_unrun(tmp_path: Path) -> None:
    store = Store(tmp_path / "busy.duckdb", sql_max_concurrent=1).open()
    try:
        errors: list[BaseException] = []

        def endless() -> None:
            try:
                store.query(ENDLESS, timeout_s=3)
            except BaseException as exc:  # noqa: BLE001 - the test reads it below
                errors.append(exc)

        holder = threading.Thread(target=endless)
        holder.start()
        _wait_for(lambda: store.sql_slots.running == 1, "the endless statement running")
        with pytest.raises(SqlBusy, match="sql_max_concurrent") as refused:
            store.query("SELECT 1", timeout_s=0.3)
        assert refused.value.retry_after_s > 0
        assert store.sql_slots.waiting == 0  # the refused one left the line
        holder.join(60)
        assert [type(e).__name__ for e in errors] == ["QueryTimeout"]
        assert store.query("SELECT 1 AS one").rows == [[1]]  # the slot came back
    finally:
        store.close()
