"""Item 13 of issue 27: what DuckDB holds per row group while a database stays open grows with
every checkpoint; the server reopens its file after ``duckdb_reopen_after_checkpoints`` of them
to give it back. Against a real ``tracescore serve`` reopening after every checkpoint: exports
and SQL reads running throughout all succeed, every acknowledged span is stored, and
``/healthz`` counts the reopens."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
from server_process import running_server

from ._helpers import PROTOBUF, missing_span_ids, span_ids, span_request

# A WAL bound of 1 MiB: each ~2 MB export's commit is followed by a checkpoint, then a reopen.
CONFIG = "[server]\ncheckpoint_wal_bytes = 1048576\nduckdb_reopen_after_checkpoints = 1\n"


def test_reads_and_exports_during_reopens_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "reopen.toml"
    path.write_text(CONFIG)
    with running_server(tmp_path / "reopen.duckdb", args=["--config", str(path)]) as server:
        statuses: list[int] = []
        stop = threading.Event()

        def read() -> None:
            with httpx.Client(timeout=60) as client:
                while not stop.is_set():
                    answer = client.post(f"{server.url}/api/sql",
                                         json={"sql": "SELECT count(*) FROM spans"})
                    statuses.append(answer.status_code)

        reader = threading.Thread(target=read)
        reader.start()
        acknowledged: set[str] = set()
        try:
            for _ in range(6):
                request = span_request(200, value="r" * 10_000)
                response = httpx.post(f"{server.url}/v1/traces", headers=PROTOBUF, timeout=60,
                                      content=request.SerializeToString())
                assert response.status_code == 200, response.text
                acknowledged |= set(span_ids(request))
        finally:
            stop.set()
            reader.join(60)
        writer = httpx.get(f"{server.url}/healthz", timeout=30).json()["writer"]
        assert writer["refreshes"] >= 3, writer
        assert writer["reopens"] == 0, writer  # no fatal error: planned reopens only
        assert statuses and set(statuses) == {200}, sorted(set(statuses))
        assert not missing_span_ids(server, acknowledged)
        assert "Traceback" not in server.log()
