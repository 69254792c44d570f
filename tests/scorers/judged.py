"""Helpers for the LLM scorer tests: a judge on the scripted server, recorded executions."""

from __future__ import annotations

from typing import Any

from tracescore.scoring import Judge


def judge(server: Any) -> Judge:
    """A judge that calls the scripted OpenAI-compatible server over HTTP."""
    return Judge(model="openai/scripted-judge", api_base=server.url)


def prompt_of(request: dict[str, Any]) -> str:
    """The last user message a request sent to the judge."""
    return str(request["messages"][-1]["content"])


def assert_recorded(result: Any, steps: list[str]) -> None:
    """Each judged step left one successful execution with usage."""
    assert sorted(result.judge) == sorted(steps)
    for step in steps:
        [execution] = result.judge[step].executions
        assert execution.status == "success"
        assert execution.usage.total_tokens > 0
