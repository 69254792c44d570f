"""Shared parts of the LLM-judged scorers: the judge, verdict words, context, output schemas."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tracescore.scoring import Judge, PromptStep, Scorer, create_scorer

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


def read_options(options: Mapping[str, Any] | None, allowed: tuple[str, ...],
                 factory: str) -> dict[str, Any]:
    """``options`` as a dict, refusing keys the factory does not know (typos fail loudly)."""
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(allowed))
    if unknown:
        raise TypeError(f"{factory}: unknown option(s) {', '.join(unknown)}; "
                        f"use {', '.join(allowed)}")
    return opts


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


def as_json(value: Any) -> str:
    """Compact, readable JSON for prompts."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def list_schema(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """``{"<key>": [item, ...]}`` as a JSON Schema."""
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": item}},
        "required": [key],
    }


TEXT_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
CLAIMS_SCHEMA = list_schema("claims", {"type": "string"})
STATEMENTS_SCHEMA = list_schema("statements", {"type": "string"})


def verdicts_schema(key: str, *, subject: str, verdict: str, words: str) -> dict[str, Any]:
    """``{"<key>": [{"<subject>", "<verdict>": words, "reason"}, ...]}`` as a JSON Schema; only
    the verdict is required."""
    return list_schema(key, {
        "type": "object",
        "properties": {
            subject: TEXT_OR_NULL,
            verdict: {"type": "string", "description": words},
            "reason": TEXT_OR_NULL,
        },
        "required": [verdict],
    })


def step_items(step_result: Any, key: str) -> list[Any]:
    """The list under ``key`` of a step's ``{"<key>": [...]}`` result (empty when missing)."""
    return (step_result or {}).get(key) or []


def weighted_share(items: Sequence[Mapping[str, Any]], key: str,
                   weights: Mapping[str, float]) -> float:
    """Sum of the weights of each item's verdict word (``verdict_word(item[key])``; a word not
    in ``weights`` counts 0) over the number of items; 0 for no items."""
    if not items:
        return 0.0
    return sum(weights.get(verdict_word(item.get(key)), 0.0) for item in items) / len(items)


def judged_scorer(
    scorer_id: str,
    description: str,
    *,
    name: str,
    judge: Judge,
    preprocess: PromptStep,
    analyze: PromptStep,
    generate_score: Any,
    reason_prompt: Any,
) -> Scorer[Any, Any]:
    """The shape every prebuilt LLM scorer shares: two prompt steps, a code score, then a
    prompt step that explains the score with the judge's reply unwrapped to text."""
    return (
        create_scorer(scorer_id, description, name=name, judge=judge, type="agent")
        .preprocess(preprocess)
        .analyze(analyze)
        .generate_score(generate_score)
        .generate_reason(PromptStep("Explain the score", reason_prompt,
                                    judge=reason_judge(judge)))
    )
