"""Issue 27 defect 4: a large SQL answer's memory stays near the byte cap.

Through a real ``tracescore serve`` with the default ``sql_max_bytes`` (32 MiB). On the old code
an answer of 100 KB rows cut at 32 MiB grew the server by about 680 MB (DuckDB's vectors, then
256 rows at a time as Python values, the kept rows, and their JSON written again whole); now
the result is read as Arrow record batches, converted about 4 MB at a time and kept only as
JSON text, and the growth stays near what DuckDB itself needs for its vectors (about 250 MB
here; ``tests/bench/bench_sql_memory.py`` prints the figures).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from server_process import ServerProcess, peak_rss_growth, running_server

WIDE = "SELECT repeat('x', 100000) AS v FROM range(20000)"  # 2 GB unbounded


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with the default SQL limits and no live scoring (nothing else allocates)."""
    root = tmp_path_factory.mktemp("sql-stream")
    config = root / "stream.toml"
    config.write_text("[live]\nenabled = false\n")
    with running_server(root / "stream.duckdb", args=["--config", str(config)]) as running:
        yield running


def test_a_wide_answer_grows_the_server_by_far_less_than_before(server: ServerProcess) -> None:
    assert server.process is not None
    httpx.post(f"{server.url}/api/sql", json={"sql": "SELECT 1"}, timeout=60)  # warm the guard
    response, growth = peak_rss_growth(server.process.pid, lambda: httpx.post(
        f"{server.url}/api/sql", json={"sql": WIDE}, timeout=600))
    assert response.status_code == 200, response.text[:300]
    answer = response.json()
    assert answer["truncated"] is True and "sql_max_bytes" in answer["truncated_reason"]
    assert 300 < len(answer["rows"]) < 400 and answer["rows"][0][0] == "x" * 100_000
    growth_mb = growth / 2**20
    # the old code: ~680 MB; DuckDB alone holds ~200-250 MB of vectors for this query
    assert growth_mb < 450, growth_mb
