"""``tracescore.testing.PostgresServer``: the throwaway PostgreSQL the cluster suite and the
cluster benchmarks run on."""

from __future__ import annotations

import psycopg

from tracescore.testing import PostgresServer


def test_extra_settings_reach_the_server_and_it_is_gone_after_the_block() -> None:
    with PostgresServer(settings={"work_mem": "7MB", "application_name": "a b"}) as pg:
        dsn = pg.create_database("settings_check")
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SHOW work_mem").fetchone() == ("7MB",)
            assert conn.execute("SHOW application_name").fetchone() == ("a b",)
        data = pg.data_dir
    assert not data.exists()
