"""run_evals(store=...): every scorer run lands in ``scores`` (source 'eval', the run's
eval_run_id) with its judge executions, read back with SQL; trace-backed trajectories come
from spans the agent itself exported into the store through the real OpenTelemetry SDK."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals_helpers import contains, fixed, scorable_when, traced_weather_reply

from tracescore.evals import AgentResponse, AgentScorerConfig, run_evals
from tracescore.model import get_user_message
from tracescore.scoring import Judge, PromptStep, create_scorer
from tracescore.store import Store
from tracescore.testing import Reply


def echo(text: str) -> str:
    return f"echo {text}"


async def test_scores_are_written_to_a_database_path_and_read_back_with_sql(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.set_default(lambda request: Reply(content={"score": 0.75}, prompt_tokens=40,
                                                 completion_tokens=6))
    judged = create_scorer(
        "judged", "an LLM judge",
        judge=Judge(model="openai/scripted", instructions="You grade answers.",
                    api_base=llm_server.url),
    ).generate_score(PromptStep("score it", lambda run, results: "Score the answer 0..1."))
    broken = create_scorer("broken", "x").generate_score(
        lambda run, results: 1 / 0 if get_user_message(run.input) == "b" else 1.0)
    short_only = scorable_when("short-only", lambda run: len(get_user_message(run.input)) < 2)
    db = tmp_path / "evals.duckdb"

    result = await run_evals(
        echo, [{"input": "a", "ground_truth": "echo a"}, {"input": "b"}, {"input": "long"}],
        scorers=[{"scorer": judged, "threshold": 0.5}, broken, short_only],
        gates=[contains("echoes", "echo")],
        store=str(db),
    )
    assert result.store_errors == []
    assert result.scores["judged"] == 0.75

    with Store(db) as store:
        rows = store.query(
            "SELECT scorer_id, status, score, source, eval_run_id, judge_input_tokens, "
            "judge_total_tokens, json_extract(metadata, '$.item_index')::INT AS item, "
            "json_extract_string(metadata, '$.role') AS role, ground_truth "
            "FROM scores ORDER BY item, role, scorer_id"
        )
        records = [dict(zip(rows.columns, row, strict=True)) for row in rows.rows]
        assert {r["source"] for r in records} == {"eval"}
        assert {r["eval_run_id"] for r in records} == {result.eval_run_id}
        # 3 items x (1 gate + 3 scorers) runs reached a scorer.
        assert len(records) == 12
        by_key = {(r["item"], r["scorer_id"]): r for r in records}
        assert by_key[(0, "echoes")]["role"] == "gate"
        assert by_key[(0, "judged")]["status"] == "success"
        assert by_key[(0, "judged")]["score"] == 0.75
        assert by_key[(0, "judged")]["judge_input_tokens"] == 40
        assert by_key[(0, "judged")]["judge_total_tokens"] == 46
        assert json.loads(by_key[(0, "judged")]["ground_truth"]) == "echo a"
        assert by_key[(1, "broken")]["status"] == "failed"
        assert by_key[(1, "broken")]["score"] is None
        assert by_key[(2, "short-only")]["status"] == "not_scorable"

        executions = store.query(
            "SELECT j.step, j.status, j.input_tokens, j.output_tokens, s.scorer_id "
            "FROM judge_executions j JOIN scores s USING (score_id) ORDER BY s.created_at"
        )
        assert len(executions.rows) == 3
        assert {tuple(row) for row in executions.rows} == {
            ("generate_score", "success", 40, 6, "judged")}
        error = store.query(
            "SELECT json_extract_string(error, '$.cause.name') FROM scores "
            "WHERE status = 'failed'"
        )
        assert error.rows == [["ZeroDivisionError"]]


async def test_an_open_store_is_used_and_left_open(tmp_path: Path) -> None:
    with Store(tmp_path / "shared.duckdb") as store:
        first = await run_evals(echo, [{"input": "x"}], scorers=[fixed("f", 0.5)], store=store)
        second = await run_evals(echo, [{"input": "y"}], scorers=[fixed("f", 1.0)], store=store)
        counts = store.query(
            "SELECT eval_run_id, count(*), avg(score) FROM scores GROUP BY 1 ORDER BY 3")
        assert counts.rows == [[first.eval_run_id, 1, 0.5], [second.eval_run_id, 1, 1.0]]


class _StoreExporter:
    """An OpenTelemetry SpanExporter that writes finished spans into a tracescore store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        from tracescore.ingest import span_dicts_from_otlp

        body = encode_spans(spans).SerializeToString()
        self._store.write_spans_sync(span_dicts_from_otlp(body, project="evals-test"))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class TracedWeatherAgent:
    """An agent traced with the OTel SDK (GenAI conventions) into the store; its returned
    messages carry no tool calls, so only the trace shows that it called get_weather."""

    def __init__(self, store: Store) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(_StoreExporter(store)))
        self.tracer = self.provider.get_tracer("evals-test")

    def generate(self, input: Any, **options: Any) -> AgentResponse:
        self.last = traced_weather_reply(self.tracer, input)
        return self.last


def _tool_names(steps: Sequence[Any]) -> list[str]:
    names: list[str] = []
    for step in steps:
        if step.step_type == "tool_call":
            names.append(step.name)
        names.extend(_tool_names(step.children or []))
    return names


async def test_trajectory_comes_from_the_trace_when_the_run_was_traced_into_the_store(
    tmp_path: Path,
) -> None:
    seen: list[Any] = []

    def called_weather(run: Any, results: Any) -> float:
        seen.append(run.output)
        return 1.0 if "get_weather" in _tool_names(run.output.steps) else 0.0

    scorer = create_scorer("called-weather", "x").generate_score(called_weather)
    with Store(tmp_path / "traced.duckdb") as store:
        agent = TracedWeatherAgent(store)
        traced = await run_evals(agent, [{"input": "Paris"}],
                                 scorers=AgentScorerConfig(trajectory=[scorer]), store=store)
        untraced = await run_evals(agent, [{"input": "Paris"}],
                                   scorers=AgentScorerConfig(trajectory=[scorer]))
        rows = store.query("SELECT trace_id, span_id FROM scores")
    assert traced.scores == {"trajectory": {"called-weather": 1.0}}
    tool_step = seen[0].steps[0]
    assert (tool_step.step_type, tool_step.tool_args) == ("tool_call", {"city": "Paris"})
    # Without the store the trajectory comes from the messages, which show no tool call.
    assert untraced.scores == {"trajectory": {"called-weather": 0.0}}
    # The score row points at the traced agent run (the first run's trace and span).
    first_trace = traced.items[0].trace_id
    assert first_trace is not None and first_trace != agent.last.trace_id
    assert len(rows.rows) == 1 and rows.rows[0][0] == first_trace
    assert rows.rows[0][1] is not None and len(rows.rows[0][1]) == 16
