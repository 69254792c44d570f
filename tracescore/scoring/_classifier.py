"""``create_classifier_scorer``: the judge answers one classification question about a run.

Three kinds of question, each turned into a 0-1 score:

- ``choices``: the judge picks one named choice; ``scores`` maps every choice to its score.
- ``levels``: the judge picks level ``k`` of ``n`` ordered levels (worst first); score ``k/(n-1)``.
  The levels are named (a list, or name -> description), or only counted (``levels=5``: 0 to 4).
- ``boolean``: the judge answers true or false; the score is P(true), read from the reply's
  token log-probabilities when the provider returns them, else 1 for true and 0 for false.

The analyze step is the judge call (its result is the evidence: the question, the answer and,
for a boolean, the probability and where it came from); score and reason are code.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from tracescore.model import ScorerRun, Trajectory, get_assistant_message, get_user_message

from ._errors import ScorerDefinitionError
from ._judge import Judge, as_judge
from ._scorer import PrepareRun, Scorer, ScorerType, create_scorer
from ._steps import PromptStep

INSTRUCTIONS = (
    "You classify AI agent runs. You are given one question, the answers allowed, and the "
    "material to judge. Read the material closely, decide which allowed answer fits it best, "
    "and reply with that answer only, in the requested JSON shape."
)

TOP_LOGPROBS = 5
"""Alternatives asked per token for a boolean question (P(true) reads the answer token's)."""

MAX_LEVELS = 101
"""The most levels ``levels=N`` may count (0 to 100)."""

Kind = Literal["choice", "level", "boolean"]
StateSelector = Callable[[ScorerRun], Any]


def _fail(scorer_id: str, message: str) -> ScorerDefinitionError:
    return ScorerDefinitionError(f"classifier scorer {scorer_id!r}: {message}")


def _named(value: Sequence[str] | Mapping[str, str], what: str, scorer_id: str
           ) -> dict[str, str]:
    """Names (→ descriptions) from a list of names or a name → description mapping."""
    if isinstance(value, str):
        raise _fail(scorer_id, f"{what} is a list of names or a name -> description dict, "
                               f"not one string")
    pairs = (list(value.items()) if isinstance(value, Mapping)
             else [(name, "") for name in value])
    named: dict[str, str] = {}
    for name, description in pairs:
        if not isinstance(name, str) or not name.strip():
            raise _fail(scorer_id, f"every entry of {what} needs a non-empty name, got {name!r}")
        if name in named:
            raise _fail(scorer_id, f"{what} names {name!r} twice")
        named[name] = str(description or "")
    if len(named) < 2:
        raise _fail(scorer_id, f"{what} needs at least two entries, got {len(named)}")
    return named


def _counted_levels(count: int, scorer_id: str) -> dict[str, str]:
    """Levels ``0`` … ``count - 1`` (worst to best) for ``levels=count``."""
    if isinstance(count, bool) or not 2 <= count <= MAX_LEVELS:
        raise _fail(scorer_id, f"levels= as a count needs 2 to {MAX_LEVELS} levels, got "
                               f"{count!r}; or give their names, worst first")
    named = {str(k): "" for k in range(count)}
    named["0"], named[str(count - 1)] = "the worst", "the best"
    return named


def _check_scores(scores: Any, choices: Mapping[str, str], scorer_id: str) -> dict[str, float]:
    """The choice → score map: every choice exactly once, each a number in 0-1."""
    if not isinstance(scores, Mapping):
        raise _fail(scorer_id, "a choices question needs scores={choice: score, ...} covering "
                               f"every choice ({', '.join(choices)})")
    missing = [c for c in choices if c not in scores]
    unknown = [str(c) for c in scores if c not in choices]
    numbers = {c: scores[c] for c in choices if c in scores}
    not_numbers = [c for c, v in numbers.items() if isinstance(v, bool)
                   or not isinstance(v, int | float) or not math.isfinite(v)]
    outside = [c for c, v in numbers.items() if c not in not_numbers and not 0 <= v <= 1]
    problems = [f"{label}: {', '.join(names)}" for label, names in (
        ("missing", missing), ("unknown", unknown), ("not a finite number", not_numbers),
        ("outside 0-1", outside)) if names]
    if problems:
        raise _fail(scorer_id, "scores must give every choice a score from 0 to 1 ("
                               + "; ".join(problems) + ")")
    return {c: float(v) for c, v in numbers.items()}


def _listing(named: Mapping[str, str], *, numbered: bool) -> str:
    lines = []
    for i, (name, description) in enumerate(named.items()):
        label = f"{i}. {name}" if numbered else f"- {name}"
        lines.append(f"{label}: {description}" if description else label)
    return "\n".join(lines)


def _default_state(run: ScorerRun) -> dict[str, str]:
    output = run.output.raw_output if isinstance(run.output, Trajectory) else run.output
    return {"input": get_user_message(run.input), "output": get_assistant_message(output)}


def _rendered(state: Any) -> str:
    if isinstance(state, str):
        return state
    return json.dumps(state, ensure_ascii=False, indent=2, default=str)


def _is_word(token: Any, word: str) -> bool:
    return isinstance(token, str) and token.strip().strip('"').lower() == word


def probability_of_true(logprobs: Sequence[Mapping[str, Any]] | None) -> float | None:
    """P(true) from the reply's token log-probabilities, or None when they do not tell.

    The answer token is the first token reading ``true`` or ``false``; the probabilities of
    the ``true`` and ``false`` alternatives at that position are normalised over the two when
    both are listed; when only one is, the other gets the rest of the mass.
    """
    for entry in logprobs or ():
        token = entry.get("token")
        if not (_is_word(token, "true") or _is_word(token, "false")):
            continue
        candidates = [(token, entry.get("logprob"))]
        candidates += [(t.get("token"), t.get("logprob")) for t in entry.get("top_logprobs") or ()]
        p_true = p_false = 0.0
        seen: set[Any] = set()
        for text, logprob in candidates:
            if text in seen or not isinstance(logprob, int | float):
                continue
            seen.add(text)
            if _is_word(text, "true"):
                p_true += math.exp(logprob)
            elif _is_word(text, "false"):
                p_false += math.exp(logprob)
        if p_true and p_false:
            return p_true / (p_true + p_false)
        return p_true if p_true else 1.0 - p_false
    return None


def create_classifier_scorer(
    id: str,  # noqa: A002 - the public name
    *,
    judge: Judge | str | Mapping[str, Any],
    question: str,
    choices: Sequence[str] | Mapping[str, str] | None = None,
    levels: int | Sequence[str] | Mapping[str, str] | None = None,
    boolean: bool | Mapping[str, str] = False,
    scores: Mapping[str, float] | None = None,
    state: StateSelector | None = None,
    name: str | None = None,
    description: str | None = None,
    type: ScorerType | None = None,  # noqa: A002 - the public name
    prepare_run: PrepareRun | None = None,
) -> Scorer[Any, Any]:
    """A scorer whose judge answers one classification question about the run.

    Args:
        id: the scorer id.
        judge: a litellm model string, a ``Judge`` or its dict; the classifier's own
            instructions apply unless the judge sets ``instructions``.
        question: what to ask, e.g. ``"Is the answer factually correct?"``.
        choices: the choice names (a list, or a name -> description dict); needs ``scores``.
        levels: ordered level names, worst first (a list, or name -> description), or how
            many levels there are (``levels=5``: levels 0 to 4); level ``k`` of ``n`` scores
            ``k/(n-1)``.
        boolean: True (or ``{"true": description, "false": description}``) for a yes/no
            question; the score is P(true) from the reply's logprobs when the provider returns
            them, else 1 (true) or 0 (false).
        scores: choice -> score in 0-1, covering every choice exactly (choices only).
        state: ``state(run)`` (sync or async) -> the material the judge reads (a string, or
            anything JSON renders); default ``{"input": user message, "output": assistant text}``.
        name, description, type, prepare_run: as for ``create_scorer``.

    Exactly one of ``choices``, ``levels`` and ``boolean`` is given. A wrong question or
    score map raises ``ScorerDefinitionError`` (a ``ValueError``) here, not at run time.
    The reason reads ``Classifier question '<question>' selected '<answer>' (score: <s>).``;
    the score is not rounded.
    """
    if not isinstance(id, str) or not id.strip():
        raise ScorerDefinitionError("create_classifier_scorer needs an id, e.g. "
                                    "create_classifier_scorer('factual', judge=..., ...)")
    if not isinstance(question, str) or not question.strip():
        raise _fail(id, "question must be the question text, e.g. 'Is the answer correct?'")
    given = [k for k, v in (("choices", choices), ("levels", levels), ("boolean", boolean))
             if v is not None and v is not False]
    if len(given) != 1:
        raise _fail(id, "give exactly one of choices=, levels= or boolean=True"
                        + (f" (got {', '.join(given)})" if given else ""))
    kind: Kind
    if choices is not None:
        kind = "choice"
        named = _named(choices, "choices", id)
        score_map = _check_scores(scores, named, id)
        schema: dict[str, Any] = {"choice": {"type": "string", "enum": list(named)}}
        ask = "Pick exactly one of these choices and reply with its name:\n" + _listing(
            named, numbered=False)
    else:
        if scores is not None:
            raise _fail(id, f"scores= only applies to choices; a {given[0]} question scores "
                            "itself")
        score_map = {}
        if levels is not None:
            kind = "level"
            if isinstance(levels, int):
                named = _counted_levels(levels, id)
                ask = (f"Pick the level that fits best, from 0 (the worst) to {levels - 1} (the "
                       "best), and reply with its number.")
            else:
                named = _named(levels, "levels", id)
                ask = ("Pick the level that fits best (they go from worst to best) and reply "
                       "with its number:\n" + _listing(named, numbered=True))
            schema = {"level": {"type": "integer", "minimum": 0, "maximum": len(named) - 1}}
        else:
            kind = "boolean"
            named = {"true": "", "false": ""}
            if isinstance(boolean, Mapping):
                unknown = sorted(set(map(str, boolean)) - {"true", "false"})
                if unknown:
                    raise _fail(id, "boolean= takes True or {'true': ..., 'false': ...}; "
                                    f"unknown key(s) {', '.join(unknown)}")
                named.update({k: str(v) for k, v in boolean.items()})
            schema = {"answer": {"type": "boolean"}}
            ask = "Answer true or false:\n" + _listing(named, numbered=False)
    key = next(iter(schema))
    output_schema = {"type": "object", "properties": schema, "required": [key]}
    select = state or _default_state
    base_judge = Judge(instructions=INSTRUCTIONS)
    if isinstance(judge, str):
        if not judge.strip():
            raise _fail(id, "judge must name a litellm model, e.g. 'openai/gpt-4o-mini'")
        judge = Judge(model=judge)
    resolved = base_judge.merged(as_judge(judge))
    labels = list(named)

    async def create_prompt(run: ScorerRun) -> str:
        material = select(run)
        if inspect.isawaitable(material):
            material = await material
        return f"Question: {question}\n\n{ask}\n\nMaterial to judge:\n{_rendered(material)}"

    def parse_output(output: Mapping[str, Any], logprobs: Any) -> dict[str, Any]:
        value = output[key]
        if kind == "choice":
            return {"question": question, "kind": kind, "choice": value}
        if kind == "level":
            return {"question": question, "kind": kind, "level": value, "label": labels[value],
                    "levels": len(labels)}
        probability = probability_of_true(logprobs)
        return {"question": question, "kind": kind, "answer": bool(value),
                "probability": probability if probability is not None else float(bool(value)),
                "probability_source": "answer" if probability is None else "logprobs"}

    def generate_score(run: ScorerRun, results: Any) -> float:
        evidence = results.analyze_step_result
        if kind == "choice":
            return float(score_map[evidence["choice"]])
        if kind == "level":
            return float(evidence["level"]) / float(evidence["levels"] - 1)
        return float(evidence["probability"])

    def generate_reason(run: ScorerRun, results: Any, score: float) -> str:
        evidence = results.analyze_step_result
        if kind == "boolean":
            selected = "true" if evidence["answer"] else "false"
        else:
            selected = str(evidence["choice" if kind == "choice" else "label"])
        return f"Classifier question '{question}' selected '{selected}' (score: {score:g})."

    return (
        create_scorer(id, description or f"Scores the classifier question {question!r}",
                      name=name, judge=resolved, type=type, prepare_run=prepare_run)
        .analyze(PromptStep(f"Classify: {question}", create_prompt, output_schema=output_schema,
                            logprobs=TOP_LOGPROBS if kind == "boolean" else None,
                            parse_output=parse_output))
        .generate_score(generate_score)
        .generate_reason(generate_reason)
    )
