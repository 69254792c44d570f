"""``create_tool_call_accuracy_scorer_code``: did the agent call the right tool (in order)?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracescore.model import to_agent_input
from tracescore.scoring import Scorer, create_scorer

from ._extract import extract_tool_calls
from ._results import Record
from ._text import tool_names

EMPTY_RUN = "Input and output messages cannot be null or empty"


def _in_order(actual: list[str], expected: list[str], strict: bool) -> bool:
    if strict:
        return actual == expected
    position = 0
    for tool in actual:
        if position < len(expected) and tool == expected[position]:
            position += 1
    return position == len(expected)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | tuple | dict) and not value)


def check_agent_run(run: Any) -> None:
    """Raise ``ValueError(EMPTY_RUN)`` for a run without input messages or without output."""
    if _empty(run.input) or not to_agent_input(run.input).input_messages or _empty(run.output):
        raise ValueError(EMPTY_RUN)


def create_tool_call_accuracy_scorer_code(
    expected_tool: str | None = None,
    strict_mode: bool = False,
    expected_tool_order: Sequence[str] | None = None,
) -> Scorer[Any, Any]:
    """Score 1 when the agent called the expected tool, or the expected tools in order.

    - ``expected_tool``: 1 when the tool was called (``strict_mode``: it was the only call).
    - ``expected_tool_order`` (takes precedence): 1 when the calls contain these tools in this
      order, other calls allowed between them (``strict_mode``: the calls are exactly this list).
      Unlike Mastra, which compares each tool's first occurrence, a later call in the right
      order counts: ``[b, a, b]`` follows ``[a, b]``.
    - No tool call at all scores 0.

    A run without input messages or output raises (``ScorerRunError`` from ``run``).
    ``preprocess_step_result``: ``expected_tool, actual_tools, strict_mode, expected_tool_order,
    has_tool_calls, correct_tool_called, correct_order_called, tool_call_infos``.
    """
    if expected_tool is None and expected_tool_order is None:
        raise ValueError("create_tool_call_accuracy_scorer_code needs expected_tool or "
                         "expected_tool_order")
    if isinstance(expected_tool_order, str):
        raise TypeError("expected_tool_order is a list of tool names")
    order = list(expected_tool_order) if expected_tool_order is not None else None
    if order is not None:
        description = ("Evaluates whether the LLM called tools in the correct order: "
                       f"[{', '.join(order)}]")
    else:
        description = (f"Evaluates whether the LLM selected the correct tool ({expected_tool}) "
                       "from the available tools")

    def preprocess(run: Any) -> Record:
        check_agent_run(run)
        actual = tool_names(run.output)
        if expected_tool is None:
            correct_tool = False
        elif strict_mode:
            correct_tool = actual == [expected_tool]
        else:
            correct_tool = expected_tool in actual
        return Record(
            expected_tool=expected_tool,
            actual_tools=actual,
            strict_mode=strict_mode,
            expected_tool_order=order,
            has_tool_calls=bool(actual),
            correct_tool_called=correct_tool,
            correct_order_called=_in_order(actual, order, strict_mode) if order is not None
            else None,
            tool_call_infos=extract_tool_calls(run.output)["tool_call_infos"],
        )

    def generate_score(run: Any, results: Any) -> float:
        pre = results.preprocess_step_result
        if not pre["has_tool_calls"]:
            return 0.0
        if order:
            return 1.0 if pre["correct_order_called"] else 0.0
        return 1.0 if pre["correct_tool_called"] else 0.0

    return (
        create_scorer("code-tool-call-accuracy-scorer", description,
                      name="Tool Call Accuracy Scorer", type="agent")
        .preprocess(preprocess)
        .generate_score(generate_score)
    )
