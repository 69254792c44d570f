"""Testing aids: the scripted OpenAI-compatible server and pytest helpers for run_evals results."""

from ._assertions import (
    assert_passes_gates,
    assert_passes_thresholds,
    assert_score_above,
    assert_verdict,
)
from ._llm_server import Reply, ScriptedLLMServer, error, token_logprobs
from ._regression import assert_no_regression
from ._standin import example_of, standin_reply, standin_server

__all__ = [
    "Reply",
    "ScriptedLLMServer",
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
