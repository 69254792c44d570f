"""Testing aids: the scripted OpenAI-compatible server (and, later, pytest assertion helpers)."""

from ._llm_server import Reply, ScriptedLLMServer, error

__all__ = ["Reply", "ScriptedLLMServer", "error"]
