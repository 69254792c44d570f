"""Issue 27, item 8: damaged write-ahead logs and database files against a real
``tracescore serve``.

The "crash" is made by the store itself: spans committed in separate transactions with the
writer's checkpoints held off, and the database file and its WAL copied while the store is
still open (what a ``kill -9`` leaves). Each test then damages a copy the way a disk or an
operator can, and starts a real server on it:

- a WAL cut in half replays its first half, and the server keeps a copy of the whole WAL and
  logs what it replayed (before: the tail was gone without a word);
- a WAL whose header cannot be read stops ``serve`` (exit 2, one sentence) and is kept, unless
  ``--discard-damaged-wal`` (before: it was skipped and deleted by the open-time checkpoint);
- a WAL entry failing its checksum stops ``serve`` with a sentence (before: a traceback), and
  ``--discard-damaged-wal`` replays the log up to it;
- a database file damaged in any way stops ``serve`` with one sentence and exit 2 (before: three
  kinds gave a traceback);
- a data block failing its checksum makes ``/healthz`` degraded, and the failing reads of the
  totals maintainer and the scheduler are logged once, not every tick.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import free_port, running_server, sql

from ._helpers import span_request

COMMITS = 8
SPANS_PER_COMMIT = 200
CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.2
max_wait_seconds = 5
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``crash/db.duckdb`` + ``crash/db.duckdb.wal`` (8 commits of 200 spans only in the WAL)
    and ``clean/db.duckdb`` (the same, checkpointed and closed)."""
    from tracescore.ingest import decode_traces_protobuf
    from tracescore.store import CheckpointPolicy, Store

    root = tmp_path_factory.mktemp("damaged")
    (root / "config.toml").write_text(CONFIG)
    live = root / "live" / "db.duckdb"
    hold = CheckpointPolicy(idle_s=3600, eager_wal_bytes=0, max_wal_bytes=1 << 30,
                            interval_s=3600)
    store = Store(live, checkpoint=hold).open()
    try:
        for _ in range(COMMITS):
            body = span_request(SPANS_PER_COMMIT, value="v" * 400).SerializeToString()
            store.write_spans_sync(decode_traces_protobuf(body))
        (root / "crash").mkdir()
        shutil.copyfile(live, root / "crash" / "db.duckdb")
        shutil.copyfile(f"{live}.wal", root / "crash" / "db.duckdb.wal")
    finally:
        store.close()
    (root / "clean").mkdir()
    shutil.copyfile(live, root / "clean" / "db.duckdb")
    yield root


def copy_of(made: Path, kind: str, tmp_path: Path) -> Path:
    """A fresh copy of ``made/<kind>`` in ``tmp_path``; returns its database path."""
    shutil.copytree(made / kind, tmp_path / kind)
    return tmp_path / kind / "db.duckdb"


def serve_exits(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``tracescore serve`` on ``db`` expecting it to stop at start-up."""
    return subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--db", str(db), "--http-port",
         str(free_port()), "--no-grpc", *extra],
        capture_output=True, text=True, timeout=120, cwd=db.parent)


def damaged_copies(db: Path) -> list[Path]:
    return sorted(db.parent.glob("db.duckdb.wal.damaged-*"))


def span_count(server: Any) -> int:
    [[count]] = sql(server, "SELECT count(*) FROM spans")
    return int(count)


def test_a_half_wal_is_replayed_as_far_as_it_goes_and_kept(made: Path, tmp_path: Path) -> None:
    db = copy_of(made, "crash", tmp_path)
    wal = Path(f"{db}.wal")
    whole = wal.read_bytes()
    from tracescore.store import inspect_wal

    cut = len(whole) // 2
    wal.write_bytes(whole[:cut])
    if inspect_wal(wal).state == "complete":
        cut -= 1  # the half fell on an entry's end (ids vary in length): cut inside that entry
        wal.write_bytes(whole[:cut])
    with running_server(db, args=["--config", str(made / "config.toml")]) as server:
        [copy] = damaged_copies(db)
        assert copy.read_bytes() == whole[:cut]
        said = re.search(r"does not replay completely: it stops in an incomplete entry at byte "
                         r"(\d+) of (\d+)\. Replayed (\d+) bytes \((\d+) committed", server.log())
        assert said is not None, server.log()[-3000:]
        assert int(said.group(2)) == cut
        commits = int(said.group(4))
        assert 0 < commits < COMMITS
        assert span_count(server) == commits * SPANS_PER_COMMIT


def test_an_unreadable_wal_stops_serve_unless_discarded(made: Path, tmp_path: Path) -> None:
    db = copy_of(made, "crash", tmp_path)
    wal = Path(f"{db}.wal")
    damaged = bytes(64) + wal.read_bytes()[64:]
    wal.write_bytes(damaged)
    done = serve_exits(db)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith(f"Error: the write-ahead log {db}.wal ({len(damaged)} bytes) cannot "
                           "be read at all")
    assert "--discard-damaged-wal" in line and "Traceback" not in done.stderr
    [copy] = damaged_copies(db)
    assert copy.read_bytes() == damaged and wal.read_bytes() == damaged  # nothing dropped

    with running_server(db, args=["--discard-damaged-wal", "--config",
                                  str(made / "config.toml")]) as server:
        assert "discarded the unreadable write-ahead log" in server.log()
        assert span_count(server) == 0
    assert len(damaged_copies(db)) == 2 and all(c.read_bytes() == damaged
                                                for c in damaged_copies(db))


def test_a_wal_entry_failing_its_checksum(made: Path, tmp_path: Path) -> None:
    from tracescore.store import inspect_wal

    db = copy_of(made, "crash", tmp_path)
    wal = Path(f"{db}.wal")
    report = inspect_wal(wal)
    assert report is not None and report.state == "complete" and report.commits == COMMITS
    data = bytearray(wal.read_bytes())
    # the entries of one commit: find the first entry after the third commit ended
    third_commit_end = _commit_ends(report, data)[2]
    entry = report.entry_offsets.index(third_commit_end)
    start = report.entry_offsets[entry] + 16
    size = int.from_bytes(data[start - 16:start - 8], "little")
    for at in range(start + 2, start + size):  # the payload only: the framing stays whole
        data[at] ^= 0x55
    wal.write_bytes(bytes(data))
    done = serve_exits(db)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith(f"Error: the write-ahead log {db}.wal is damaged (")
    assert "checksum" in line and "--discard-damaged-wal" in line
    assert "Traceback" not in done.stderr

    with running_server(db, args=["--discard-damaged-wal", "--config",
                                  str(made / "config.toml")]) as server:
        assert f"fails a checksum at byte {start}" in server.log()
        assert "does not replay completely" not in server.log()  # the framing is whole
        assert span_count(server) == 3 * SPANS_PER_COMMIT
    [copy] = damaged_copies(db)
    assert copy.read_bytes() == bytes(data)


def _commit_ends(report: Any, data: bytearray) -> list[int]:
    """Where each committed transaction of the WAL ends (the offset after its flush entry)."""
    ends = []
    for start in report.entry_offsets:
        size = int.from_bytes(data[start:start + 8], "little")
        if data[start + 18] == 100:  # WAL_FLUSH: field 100 (two bytes), then the type
            ends.append(start + 16 + size)
    return ends


@pytest.mark.parametrize("damage", ["headers zeroed", "cut in half", "blocks zeroed",
                                    "not a database"])
def test_a_damaged_database_file_is_one_sentence_and_exit_2(made: Path, tmp_path: Path,
                                                           damage: str) -> None:
    db = copy_of(made, "clean", tmp_path)
    data = db.read_bytes()
    damaged = {
        "headers zeroed": data[:4096] + bytes(8192) + data[12288:],
        "cut in half": data[: len(data) // 2],
        "blocks zeroed": data[:12288] + bytes(len(data) - 12288),
        "not a database": b"not a duckdb file\n" * 100,
    }[damage]
    db.write_bytes(damaged)
    done = serve_exits(db)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith(f"Error: {db} is damaged and cannot be opened (")
    assert "restore it from a backup" in line and "--url" not in line


def test_a_damaged_data_block_makes_healthz_degraded_and_is_logged_once(
        made: Path, tmp_path: Path) -> None:
    import duckdb

    db = copy_of(made, "clean", tmp_path)
    with duckdb.connect(str(db), read_only=True) as conn:
        block_id, offset = conn.execute(
            "SELECT block_id, block_offset FROM pragma_storage_info('spans') "
            "WHERE column_name = 'attributes' AND persistent AND block_id >= 0 "
            "ORDER BY block_id DESC LIMIT 1").fetchone()
    data = bytearray(db.read_bytes())
    at = 12288 + block_id * 262144 + 8 + offset + 16  # inside the block, past its checksum
    for index in range(at, at + 64):
        data[index] ^= 0xFF
    db.write_bytes(bytes(data))
    with running_server(db, args=["--config", str(made / "config.toml")]) as server:
        deadline = time.monotonic() + 30
        while (health := httpx.get(f"{server.url}/healthz").json())["status"] != "degraded":
            assert time.monotonic() < deadline, (health, server.log()[-3000:])
            time.sleep(0.2)
        assert health["reason"].startswith("the database file is damaged: Corrupt database file")
        assert "Restore the file from a backup" in health["reason"]
        time.sleep(4)  # 20 scheduler ticks, two totals retries at the old 2 s
        logged = [line for line in server.log().splitlines()
                  if "Corrupt database file" in line and not line.startswith(" ")]
        assert len(logged) <= 4, "\n".join(logged)
        again = httpx.get(f"{server.url}/healthz").json()
        assert again["status"] == "degraded" and "reads failed on it" in again["reason"]
        reads = sql(server, "SELECT count(*) FROM traces")  # what is undamaged still answers
        assert reads[0][0] > 0
