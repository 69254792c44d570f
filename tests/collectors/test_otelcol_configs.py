"""collectors/otelcol: the Collector configurations parse, are wired, and set what tracescore needs.

No Collector binary runs here, so these check the YAML the way the Collector would resolve it:
``${env:NAME:-default}`` substitution, every pipeline component defined, and the keys that
matter (gzip, retries, the auth and project headers, traceID routing, the backend list).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

OTELCOL = Path(__file__).resolve().parents[2] / "collectors" / "otelcol"
_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load(name: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Parse a config and substitute ${env:NAME:-default} like the Collector does."""
    text = (OTELCOL / name).read_text()
    text = _ENV_REF.sub(lambda m: (env or {}).get(m.group(1), m.group(2) or ""), text)
    config = yaml.safe_load(text)
    assert isinstance(config, dict)
    return config


def components(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of every component the pipelines reference."""
    refs = []
    for pipeline in config["service"]["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            refs += [(kind, name) for name in pipeline.get(kind, [])]
    return refs


@pytest.mark.parametrize("name", ["forward.yaml", "loadbalancing.yaml", "cluster.yaml"])
def test_every_pipeline_component_is_defined_and_used(name: str) -> None:
    config = load(name)
    refs = components(config)
    for kind, component in refs:
        assert component in (config.get(kind) or {}), f"{name}: {kind}.{component} is not defined"
    for kind in ("receivers", "processors", "exporters"):
        for component in config.get(kind) or {}:
            assert (kind, component) in refs, f"{name}: {kind}.{component} is defined but unused"
    pipelines = config["service"]["pipelines"]
    assert {"traces", "logs"} <= set(pipelines), "GenAI events arrive as logs: forward both"
    for pipeline in pipelines.values():
        assert pipeline["processors"][0] == "memory_limiter"  # the Collector wants it first
        assert "batch" in pipeline["processors"]


@pytest.mark.parametrize("name", ["forward.yaml", "loadbalancing.yaml", "cluster.yaml"])
def test_receiver_takes_otlp_grpc_and_http_on_the_standard_ports(name: str) -> None:
    protocols = load(name)["receivers"]["otlp"]["protocols"]
    assert protocols["grpc"]["endpoint"].endswith(":4317")
    assert protocols["http"]["endpoint"].endswith(":4318")


def test_forward_exports_gzip_protobuf_with_retries_and_tracescore_headers() -> None:
    env = {"TRACESCORE_ENDPOINT": "http://ts.example:4318", "TRACESCORE_API_KEY": "k-123",
           "TRACESCORE_PROJECT": "checkout"}
    exporter = load("forward.yaml", env)["exporters"]["otlphttp/tracescore"]
    assert exporter["endpoint"] == "http://ts.example:4318"
    assert exporter["encoding"] == "proto"
    assert exporter["compression"] == "gzip"
    assert exporter["retry_on_failure"]["enabled"] is True
    assert exporter["sending_queue"]["enabled"] is True
    assert exporter["headers"] == {"authorization": "Bearer k-123",
                                   "x-tracescore-project": "checkout"}


def test_forward_defaults_point_at_a_local_tracescore_base_url() -> None:
    exporter = load("forward.yaml")["exporters"]["otlphttp/tracescore"]
    url = urlparse(exporter["endpoint"])
    assert (url.scheme, url.port) == ("http", 4318)
    assert url.path in ("", "/"), "otlphttp appends /v1/traces itself: give the base URL"
    assert exporter["headers"]["x-tracescore-project"] == "default"


def test_loadbalancing_routes_by_trace_id_to_every_instance_over_grpc() -> None:
    config = load("loadbalancing.yaml", {"TRACESCORE_API_KEY": "k-9"})
    exporter = config["exporters"]["loadbalancing"]
    assert exporter["routing_key"] == "traceID"
    otlp = exporter["protocol"]["otlp"]
    assert "endpoint" not in otlp, "the loadbalancing exporter sets each backend's endpoint"
    assert otlp["compression"] == "gzip"
    assert otlp["tls"]["insecure"] is True
    assert otlp["retry_on_failure"]["enabled"] is True
    assert otlp["headers"]["authorization"] == "Bearer k-9"
    hostnames = exporter["resolver"]["static"]["hostnames"]
    assert len(hostnames) >= 2
    assert len(set(hostnames)) == len(hostnames)
    for host in hostnames:
        assert re.fullmatch(r"[\w.-]+:\d+", host), f"{host}: want host:port (no scheme)"


def test_cluster_routes_by_trace_id_to_the_nodes_found_by_dns() -> None:
    config = load("cluster.yaml", {"TRACESCORE_API_KEY": "k-9",
                                   "TRACESCORE_NODES_DNS": "nodes.example.internal"})
    exporter = config["exporters"]["loadbalancing"]
    assert exporter["routing_key"] == "traceID"
    otlp = exporter["protocol"]["otlp"]
    assert "endpoint" not in otlp, "the loadbalancing exporter sets each node's endpoint"
    assert otlp["compression"] == "gzip"
    assert otlp["retry_on_failure"]["enabled"] is True
    assert otlp["headers"]["authorization"] == "Bearer k-9"
    dns = exporter["resolver"]["dns"]
    assert dns["hostname"] == "nodes.example.internal"
    assert dns["port"] == 4317
    assert load("cluster.yaml")["exporters"]["loadbalancing"]["resolver"]["dns"]["hostname"]
