"""``DecidedHere``: the traces a cluster node's own expansions decided, which its scans then
need not ask the shared queue about."""

from __future__ import annotations

from tracescore.live._selection import DecidedHere

V1 = frozenset({("relevancy", "v1"), ("faithfulness", "v1")})


def test_a_trace_is_held_for_the_versions_it_was_decided_for() -> None:
    here = DecidedHere()
    here.note(["a", "b"], V1)
    assert here.holds("a", V1) and here.holds("b", V1)
    assert not here.holds("c", V1), "a trace this node did not expand is asked about"
    wider = V1 | {("toxicity", "v1")}
    assert not here.holds("a", wider), "a version added since: not decided for it yet"
    here.note(["c"], wider)
    assert not here.holds("a", V1) and here.holds("c", wider), "a new set forgets the old"


def test_only_the_most_recent_traces_are_kept() -> None:
    here = DecidedHere(limit=3)
    here.note(["a", "b", "c"], V1)
    here.note(["a"], V1)  # noted again: now the newest
    here.note(["d"], V1)
    assert len(here) == 3
    assert not here.holds("b", V1), "the oldest is forgotten (asked about again)"
    assert all(here.holds(t, V1) for t in ("a", "c", "d"))
