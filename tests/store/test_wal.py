"""The WAL walk (``tracescore.store._wal``) on logs DuckDB wrote: whole, torn the way a crash
tears them, and damaged the way a disk does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tracescore.store import DamagedWal, inspect_wal
from tracescore.store._wal import recover_wal


@pytest.fixture(scope="module")
def wal_bytes(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """(database file, its WAL holding 5 committed inserts), copied while DuckDB has them open."""
    import duckdb

    folder = tmp_path_factory.mktemp("wal")
    path = folder / "w.duckdb"
    conn = duckdb.connect(str(path), config={"checkpoint_threshold": "1GB"})
    conn.execute("CREATE TABLE t (i INTEGER, s VARCHAR)")
    conn.execute("CHECKPOINT")
    for k in range(5):
        conn.execute("INSERT INTO t SELECT range, repeat('x', 50) FROM range(?, ?)",
                     [k * 100, k * 100 + 100])
    shutil.copyfile(path, folder / "copy.duckdb")
    shutil.copyfile(f"{path}.wal", folder / "copy.duckdb.wal")
    conn.close()
    return (folder / "copy.duckdb").read_bytes(), (folder / "copy.duckdb.wal").read_bytes()


def write(tmp_path: Path, db: bytes, wal: bytes) -> Path:
    path = tmp_path / "db.duckdb"
    path.write_bytes(db)
    Path(f"{path}.wal").write_bytes(wal)
    return path


def test_a_whole_wal(tmp_path: Path, wal_bytes: tuple[bytes, bytes]) -> None:
    report = inspect_wal(write(tmp_path, *wal_bytes).with_suffix(".duckdb.wal"))
    assert report is not None and report.state == "complete"
    assert report.commits == 5 and report.end_of_entries == report.size == len(wal_bytes[1])
    assert inspect_wal(tmp_path / "none.wal") is None


@pytest.mark.parametrize(("cut", "state"), [
    (lambda w: w[:10], "partial"),            # torn inside the header: nothing committed
    (lambda w: w[: len(w) // 2], "partial"),  # cut short
    (lambda w: w[:-3], "partial"),            # the last entry torn
    (lambda w: bytes(len(w)), "unreadable"),
    (lambda w: b"\xff" * 40 + w[40:], "unreadable"),
])
def test_torn_and_damaged_wals(tmp_path: Path, wal_bytes: tuple[bytes, bytes], cut: object,
                               state: str) -> None:
    wal = cut(wal_bytes[1])  # type: ignore[operator]
    path = write(tmp_path, wal_bytes[0], wal)
    report = inspect_wal(f"{path}.wal")
    assert report is not None and report.state == state
    if state == "unreadable":
        with pytest.raises(DamagedWal, match="cannot be read at all"):
            recover_wal(str(path))
        assert Path(f"{path}.wal").read_bytes() == wal  # left as it was
    else:
        recovery = recover_wal(str(path))
        assert recovery is not None and "does not replay completely" in recovery.note
    [copy] = tmp_path.glob("db.duckdb.wal.damaged-*")
    assert copy.read_bytes() == wal


def test_a_partial_wal_replays_what_its_report_says(tmp_path: Path,
                                                    wal_bytes: tuple[bytes, bytes]) -> None:
    import duckdb

    path = write(tmp_path, wal_bytes[0], wal_bytes[1][: len(wal_bytes[1]) * 3 // 5])
    report = inspect_wal(f"{path}.wal")
    assert report is not None and 0 < report.commits < 5
    with duckdb.connect(str(path)) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (report.commits * 100,)
