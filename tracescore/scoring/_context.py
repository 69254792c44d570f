"""How big a judge's context is, and whether a prompt fits it.

The context size is litellm's model map's ``max_input_tokens`` for the judge's model (the local
map: nothing is fetched); a model litellm does not know has no known size, and its prompts are
sent as they are. Tokens are counted with litellm's ``token_counter`` only when a cheap bound
cannot settle it: a byte-level BPE token is at least one UTF-8 byte, so a prompt whose bytes
(plus a few tokens per message) fit is known to fit without being tokenised. Counting a large
prompt runs in a worker thread, so the event loop keeps serving other runs meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._judge import Judge
from ._structured import OutputSchema, schema_instruction

REPLY_RESERVE_TOKENS = 1_000
"""Tokens kept free for the judge's reply when its ``model_settings`` set no ``max_tokens``."""
PER_MESSAGE_TOKENS = 8
"""Tokens counted for each message's role and framing in the cheap bound."""
THREAD_CHARS = 50_000
"""Prompts longer than this (in characters) are tokenised in a worker thread."""


@functools.lru_cache(maxsize=256)
def context_window(model: str | None) -> int | None:
    """``max_input_tokens`` of ``model`` in litellm's model map (None when litellm does not
    know the model or gives no size)."""
    if not model:
        return None
    from ._judge_call import load_litellm

    try:
        info = load_litellm().get_model_info(model)
    except Exception:  # noqa: BLE001 - a model litellm does not map: size unknown
        return None
    size = info.get("max_input_tokens") or info.get("max_tokens")
    return int(size) if isinstance(size, int | float) and size > 0 else None


def reply_reserve(judge: Judge) -> int:
    """Tokens kept for the reply: the judge's ``max_tokens`` / ``max_completion_tokens``
    setting, else ``REPLY_RESERVE_TOKENS``."""
    settings = judge.model_settings or {}
    for key in ("max_completion_tokens", "max_tokens"):
        value = settings.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return REPLY_RESERVE_TOKENS


def _bound(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None,
           room: int) -> bool:
    """True when ``messages`` (and tool definitions) surely take at most ``room`` tokens: their
    UTF-8 bytes do (four bytes a character at most, so most prompts need no encoding)."""
    texts = [str(m.get("content") or "") for m in messages]
    texts += [str(call) for m in messages for call in m.get("tool_calls") or ()]
    if tools:
        texts.append(str(list(tools)))
    room -= PER_MESSAGE_TOKENS * len(messages)
    if 4 * sum(map(len, texts)) <= room:
        return True
    return sum(len(t.encode()) for t in texts) <= room


def count_tokens_now(model: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Any] | None = None) -> int:
    """The tokens of ``messages`` (and ``tools``) by litellm's ``token_counter`` for ``model``
    (its default tokenizer for a model it does not know)."""
    from ._judge_call import load_litellm

    litellm = load_litellm()
    kwargs: dict[str, Any] = {"model": model or "", "messages": list(messages)}
    if tools:
        kwargs["tools"] = list(tools)
    return int(litellm.token_counter(**kwargs))


async def count_tokens(model: str | None, messages: Sequence[Mapping[str, Any]],
                       tools: Sequence[Any] | None = None) -> int:
    """``count_tokens_now``, in a worker thread for long prompts (and litellm's first import)."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    if chars > THREAD_CHARS or "litellm" not in sys.modules:
        return await asyncio.to_thread(count_tokens_now, model, messages, tools)
    return count_tokens_now(model, messages, tools)


@dataclass(frozen=True, slots=True)
class PromptSize:
    """A prompt measured against its judge's context."""

    tokens: int | None
    """The prompt's tokens (None when it was not counted: the bound settled it, or the size is
    unknown)."""
    window: int | None
    """The judge model's ``max_input_tokens`` (None when litellm does not know the model)."""
    reserve: int
    """Tokens kept for the reply."""

    @property
    def fits(self) -> bool:
        """True unless the prompt was counted and does not leave ``reserve`` tokens free."""
        if self.window is None or self.tokens is None:
            return True
        return self.tokens + self.reserve <= self.window

    def reason(self, what: str, model: str | None) -> str:
        """The sentence a not-scorable result gives: which prompt, its size, the limit."""
        return (f"{what} needs {self.tokens:,} tokens and {self.reserve:,} are kept for the "
                f"reply, but the judge model {model} takes at most {self.window:,} input tokens "
                "(litellm's model map); a judge with a larger context, or a scorer that can "
                "navigate the run (navigate=True), can score it")


def sized_messages(judge: Judge, prompt: str, schema: OutputSchema | None
                   ) -> list[dict[str, Any]]:
    """The messages a prompt step sends, as measured: the judge's instructions and the prompt,
    with the schema instruction when there is a schema (as an injected attempt sends it; a
    native-output request is no longer)."""
    user = f"{prompt}\n\n{schema_instruction(schema)}" if schema is not None else prompt
    messages = [{"role": "system", "content": judge.instructions}] if judge.instructions else []
    messages.append({"role": "user", "content": user})
    return messages


_SCHEMA_CHARS: dict[int, tuple[OutputSchema, int]] = {}


def _schema_chars(schema: OutputSchema | None) -> int:
    """The length of a schema's instruction, worked out once per schema (kept with it)."""
    if schema is None:
        return 0
    found = _SCHEMA_CHARS.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_SCHEMA_CHARS) >= 1_024:  # scorers made over and over: forget the old ones
            _SCHEMA_CHARS.clear()
        found = _SCHEMA_CHARS[id(schema)] = (schema, len(schema_instruction(schema)))
    return found[1]


async def measure_prompt(judge: Judge, prompt: str, schema: OutputSchema | None) -> PromptSize:
    """``measure`` of a prompt step's request (``sized_messages``), its messages built only
    when the judge's context size is known and the prompt is long enough to matter."""
    window = context_window(judge.model) if "litellm" in sys.modules else -1
    if window is None:
        return PromptSize(None, None, 0)
    if window > 0:
        chars = len(prompt) + len(judge.instructions or "") + _schema_chars(schema)
        if 4 * chars + 2 * PER_MESSAGE_TOKENS + reply_reserve(judge) <= window:
            return PromptSize(None, window, reply_reserve(judge))
    return await measure(judge, sized_messages(judge, prompt, schema))


async def measure(judge: Judge, messages: Sequence[Mapping[str, Any]],
                  tools: Sequence[Any] | None = None) -> PromptSize:
    """The size of a request against ``judge``'s context (tokenised only when it might not
    fit)."""
    if "litellm" not in sys.modules:
        from ._judge_call import load_litellm

        await asyncio.to_thread(load_litellm)
    window = context_window(judge.model)
    reserve = reply_reserve(judge)
    if window is None or _bound(messages, tools, window - reserve):
        return PromptSize(None, window, reserve)
    return PromptSize(await count_tokens(judge.model, messages, tools), window, reserve)


__all__ = [
    "PromptSize",
    "context_window",
    "count_tokens",
    "count_tokens_now",
    "measure",
    "measure_prompt",
    "reply_reserve",
    "sized_messages",
]
