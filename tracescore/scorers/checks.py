"""Quick checks: cheap, deterministic 0/1 scorers for gates and CI (``from tracescore.scorers
import checks``).

Each function returns a ``Scorer`` (type ``agent``) that reads the agent's output (a list of
messages, or a loose shape: a string, ``{"text": ...}``, a list of ``{"role", "content"}``) and
scores 1 when the check passes, else 0 (``similarity`` without a threshold gives the raw value).
Tool checks also read a ``Trajectory``'s top-level tool steps. Each takes keyword-only ``id=``
and ``name=`` overrides (defaults ``check-includes``, ``check-called-tool``, …) and records what
it saw in ``preprocess_step_result``.

Text checks read the assistant messages' text joined by a space; ``equals`` and ``matches``
join with no separator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tracescore.scoring import Scorer, create_scorer

from ._results import Record, round_score
from ._text import assistant_text, tool_errors
from ._text import tool_names as _tool_names

__all__ = [
    "called_tool",
    "dice_similarity",
    "did_not_call",
    "equals",
    "excludes",
    "includes",
    "matches",
    "max_tool_calls",
    "no_tool_errors",
    "similarity",
    "tool_order",
    "used_no_tools",
]


def _passed(run: Any, results: Any) -> float:
    return 1.0 if results.preprocess_step_result["passed"] else 0.0


def _check(
    default_id: str, default_name: str, description: str, id: str | None, name: str | None,  # noqa: A002
    preprocess: Any, generate_score: Any = _passed,
) -> Scorer[Any, Any]:
    return (
        create_scorer(id or default_id, description, name=name or default_name, type="agent")
        .preprocess(preprocess)
        .generate_score(generate_score)
    )


def _text_pair(output: Any, target: str, ignore_case: bool, sep: str) -> tuple[str, str, str]:
    text = assistant_text(output, sep)
    if ignore_case:
        return text, text.lower(), target.lower()
    return text, text, target


def _need_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def includes(
    expected: str, ignore_case: bool = True, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the output text contains ``expected`` (case-insensitive by default)."""
    _need_str(expected, "includes(expected)")

    def preprocess(run: Any) -> Record:
        text, output, target = _text_pair(run.output, expected, ignore_case, " ")
        found = target in output
        return Record(text=text, output=output, target=target, found=found, passed=found)

    return _check("check-includes", "Includes Check", f'Checks if output includes "{expected}"',
                  id, name, preprocess)


def excludes(
    unwanted: str, ignore_case: bool = True, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the output text does not contain ``unwanted`` (case-insensitive by default)."""
    _need_str(unwanted, "excludes(unwanted)")

    def preprocess(run: Any) -> Record:
        text, output, target = _text_pair(run.output, unwanted, ignore_case, " ")
        excluded = target not in output
        return Record(text=text, output=output, target=target, excluded=excluded, passed=excluded)

    return _check("check-excludes", "Excludes Check",
                  f'Checks that output does not include "{unwanted}"', id, name, preprocess)


def equals(
    expected: str, ignore_case: bool = True, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the output text (assistant texts joined with no separator) equals ``expected``.

    Nothing is stripped: surrounding whitespace makes the texts differ.
    """
    _need_str(expected, "equals(expected)")

    def preprocess(run: Any) -> Record:
        text, output, target = _text_pair(run.output, expected, ignore_case, "")
        same = output == target
        return Record(text=text, output=output, target=target, is_equal=same, passed=same)

    return _check("check-equals", "Equals Check", f'Checks if output equals "{expected}"',
                  id, name, preprocess)


def matches(
    pattern: str | re.Pattern[str], exact: bool = False, *, id: str | None = None,  # noqa: A002
    name: str | None = None,
) -> Scorer[Any, Any]:
    """1 when the output text matches the regular expression (``exact=True``: the whole text).

    ``pattern`` is a string or a compiled regex (its flags are kept). The text is the assistant
    texts joined with no separator.
    """
    regex = pattern if isinstance(pattern, re.Pattern) else re.compile(
        _need_str(pattern, "matches(pattern)"))

    def preprocess(run: Any) -> Record:
        text = assistant_text(run.output, "")
        found = (regex.fullmatch(text) if exact else regex.search(text)) is not None
        return Record(text=text, output=text, pattern=regex.pattern, exact=exact, matched=found,
                      passed=found)

    return _check("check-matches", "Matches Check", f"Checks if output matches pattern "
                  f"/{regex.pattern}/", id, name, preprocess)


def dice_similarity(first: str, second: str) -> float:
    """Dice's coefficient over character bigrams, whitespace removed (0 … 1).

    Identical strings (also both empty) give 1; a string shorter than two characters gives 0
    against anything else.
    """
    a = re.sub(r"\s+", "", first)
    b = re.sub(r"\s+", "", second)
    if a == b:
        return 1.0
    if len(a) < 2 or len(b) < 2:
        return 0.0
    counts: dict[str, int] = {}
    for i in range(len(a) - 1):
        gram = a[i : i + 2]
        counts[gram] = counts.get(gram, 0) + 1
    shared = 0
    for i in range(len(b) - 1):
        gram = b[i : i + 2]
        if counts.get(gram, 0) > 0:
            counts[gram] -= 1
            shared += 1
    return 2.0 * shared / (len(a) + len(b) - 2)


def similarity(
    expected: str, threshold: float | None = None, ignore_case: bool = True, *,
    id: str | None = None, name: str | None = None,  # noqa: A002
) -> Scorer[Any, Any]:
    """How close the output text is to ``expected`` (Dice coefficient over character bigrams).

    Without ``threshold`` the score is the similarity itself (rounded to two decimals); with one,
    1 when the similarity reaches it, else 0.
    """
    _need_str(expected, "similarity(expected)")
    if threshold is not None and (isinstance(threshold, bool) or not 0 <= threshold <= 1):
        raise ValueError(f"similarity threshold must be between 0 and 1, got {threshold!r}")

    def preprocess(run: Any) -> Record:
        text, output, target = _text_pair(run.output, expected, ignore_case, " ")
        value = dice_similarity(output, target)
        return Record(text=text, output=output, target=target, score=value, threshold=threshold,
                      passed=threshold is None or value >= threshold)

    def generate_score(run: Any, results: Any) -> float:
        pre = results.preprocess_step_result
        if pre["threshold"] is None:
            return round_score(pre["score"])
        return 1.0 if pre["score"] >= pre["threshold"] else 0.0

    return _check("check-similarity", "Similarity Check",
                  f'Checks string similarity to "{expected}"', id, name, preprocess,
                  generate_score)


def called_tool(
    tool_name: str, times: int = 1, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the agent called ``tool_name`` at least ``times`` times."""
    _need_str(tool_name, "called_tool(tool_name)")
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ValueError(f"called_tool times must be an integer of 1 or more, got {times!r}")

    def preprocess(run: Any) -> Record:
        tools = _tool_names(run.output)
        count = tools.count(tool_name)
        return Record(tool_name=tool_name, expected_times=times, actual_count=count, tools=tools,
                      passed=count >= times)

    more = f" at least {times} times" if times > 1 else ""
    return _check("check-called-tool", "Called Tool Check",
                  f'Checks that "{tool_name}" was called{more}', id, name, preprocess)


def did_not_call(
    tool_name: str, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the agent never called ``tool_name``."""
    _need_str(tool_name, "did_not_call(tool_name)")

    def preprocess(run: Any) -> Record:
        tools = _tool_names(run.output)
        count = tools.count(tool_name)
        return Record(tool_name=tool_name, count=count, tools=tools, passed=count == 0)

    return _check("check-did-not-call", "Did Not Call Check",
                  f'Checks that "{tool_name}" was NOT called', id, name, preprocess)


def tool_order(
    tool_names: Sequence[str], *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the tools were called in this order; other calls may sit between them.

    The expected names must appear as a subsequence of the calls (an empty list always passes).
    """
    if isinstance(tool_names, str):
        raise TypeError("tool_order takes a list of tool names, e.g. tool_order(['search', "
                        "'summarize'])")
    expected = [_need_str(t, "tool_order names") for t in tool_names]

    def preprocess(run: Any) -> Record:
        tools = _tool_names(run.output)
        position = 0
        for tool in tools:
            if position < len(expected) and tool == expected[position]:
                position += 1
        return Record(actual_tools=tools, expected_order=expected,
                      passed=position == len(expected))

    return _check("check-tool-order", "Tool Order Check",
                  f"Checks tool call order: [{' → '.join(expected)}]", id, name, preprocess)


def max_tool_calls(
    n: int, *, id: str | None = None, name: str | None = None  # noqa: A002
) -> Scorer[Any, Any]:
    """1 when the agent made at most ``n`` tool calls."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"max_tool_calls needs an integer of 0 or more, got {n!r}")

    def preprocess(run: Any) -> Record:
        tools = _tool_names(run.output)
        return Record(count=len(tools), max=n, tools=tools, passed=len(tools) <= n)

    return _check("check-max-tool-calls", "Max Tool Calls Check",
                  f"Checks that no more than {n} tool calls were made", id, name, preprocess)


def used_no_tools(*, id: str | None = None, name: str | None = None) -> Scorer[Any, Any]:  # noqa: A002
    """1 when the agent made no tool call at all."""

    def preprocess(run: Any) -> Record:
        tools = _tool_names(run.output)
        return Record(count=len(tools), tools=tools, passed=not tools)

    return _check("check-used-no-tools", "Used No Tools Check", "Checks that no tools were called",
                  id, name, preprocess)


def no_tool_errors(*, id: str | None = None, name: str | None = None) -> Scorer[Any, Any]:  # noqa: A002
    """1 when no tool call failed.

    A failure is an unfinished call (state ``call`` or ``partial-call``), an ``output-error``,
    an invocation flagged ``is_error``, or a result carrying a truthy ``error`` field; for a
    trajectory, a tool step with ``success=False``. No calls at all passes.
    """

    def preprocess(run: Any) -> Record:
        failed, total = tool_errors(run.output)
        return Record(error_count=len(failed), total_calls=total, failed_tools=failed,
                      passed=not failed)

    return _check("check-no-tool-errors", "No Tool Errors Check",
                  "Checks that no tool calls resulted in errors", id, name, preprocess)
