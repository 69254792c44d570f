"""Issue 27, item 10: monitors' webhook URLs against a real ``tracescore serve``.

- ``serve`` refuses at config load what cannot be a webhook (no host, credentials in the URL)
  and what a webhook must not reach (the cloud metadata address, a private address without
  ``[live] allow_private_webhooks``), with a sentence that never holds the URL's secret part.
- With private targets allowed, a breach POSTs to a loopback receiver; the failed webhook is
  recorded in ``monitor_events.error`` and the log by host only, never by its (secret) URL.

Only validation is tested for non-loopback addresses: no test sends traffic off this machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from server_process import free_port, running_server, sql

from tracescore.live import WebhookRefused, check_webhook_url, send_agent_traces

SECRET = "T0KEN-s3cr3t"

SCORERS_PY = '''
from tracescore import create_scorer

zero = create_scorer("zero", "always 0").generate_score(lambda run, results: 0.0)
'''

CONFIG = """
[live]
interval_seconds = 0.2
settle_seconds = 0.3
max_wait_seconds = 30
{live}

[[scorers]]
id = "zero"
use = "webhookscorers.py:zero"

[[monitors]]
id = "zero-drop"
scorer = "zero"
threshold = 0.5
min_samples = 1
evaluate_every = "1s"
notify = {notify}
"""


def write_config(tmp_path: Path, notify: list[str], live: str = "") -> Path:
    (tmp_path / "webhookscorers.py").write_text(SCORERS_PY)
    config = tmp_path / "tracescore.toml"
    config.write_text(CONFIG.format(notify=json.dumps(notify), live=live))
    return config


@pytest.mark.parametrize(("url", "live", "said"), [
    (f"http://169.254.169.254/latest/meta-data/{SECRET}", "allow_private_webhooks = true",
     "URL #1: webhook host 169.254.169.254 is a cloud metadata address"),
    (f"https://hook:{SECRET}@hooks.example.com/services/x", "",
     "URL #1: the webhook URL for host hooks.example.com carries credentials"),
    (f"https:///services/{SECRET}", "", "URL #1: a webhook URL needs a host"),
    (f"http://10.1.2.3/hooks/{SECRET}", "",
     "URL #1: webhook host 10.1.2.3 is a private (non-public) address; set [live] "
     "allow_private_webhooks = true"),
])
def test_serve_refuses_a_webhook_url_at_config_load(tmp_path: Path, url: str, live: str,
                                                     said: str) -> None:
    config = write_config(tmp_path, [url], live)
    done = subprocess.run(
        [sys.executable, "-m", "tracescore.cli", "serve", "--db", str(tmp_path / "w.duckdb"),
         "--http-port", str(free_port()), "--no-grpc", "--config", str(config)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[[monitors]] entry #1 (id 'zero-drop')" in done.stderr
    assert f"key 'notify': {said}" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("url", "allow", "said"), [
    ("http://[::ffff:169.254.169.254]/x", True, "a cloud metadata address"),
    ("http://169.254.10.10/x", True, "a link-local address"),
    ("http://metadata.google.internal/computeMetadata/v1/", True, "a cloud metadata service"),
    ("http://localhost:8080/x", False, "a loopback address"),
    ("http://[fd12::1]/x", False, "a private (non-public) address"),
    ("http://0.0.0.0/x", True, "not a unicast address"),
    ("ftp://example.com/x", False, "must start with http:// or https://"),
    ("http://exa mple.com/x", False, "without spaces"),
])
def test_webhook_url_checks(url: str, allow: bool, said: str) -> None:
    with pytest.raises(WebhookRefused, match=re.escape(said)):
        check_webhook_url(url, allow_private=allow)
    assert check_webhook_url("https://hooks.slack.com/services/T/B/x", allow_private=False)
    assert check_webhook_url("http://10.0.0.5:8080/hook", allow_private=True)


class Receiver:
    """A webhook receiver on 127.0.0.1: records each POST; a path containing ``fail`` gets 500."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, str, dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.posts.append((self.path, self.headers["Host"], json.loads(body)))
                self.send_response(500 if "fail" in self.path else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_failed_webhook_is_named_by_host_only(tmp_path: Path) -> None:
    receiver = Receiver()
    notify = [f"{receiver.url}/hooks/{SECRET}", f"{receiver.url}/fail/{SECRET}?key={SECRET}"]
    config = write_config(tmp_path, notify, "allow_private_webhooks = true")
    try:
        with running_server(tmp_path / "w.duckdb", args=["--config", str(config)]) as server:
            send_agent_traces(server.url, count=1)
            deadline = time.monotonic() + 60
            while sql(server, "SELECT count(*) FROM monitor_events WHERE error IS NOT NULL "
                              "OR notified_at IS NOT NULL") != [[1]]:
                assert time.monotonic() < deadline, server.log()[-3000:]
                time.sleep(0.2)
            [[state, error, notified_at]] = sql(
                server, "SELECT state, error, notified_at FROM monitor_events")
            assert state == "breached" and notified_at is None
            assert error == "webhook #2 (127.0.0.1): HTTP 500 after 3 attempt(s)"
            paths = [path for path, _, _ in receiver.posts]
            assert paths.count(f"/hooks/{SECRET}") == 1
            assert paths.count(f"/fail/{SECRET}?key={SECRET}") == 3
            assert {host for _, host, _ in receiver.posts} == {receiver.url[len("http://"):]}
            log = server.log()
            assert "monitor zero-drop: notifying failed: webhook #2 (127.0.0.1)" in log
            assert SECRET not in log
    finally:
        receiver.close()
