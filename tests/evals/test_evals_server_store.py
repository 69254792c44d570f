"""run_evals(store="http://...") against a real ``tracescore serve``: the agent exports its spans
with the OpenTelemetry SDK's OTLP/HTTP exporter, run_evals reads the trajectory back through
/api/sql and posts its scores to /api/scores; both are read back with SQL over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from evals_helpers import traced_weather_reply
from server_process import running_server

from tracescore.evals import AgentResponse, AgentScorerConfig, run_evals
from tracescore.scoring import create_scorer

API_KEY = "evals-secret"


class ExportingAgent:
    """Traced with the real OTLP/HTTP exporter into the server (GenAI conventions)."""

    def __init__(self, url: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.provider = TracerProvider(resource=Resource.create({"service.name": "evals"}))
        exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces",
                                    headers={"Authorization": f"Bearer {API_KEY}"})
        self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("evals-test")

    def generate(self, input: Any, **options: Any) -> AgentResponse:
        return traced_weather_reply(self.tracer, input)


async def test_scores_are_posted_to_a_running_server(tmp_path: Path) -> None:
    called = create_scorer("called-weather", "x").generate_score(
        lambda run, results: 1.0 if [s.name for s in run.output.steps] == ["get_weather"]
        else 0.0)
    with running_server(tmp_path / "db" / "tracescore.duckdb", api_key=API_KEY) as server:
        agent = ExportingAgent(server.url)
        try:
            result = await run_evals(
                agent, [{"input": "Paris"}, {"input": "Lima"}],
                scorers=AgentScorerConfig(trajectory=[called]),
                store=server.url, store_api_key=API_KEY,
            )
        finally:
            agent.provider.shutdown()
        response = httpx.post(
            f"{server.url}/api/sql",
            json={"sql": "SELECT scorer_id, score, source, eval_run_id, trace_id FROM scores "
                         "ORDER BY json_extract(metadata, '$.item_index')::INT"},
            headers=server.headers, timeout=30,
        )
    assert result.store_errors == []
    assert result.scores == {"trajectory": {"called-weather": 1.0}}  # from the stored traces
    assert response.status_code == 200, response.text
    assert response.json()["rows"] == [
        ["called-weather", 1.0, "eval", result.eval_run_id, item.trace_id]
        for item in result.items
    ]


async def test_an_unreachable_server_is_reported_not_raised(tmp_path: Path) -> None:
    from server_process import free_port

    result = await run_evals(lambda text: text, [{"input": "x"}],
                             scorers=[create_scorer("f", "x").generate_score(lambda r, s: 1.0)],
                             store=f"http://127.0.0.1:{free_port()}")
    assert result.scores == {"f": 1.0}
    assert len(result.store_errors) == 1 and "item 0" in result.store_errors[0]
