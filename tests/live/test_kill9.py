"""Exactly once under ``kill -9`` for code scorers scored in the tick (no ``pending`` row).

A real ``tracescore serve`` scores agent runs sent through the OpenTelemetry SDK exporter with
the three default code scorers in small ticks (many transactions), and is killed with SIGKILL
while it scores, four times. After the last restart every trace has, per scorer, exactly one
final decision and exactly one ``scores`` row, linked by the pair's score id.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

from server_process import sql, start_server

from tracescore.live import send_agent_traces
from tracescore.server import default_config_path

LIVE = {"interval_seconds": "0.2", "settle_seconds": "0", "batch_size": "8"}
"""The embedded default config (its three code scorers; the judge ones are off without a judge
model) with small, fast ticks: many transactions to land a kill in."""
ROUNDS = 4
PER_ROUND = 120
SCORERS = ("no-tool-errors", "tool-failures", "trajectory-efficiency")


def test_kill_9_while_code_scorers_score_leaves_each_pair_scored_exactly_once(
    tmp_path: Path,
) -> None:
    text = default_config_path().read_text()
    for key, value in LIVE.items():
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)
    config = tmp_path / "live.toml"
    config.write_text(text)
    server = start_server(tmp_path / "kill9.duckdb", args=["--config", str(config), "--no-grpc"])
    rng = random.Random(17)
    sent: list[str] = []
    try:
        for round_index in range(ROUNDS):
            sent += send_agent_traces(server.url, count=PER_ROUND, start=round_index * PER_ROUND)
            time.sleep(rng.uniform(0.0, 0.4))
            server.kill()  # SIGKILL while ticks are scoring and committing
            server.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            [[final, open_]] = sql(server, "SELECT count(*) FILTER (WHERE decision IN "
                                           "('scored', 'not_scorable', 'failed')), count(*) "
                                           "FILTER (WHERE decision IN ('pending', 'retrying')) "
                                           "FROM scoring_decisions")
            if final >= len(sent) * len(SCORERS) and open_ == 0:
                break
            time.sleep(0.5)
        decisions = sql(server, "SELECT trace_id, scorer_id, decision, score_id "
                                "FROM scoring_decisions")
        scores = sql(server, "SELECT trace_id, scorer_id, score_id, status FROM scores")
    finally:
        server.stop()
    expected = {(trace_id, scorer) for trace_id in sent for scorer in SCORERS}
    assert sorted((t, s) for t, s, _, _ in decisions) == sorted(expected)  # one decision each
    assert {d for _, _, d, _ in decisions} <= {"scored", "not_scorable"}
    assert sorted((t, s) for t, s, _, _ in scores) == sorted(expected)  # one score row each
    linked = {(t, s): score_id for t, s, _, score_id in decisions}
    assert all(linked[(t, s)] == score_id for t, s, score_id, _ in scores)
