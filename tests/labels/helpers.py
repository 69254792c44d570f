"""What the labels tests share: numbered question/answer agent traces sent through the
OpenTelemetry SDK, a judge scorer file for ``[[scorers]]``, and a scripted judge that answers
each numbered item as the test decides (so κ is known in advance)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracescore.labels._align import REWRITE_SYSTEM
from tracescore.labels._alignment import EXAMPLES_HEADING
from tracescore.testing import Reply

JUDGE_FILE = '''
from tracescore.model import get_assistant_message, get_user_message
from tracescore.scoring import Judge, PromptStep, create_scorer

SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}},
          "required": ["score"]}


def make(api_base):
    judge = Judge(model="openai/gpt-4o-mini", api_base=api_base, api_key="unused",
                  instructions="You grade answers: score 1 when the answer is right, else 0.")
    return create_scorer("correct", "is the answer right?", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: "Question: " + get_user_message(run.input)
                   + "\\nAnswer: " + get_assistant_message(run.output), output_schema=SCHEMA))
'''
"""A judge scorer whose prompt carries the question and the answer (and so the item name)."""

ITEM = re.compile(r"\b(item-[A-Za-z0-9]+)\b")


def write_judge_file(folder: Path) -> Path:
    """The judge scorer file, for ``use = "<path>:make"``."""
    path = folder / "judge_scorer.py"
    path.write_text(JUDGE_FILE)
    return path


class ScriptedJudge:
    """Answers the judge's requests: ``verdicts[item]`` (1 or 0) per numbered item, the
    person's ``truth[item]`` instead when the system message carries few-shot examples, new
    instructions for the align rewrite; ``model`` is the model the replies report."""

    def __init__(self) -> None:
        self.verdicts: dict[str, float] = {}
        self.truth: dict[str, float] = {}
        self.model: str | None = None
        self.examples_seen = 0
        self._lock = threading.Lock()

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        messages = body.get("messages") or []
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
        prompt = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
        if system.startswith(REWRITE_SYSTEM[:40]):
            return Reply(content={"instructions": "You grade answers strictly: score 1 only "
                                  "when the answer is right, else 0."}, model=self.model)
        found = ITEM.search(prompt)
        item = found.group(1) if found else ""
        score = self.verdicts.get(item, 0.5)
        if EXAMPLES_HEADING in system:
            with self._lock:
                self.examples_seen += 1
            score = self.truth.get(item, score)
        return Reply(content=json.dumps({"score": score}), model=self.model)


def send_qa_traces(url: str, pairs: list[tuple[str, str]], *, service: str = "qa-agent"
                   ) -> list[str]:
    """One agent run per (question, answer), exported through the SDK's OTLP/HTTP exporter in
    the GenAI conventions; the trace ids, in order."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("tests.labels", "1.0")
    ids = []
    for question, answer in pairs:
        asked = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
        said = [{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                 "finish_reason": "stop"}]
        with tracer.start_as_current_span("invoke_agent qa", kind=SpanKind.INTERNAL) as agent:
            agent.set_attributes({
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "qa",
                "gen_ai.input.messages": json.dumps(asked),
                "gen_ai.output.messages": json.dumps(said)})
            with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as chat:
                chat.set_attributes({
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 40,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.input.messages": json.dumps(asked),
                    "gen_ai.output.messages": json.dumps(said)})
            ids.append(f"{agent.get_span_context().trace_id:032x}")
    provider.force_flush()
    provider.shutdown()
    return ids


def qa_pairs(names: list[str]) -> list[tuple[str, str]]:
    """A question and an answer naming each item (what the scripted judge keys on)."""
    return [(f"What is the capital of country {name}?", f"The capital of {name} is Town {i}.")
            for i, name in enumerate(names)]
