"""``create_tool_call_accuracy_scorer_llm``: were the agent's tool calls the right ones?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from tracescore.scoring import Scorer

from ._builder import (
    Ask,
    Compute,
    Judged,
    LLMScorerSpec,
    Loose,
    build_llm_scorer,
    merge_options,
)
from ._extract import extract_trajectory
from ._llm import ModelLike, as_json, numbered
from ._results import Record
from ._tool_call_accuracy import check_agent_run

TOOL_CALL_INSTRUCTIONS = """\
You review the tool calls an AI agent made while answering a user. For each call you decide \
whether calling that tool, with those arguments, was an appropriate step towards what the user \
asked, given the tools the agent had. You also notice tools the agent should have called and \
did not. Follow the answer format each task asks for exactly."""

ANALYZE_PROMPT = """\
Judge each tool call the agent made.

A call is appropriate when the user's request needs what the tool does, it was the right tool \
among those available, and its arguments fit the request. A call is not appropriate when the \
request did not need it, a different tool was the right one, or the arguments are wrong.
Then list, as missing_tools, available tools the request clearly needed that the agent never \
called (an empty list when none are missing). With no tool calls at all, give no evaluations.

Return a JSON object: {{"evaluations": [{{"tool_called": "<tool name>", "was_appropriate": \
true | false, "reasoning": "<one sentence>"}}, ...], "missing_tools": ["<tool name>", ...]}}

User request:
{input}

Available tools:
{tools}

Tool calls, in order:
{calls}

Agent's answer:
{output}"""

REASON_PROMPT = """\
Explain a tool call accuracy score in two or three sentences of plain text (no JSON, no lists).

The score is {score} on a scale from 0 to 1: the share of the agent's tool calls that were \
appropriate (with no calls: 1, or 0 when a needed tool was never called). Name the calls that \
were not appropriate and any missing tools. Begin with "The score is {score} because".

User request:
{input}

Evaluations:
{evaluations}

Missing tools:
{missing}"""


class ToolEvaluation(Loose):
    """One tool call's judgement."""

    tool_called: str | None = None
    was_appropriate: bool = Field(description="true when the call was an appropriate step")
    reasoning: str | None = None


class ToolEvaluations(Loose):
    """The analyze step's reply."""

    evaluations: list[ToolEvaluation]
    missing_tools: list[str] = Field(default_factory=list)


def tool_call_accuracy_score(analysis: ToolEvaluations) -> float:
    """Appropriate calls / calls; no evaluations → 0 when tools are missing, else 1."""
    if not analysis.evaluations:
        return 0.0 if analysis.missing_tools else 1.0
    return sum(1 for e in analysis.evaluations if e.was_appropriate) / len(analysis.evaluations)


def _tool_line(tool: Any) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        name, description = tool.get("id") or tool.get("name"), tool.get("description")
    else:
        name = getattr(tool, "id", None) or getattr(tool, "name", None)
        description = getattr(tool, "description", None)
    if not name:
        raise ValueError("each available tool needs an id (or name) and a description, e.g. "
                         "{'id': 'weather', 'description': 'Gets the weather'}")
    return f"{name}: {description}" if description else str(name)


def tool_lines(available_tools: Sequence[Any] | Mapping[str, str]) -> list[str]:
    """The available tools as ``id: description`` lines (a mapping is id → description)."""
    if isinstance(available_tools, Mapping):
        return [f"{name}: {text}" for name, text in available_tools.items()]
    if isinstance(available_tools, str) or not isinstance(available_tools, Sequence):
        raise TypeError("available_tools must be a list of tools ({'id', 'description'} dicts "
                        "or objects with id and description) or a dict of id → description")
    return [_tool_line(tool) for tool in available_tools]


def _actual_tools(j: Judged) -> Record:
    check_agent_run(j.run)
    steps = extract_trajectory(j.run.output).steps
    calls = [{"tool_name": s.name, "args": getattr(s, "tool_args", None)} for s in steps]
    return Record(actual_tools=[c["tool_name"] for c in calls], tool_calls=calls,
                  has_tool_calls=bool(calls))


def _analyze_prompt(j: Judged) -> str:
    calls = [f"{c['tool_name']}(args: {as_json(c['args'])})" for c in j.preprocess["tool_calls"]]
    return ANALYZE_PROMPT.format(input=j.input_text,
                                 tools=numbered(j.options["tool_lines"], "(no tools listed)"),
                                 calls=numbered(calls, "(no tool calls)"), output=j.output_text)


def _reason_prompt(j: Judged) -> str:
    return REASON_PROMPT.format(score=j.score, input=j.input_text,
                                evaluations=as_json(j.analyze.evaluations),
                                missing=numbered(j.analyze.missing_tools, "(none)"))


TOOL_CALL_ACCURACY_LLM = LLMScorerSpec(
    id="llm-tool-call-accuracy-scorer",
    name="Tool Call Accuracy (LLM)",
    description="Evaluates whether the agent's tool calls were appropriate for the request",
    instructions=TOOL_CALL_INSTRUCTIONS,
    preprocess=Compute(_actual_tools),
    analyze=Ask("Judge each tool call", _analyze_prompt, ToolEvaluations),
    score=lambda j: tool_call_accuracy_score(j.analyze),
    reason=Ask("Explain the score", _reason_prompt),
    scaled=False,
    option_names=("available_tools",),
    factory="create_tool_call_accuracy_scorer_llm",
)


def create_tool_call_accuracy_scorer_llm(
    model: ModelLike,
    available_tools: Sequence[Any] | Mapping[str, str] = (),
    *,
    options: Mapping[str, Any] | None = None,
) -> Scorer[Any, Any]:
    """An LLM-judged share of the agent's tool calls that were appropriate.

    Steps: preprocess (code) reads the calls → ``{"actual_tools", "tool_calls": [{"tool_name",
    "args"}], "has_tool_calls"}``, failing the run with ``Input and output messages cannot be
    null or empty`` like ``create_tool_call_accuracy_scorer_code``; analyze judges each call
    against the request and ``available_tools`` → ``{"evaluations": [{"tool_called",
    "was_appropriate", "reasoning"}], "missing_tools"}``; the score is appropriate /
    evaluations (none → 0 when a tool is missing, else 1), not scaled; generate_reason explains.

    ``available_tools``: the agent's tools, each ``{"id" (or "name"), "description"}`` or an
    object with those attributes, or a dict id → description; shown to the judge as
    ``id: description`` lines. ``options`` accepts Mastra's ``availableTools``.
    """
    opts = merge_options(TOOL_CALL_ACCURACY_LLM, {"available_tools": available_tools}, options)
    opts["tool_lines"] = tool_lines(opts["available_tools"])
    return build_llm_scorer(TOOL_CALL_ACCURACY_LLM, model, opts)
