"""A full disk (issue 27's hostile probe): the server stays up, refuses what it cannot store with
a retryable 503 that says why, keeps answering reads, resumes by itself once space is freed,
and loses no acknowledged span.

The database lives on its own small tmpfs, filled by real exports: once through the WAL (a
commit cannot be written) and once through a checkpoint (the database file cannot grow, which
DuckDB answers by invalidating the database: the store reopens it). Mounting needs root; the
tests skip, saying so, where the machine refuses the mount.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_process import ServerProcess, start_server

from ._helpers import PROTOBUF, missing_span_ids, span_ids, span_request

FULL_WORDS = "No space left on device"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 12 MiB at ``tmp_path/disk`` (grown with ``grow``), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"this machine refuses to mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def resize(disk: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)


def export(http: httpx.Client, server: ServerProcess, *, distinct: bool) -> tuple[int, str,
                                                                                   list[str]]:
    """One export of 200 spans with 2 KB values (``distinct``: a different one per span, so
    DuckDB cannot compress them away); (status, body text, span ids)."""
    request = span_request(200, value="v" * 2000)
    if distinct:
        for span in request.resource_spans[0].scope_spans[0].spans:
            span.attributes[0].value.string_value = os.urandom(1000).hex()
    response = http.post(f"{server.url}/v1/traces", content=request.SerializeToString(),
                         headers=PROTOBUF)
    return response.status_code, response.text, span_ids(request)


@pytest.mark.parametrize(("size", "distinct", "fills"), [
    ("12m", False, "the WAL"),
    ("40m", True, "a checkpoint"),
])
def test_a_full_disk_is_a_503_until_space_is_freed_and_loses_nothing(
        small_disk: Path, size: str, distinct: bool, fills: str) -> None:
    resize(small_disk, size)
    server = start_server(small_disk / "full.duckdb")
    acknowledged: set[str] = set()
    refused: list[tuple[int, str]] = []
    try:
        with httpx.Client(timeout=60) as http:
            for _ in range(2_000):
                status, text, ids = export(http, server, distinct=distinct)
                if status == 200:
                    acknowledged.update(ids)
                    continue
                refused.append((status, text))
                if len(refused) >= 5:
                    break
            assert refused, f"{fills}: the disk never filled"
            assert acknowledged, f"{fills}: nothing was stored before the disk filled"
            # every refusal is a retryable 503 naming the full disk (OTLP exporters retry 503)
            assert {status for status, _ in refused} == {503}, refused[:2]
            assert all(FULL_WORDS in text for _, text in refused), refused[0][1][:300]
            assert server.process is not None and server.process.poll() is None
            health = http.get(f"{server.url}/healthz").json()
            assert health["status"] in ("degraded", "unavailable"), health
            assert FULL_WORDS in (health["reason"] or ""), health
            if health["status"] == "degraded":  # the WAL filled: what is stored stays readable
                answer = http.post(f"{server.url}/api/sql",
                                   json={"sql": "SELECT count(*) FROM spans"})
                assert answer.status_code == 200
                assert answer.json()["rows"][0][0] >= len(acknowledged)
            resize(small_disk, "512m")
            status = 0
            for _ in range(60):  # the server resumes by itself: no restart, no operator call
                status, _, ids = export(http, server, distinct=distinct)
                if status == 200:
                    acknowledged.update(ids)
                    break
                time.sleep(0.5)
            assert status == 200, server.log()[-2000:]
            assert http.get(f"{server.url}/healthz").json()["status"] == "ok"
        assert not missing_span_ids(server, acknowledged)
        server.stop()
        server.start()
        missing = missing_span_ids(server, acknowledged)
        assert not missing, f"{fills}: {len(missing)} of {len(acknowledged)} acknowledged lost"
    finally:
        server.kill()
