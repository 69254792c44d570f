"""``CostPaced``: a cluster node reads the shared open backlog (the gauges) at a pace its own
cost sets, so a large backlog does not make every tick on every node scan it."""

from __future__ import annotations

from tracescore.live._shared import OPEN_STATS_SHARE, CostPaced


def test_a_read_is_kept_for_its_cost_over_the_share() -> None:
    paced = CostPaced(0.02)
    assert not paced.fresh(("relevancy", "v1"), 0.0), "nothing read yet"
    paced.keep(("relevancy", "v1"), (5, None), started=10.0, ended=10.065)
    assert paced.fresh(("relevancy", "v1"), 13.0), "a 65 ms read is kept 3.25 s"
    assert not paced.fresh(("relevancy", "v1"), 13.4)
    assert not paced.fresh(("relevancy", "v2"), 10.1), "other versions are read"


def test_a_cheap_read_is_made_again_at_the_next_tick() -> None:
    paced = CostPaced(OPEN_STATS_SHARE)
    paced.keep("versions", (0, None), started=20.0, ended=20.0002)
    assert paced.value == (0, None)
    assert not paced.fresh("versions", 20.05), "a 0.2 ms read is kept 10 ms: every tick reads"
