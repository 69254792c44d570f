"""The built wheel carries the dashboard: build it, install it in a fresh venv, serve, load pages.

One real ``pip wheel`` of the checkout (build isolation, so the wheel is what a user gets), one
fresh virtual environment with the wheel installed (``--no-deps``: the dependencies are those of
the test's own environment, reached through a ``.pth`` line placed *after* the fresh
site-packages, so ``tracescore`` itself comes from the wheel and nothing from the checkout),
then ``tracescore serve`` from an unrelated folder on free ports.
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import sysconfig
import time
import venv
import zipfile
from pathlib import Path

import httpx
from server_process import free_port

REPO = Path(__file__).resolve().parents[1]
WEB = REPO / "tracescore" / "_web"


def _build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    [wheel] = out.glob("tracescore-*.whl")
    return wheel


def _fresh_venv(where: Path, wheel: Path) -> Path:
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--quiet", str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    # The dependencies: this environment's site-packages, after the venv's own (a plain path in
    # a .pth file; .pth files inside it, such as the checkout's editable finder, are not run).
    (Path(purelib) / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_installed_wheel_serves_the_dashboard(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = email.message_from_bytes(
            archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
    shipped = {p.relative_to(REPO).as_posix() for p in WEB.rglob("*") if p.is_file()}
    assert shipped and shipped <= names, sorted(shipped - names)
    assert "tracescore/_data/tracescore.toml" in names
    # `tracescore demo` needs only the small extra; the license is an SPDX expression.
    assert "demo" in meta.get_all("Provides-Extra", [])
    demo = [r for r in meta.get_all("Requires-Dist", []) if "extra == \"demo\"" in r]
    assert any(r.startswith("opentelemetry-sdk") for r in demo), demo
    assert meta.get("License-Expression") == "Apache-2.0"

    python = _fresh_venv(tmp_path / "venv", wheel)
    where = subprocess.run(
        [str(python), "-c", "import tracescore, sys; print(tracescore.__file__)"],
        check=True, capture_output=True, text=True, cwd=tmp_path).stdout.strip()
    assert where.startswith(str(tmp_path / "venv")), where

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    http_port, grpc_port = free_port(), free_port()
    log_path = elsewhere / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACESCORE_")}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(tmp_path / "venv" / "bin" / "tracescore"), "serve", "--db", "t.duckdb",
             "--http-port", str(http_port), "--grpc-port", str(grpc_port)],
            cwd=elsewhere, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        index = httpx.get(f"{base}/", timeout=10)
        assert index.status_code == 200
        assert index.text == (WEB / "index.html").read_text()
        for asset in ("js/app.js", "style.css"):
            response = httpx.get(f"{base}/ui/{asset}", timeout=10)
            assert response.status_code == 200, asset
            assert response.text == (WEB / asset).read_text()
        assert "dashboard files not found" not in log_path.read_text()
    finally:
        process.terminate()
        process.wait(30)
