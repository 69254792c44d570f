"""``use_system_arrow_pool``: serve's Arrow allocator (checked in fresh processes: it is global)."""

from __future__ import annotations

import os
import subprocess
import sys

_PROBE = ("import pyarrow as pa; from tracescore.server import use_system_arrow_pool; "
          "use_system_arrow_pool(); print(pa.default_memory_pool().backend_name)")


def _backend(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    return done.stdout.strip()


def test_the_system_allocator_becomes_the_default_pool() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    assert _backend(env) == "system"


def test_a_pool_named_in_the_environment_is_kept() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    env["ARROW_DEFAULT_MEMORY_POOL"] = "mimalloc"
    assert _backend(env) == "mimalloc"
