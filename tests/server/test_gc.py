"""``tune_gc``: the start-up step of ``serve`` (its last lifespan hook, ``gc_tuned``) that
freezes start-up objects and raises the young generation's threshold. Run in a fresh
interpreter: it changes the process."""

from __future__ import annotations

import json
import subprocess
import sys

from tracescore.server._gc import GEN0_THRESHOLD

PROBE = """
import asyncio, gc, json
from tracescore.server._gc import gc_tuned
before = gc.get_threshold()
frozen_before = gc.get_freeze_count()
async def main():
    async with gc_tuned(None):
        return gc.get_threshold(), gc.get_freeze_count()
after, frozen = asyncio.run(main())
print(json.dumps({"before": before, "after": after, "frozen_before": frozen_before,
                  "frozen": frozen}))
"""


def test_the_serve_hook_freezes_and_raises_only_the_young_threshold() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True,
                          text=True)
    out = json.loads(done.stdout)
    assert out["before"][0] == 700  # Python's default, untouched until the hook runs
    assert out["after"] == [GEN0_THRESHOLD, *out["before"][1:]]
    assert out["frozen_before"] == 0 and out["frozen"] > 1000  # the imported modules' objects
