"""Shared parts of the LLM-judged scorers: the judge, verdict words, context, prompt text."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from tracescore.scoring import Judge

from ._extract import extract_tool_results

ModelLike = str | Judge | Mapping[str, Any]


def resolve_judge(model: ModelLike, instructions: str) -> Judge:
    """A judge for a prebuilt scorer: ``model`` is a litellm model string or a ``Judge``.

    The scorer's own instructions apply unless the given judge sets ``instructions`` itself.
    """
    base = Judge(instructions=instructions)
    if isinstance(model, str):
        if not model.strip():
            raise ValueError("model must name a litellm model, e.g. 'openai/gpt-4o-mini'")
        return base.merged(Judge(model=model))
    if isinstance(model, Judge):
        if not model.model:
            raise ValueError("the Judge given as model needs a model, e.g. "
                             "Judge(model='openai/gpt-4o-mini')")
        return base.merged(model)
    if isinstance(model, Mapping):
        from tracescore.scoring._judge import as_judge

        judge = as_judge(model)
        assert judge is not None
        return resolve_judge(judge, instructions)
    raise TypeError(f"model must be a litellm model string or a Judge, got {type(model).__name__}")


def _unwrap_reason(text: str) -> str:
    """Accept a reason sent as JSON (``{"reason": "..."}``) as well as plain text."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(value, Mapping) and isinstance(value.get("reason"), str):
            return str(value["reason"])
    return text


def reason_judge(judge: Judge) -> Judge:
    """The reason step's judge override: the scorer judge's output processors, then one that
    unwraps a JSON ``{"reason": ...}`` reply into its text."""
    return Judge(output_processors=(*judge.output_processors, _unwrap_reason))


def verdict_word(value: Any) -> str:
    """A verdict as a bare lower-case word: ``" Yes. "`` → ``"yes"``; anything else as text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value if value is not None else "").strip().strip(".!\"'`").strip().lower()


def check_scale(scale: Any) -> float:
    """A positive number to multiply scores by."""
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    return float(scale)


def shown_scale(scale: float) -> str:
    """1.0 → '1', 2.5 → '2.5' (for prompts)."""
    return f"{scale:g}"


def as_context(value: Any) -> list[str]:
    """Context pieces as strings: a string is one piece; None is none."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
                for v in value]
    raise TypeError(f"context must be a list of strings, got {type(value).__name__}")


def tool_context(output: Any) -> list[str]:
    """One context piece per finished tool call in the output: ``tool_name: result``."""
    pieces = []
    for item in extract_tool_results(output):
        result = item["result"]
        text = result if isinstance(result, str) else json.dumps(
            result, ensure_ascii=False, default=str)
        pieces.append(f"{item['tool_name']}: {text}")
    return pieces


async def call_get_context(get_context: Any, run: Any, results: Any, score: float | None,
                           step: str) -> list[str]:
    """Call a user's ``get_context(run, results, score, step)``, sync or async.

    Arguments go by position; a function that only takes them by keyword
    (``def f(*, run, results, score, step)`` or ``**kwargs``) gets them by keyword.
    """
    args = (run, results, score, step)
    try:
        inspect.signature(get_context).bind(*args)
        by_keyword = False
    except TypeError:
        by_keyword = True
    except ValueError:  # no signature (some builtins): call by position
        by_keyword = False
    if by_keyword:
        value = get_context(run=run, results=results, score=score, step=step)
    else:
        value = get_context(*args)
    if inspect.isawaitable(value):
        value = await value
    return as_context(value)


def numbered(items: Sequence[str], empty: str) -> str:
    """``1. a`` lines, or ``empty`` when there are none."""
    if not items:
        return empty
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1))


def indexed(items: Sequence[str], empty: str) -> str:
    """``[0] a`` lines (0-based, as ``context_index`` counts), or ``empty`` when there are none."""
    if not items:
        return empty
    return "\n".join(f"[{i}] {item}" for i, item in enumerate(items))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return str(value)


def as_json(value: Any) -> str:
    """Readable JSON for prompts (pydantic models as their data, ``None`` fields left out)."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=_plain)
