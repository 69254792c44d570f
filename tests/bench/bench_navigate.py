"""Benchmark: judge tokens per trace, navigating judge against a whole-trace prompt (issue 30).

For the largest captured trace (``py-langgraph-openllmetry`` workflow, 29 spans) and a 401-span
trace made by repeating a captured agent loop (``py-openinference-openai`` turn 1, one tool call
failing), this prints:

- the whole-trace prompt: the trace judge's prompt with every step in full (input, output,
  error, details; what a judge that does not navigate is sent), in tokens, and whether it fits
  gpt-4o-mini (128k) and gpt-4 (8,192);
- the navigating judge (``create_trace_judge``): a scripted judge that reads what a careful
  judge would (a search, then the two or three steps it points to) and answers; the tokens of
  every request it sent, summed (the judge's input tokens for the trace), the largest single
  request, and the requests made.

Tokens are counted on the requests as sent (messages and tool definitions) with litellm's
``token_counter`` for gpt-4o-mini; the scripted judge's own usage figures are not used. The
whole-trace prompt is the baseline, measured in the same run. Nothing is asserted.

Run: .venv/bin/python tests/bench/bench_navigate.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "scorers")]
os.environ.setdefault("OPENAI_API_KEY", "sk-scripted")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agent_runs import LARGEST, repeated_rows, rows_of, traced_run  # noqa: E402

from tracescore.model import ScorerRun  # noqa: E402
from tracescore.scorers import create_trace_judge  # noqa: E402
from tracescore.scorers._builder import Judged  # noqa: E402
from tracescore.scorers._trace_judge import TRACE_JUDGE, TRACE_JUDGE_INSTRUCTIONS  # noqa: E402
from tracescore.scoring import Judge, count_tokens  # noqa: E402
from tracescore.scoring._context import count_tokens_now  # noqa: E402
from tracescore.scoring._structured import as_output_schema, schema_instruction  # noqa: E402
from tracescore.testing import Reply, ScriptedLLMServer  # noqa: E402

MODEL = "openai/gpt-4o-mini"
CRITERION = "Every tool call succeeded, or the agent retried a failed one."
VERDICT = {"reasoning": "read the tool steps", "satisfied": True, "evidence": []}


def whole_prompt_tokens(run: ScorerRun) -> int:
    """Tokens of the trace judge's prompt with the whole trace in it (not navigating)."""
    assert TRACE_JUDGE.analyze is not None
    judged = Judged(run=run, results=None, preprocess=None, analyze=None,  # type: ignore[arg-type]
                    options={"criterion": CRITERION})
    prompt = TRACE_JUDGE.analyze.prompt(judged) or ""
    schema = as_output_schema(TRACE_JUDGE.analyze.schema, name="analyze")  # type: ignore[arg-type]
    messages = [{"role": "system", "content": TRACE_JUDGE_INSTRUCTIONS},
                {"role": "user", "content": f"{prompt}\n\n{schema_instruction(schema)}"}]
    return count_tokens_now(MODEL, messages)


def reads_for(run: ScorerRun, query: str, wanted: int) -> list[Reply]:
    """The scripted judge's requests: search, then read the first ``wanted`` hits, answer."""
    from tracescore.scorers import view_of
    from tracescore.scorers._trace_tools import search_trace

    hits = [line.split(" ", 1)[0] for line in search_trace(view_of(run), query).splitlines()
            if line.startswith("s")][:wanted]
    replies = [Reply(tool_calls=[{"name": "search_trace", "arguments": {"query": query}}])]
    replies += [Reply(tool_calls=[{"name": "read_step", "arguments": {"step": hit}}])
                for hit in hits]
    return [*replies, Reply(content=VERDICT)]


def navigated_tokens(server: ScriptedLLMServer, run: ScorerRun, replies: list[Reply]
                     ) -> tuple[int, int, int, Any]:
    """(input tokens summed over the requests, the largest request, requests, result)."""
    server.reset()
    server.script(*replies)
    judge = Judge(model=MODEL, api_base=server.url)
    result = create_trace_judge(judge, criterion=CRITERION).run_sync(run)
    import asyncio

    sizes = [asyncio.run(count_tokens(MODEL, body["messages"], body.get("tools")))
             for body in server.requests]
    return sum(sizes), max(sizes), len(sizes), result


def main() -> None:
    cases = [
        ("largest capture (langgraph-openllmetry workflow)", traced_run(rows_of(*LARGEST), None),
         "temperature", 3),
        ("401-span repeated agent loop", traced_run(repeated_rows(), None),
         "upstream timeout", 1),
    ]
    print(f"{'trace':<50} {'steps':>5} {'whole prompt':>13} {'navigating':>11} "
          f"{'largest req':>11} {'requests':>8} {'ratio':>6}")
    with ScriptedLLMServer() as server:
        for label, run, query, wanted in cases:
            document = run.request_context["trace_document"]()  # type: ignore[index]
            whole = whole_prompt_tokens(run)
            total, largest, requests, result = navigated_tokens(
                server, run, reads_for(run, query, wanted))
            assert result.score == 1.0, result.not_scorable
            print(f"{label:<50} {len(document['steps']):>5} {whole:>13,} {total:>11,} "
                  f"{largest:>11,} {requests:>8} {total / whole:>6.2f}")
    print("whole prompt fits gpt-4 (8,192 input tokens) only when under ~7,000 tokens (1,000 "
          "kept for the reply); the navigating judge's largest request must fit instead.")


if __name__ == "__main__":
    main()
