"""The scheduler's trace cache is bounded by spans as well as by traces (issue 27, item 13)."""

from __future__ import annotations

from tracescore.live._transform import TraceCache


class Loaded:
    """A stand-in value with a length, as ``Trace`` has (its span count)."""

    def __init__(self, spans: int) -> None:
        self.spans = spans

    def __len__(self) -> int:
        return self.spans


def test_the_cache_forgets_the_oldest_beyond_its_traces_or_spans() -> None:
    cache = TraceCache(4, max_spans=1000)
    for index in range(4):
        cache.put(f"t{index}", Loaded(100))
    assert len(cache) == 4 and cache.spans == 400
    cache.put("t4", Loaded(100))  # five traces: the oldest goes
    assert cache.get("t0") is None and len(cache) == 4
    cache.get("t1")  # used: now the newest
    cache.put("big", Loaded(800))  # 1,200 spans: the least recently used go until <= 1,000
    assert [t for t in ("t1", "t2", "t3", "t4", "big") if cache.get(t) is not None] == [
        "t1", "t4", "big"]
    assert cache.spans == 1000
    cache.put("huge", Loaded(5000))  # the newest stays whatever its size
    assert len(cache) == 1 and cache.get("huge") is not None and cache.spans == 5000
    cache.put("huge", Loaded(10))  # put again: counted once
    assert cache.spans == 10
