"""Testing aids: the scripted OpenAI-compatible server, pytest helpers for run_evals results, and
for cluster tests a throwaway PostgreSQL and a trace-id router."""

from ._assertions import (
    assert_passes_gates,
    assert_passes_thresholds,
    assert_score_above,
    assert_verdict,
)
from ._llm_server import Reply, ScriptedLLMServer, error, token_logprobs
from ._postgres import PostgresServer, PostgresUnavailable
from ._regression import assert_no_regression
from ._router import HashRing, TraceRouter
from ._standin import example_of, standin_reply, standin_server

__all__ = [
    "HashRing",
    "PostgresServer",
    "PostgresUnavailable",
    "Reply",
    "ScriptedLLMServer",
    "TraceRouter",
    "assert_no_regression",
    "assert_passes_gates",
    "assert_passes_thresholds",
    "assert_score_above",
    "assert_verdict",
    "error",
    "example_of",
    "standin_reply",
    "standin_server",
    "token_logprobs",
]
