"""What a navigating LLM scorer shares: its default caps, the note and outline its prompt shows
in place of the whole run, and the caps read from its options (see ``_builder``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tracescore.model import ScorerRun
from tracescore.scoring import Navigation, NavigationCaps, NotScorableSignal, StepResults

from ._trace_tools import OUTLINE_LINES, outline, view_tools
from ._trace_view import view_of

if TYPE_CHECKING:
    from ._builder import Ask, Judged, _Build

NAVIGATION_CAPS = NavigationCaps()
"""The navigating judge's caps when a scorer's options do not set them: 20 tool calls,
50,000 tokens, no cost cap."""

NAVIGATION_NOTE = (
    "The run is shown below as an outline, not whole: one line per step with its id, kind, "
    "name, sizes and errors. Read what you need with the tools (outline, read_step, read_span, "
    "search_trace) before you answer; judge only from what you read.")


def navigation_evidence(j: Judged) -> str:
    """What a navigating prompt shows of the run: the note on the tools and the outline."""
    return f"{NAVIGATION_NOTE}\n\n{outline(j.trace_view(), max_lines=OUTLINE_LINES)}"


def navigation_caps(opts: Mapping[str, Any]) -> NavigationCaps:
    """The caps an options mapping sets (``NAVIGATION_CAPS`` for those it leaves out);
    ``ValueError`` for a cap that is not a positive number."""
    return NavigationCaps(
        max_tool_calls=opts.get("max_tool_calls", NAVIGATION_CAPS.max_tool_calls),
        max_tokens=opts.get("max_tokens", NAVIGATION_CAPS.max_tokens),
        max_cost_usd=opts.get("max_cost_usd", NAVIGATION_CAPS.max_cost_usd))


def navigation_of(build: _Build, step: Ask, name: str) -> Any:
    """The ``PromptStep(navigation=...)`` of a navigating builder step: the step's prompt built
    with ``judged.navigating``, the four tools over the run's view, the options' caps."""
    caps = build.caps
    assert caps is not None

    async def navigation(run: ScorerRun, results: StepResults) -> Any:
        view = view_of(run)
        prompt = step.prompt(await build.judged(run, results, name, step.uses_context,
                                                view=view))
        if prompt is None or isinstance(prompt, NotScorableSignal):
            return prompt
        return Navigation(prompt=prompt, tools=view_tools(view), caps=caps)
    return navigation


__all__ = ["NAVIGATION_CAPS", "NAVIGATION_NOTE", "navigation_caps", "navigation_evidence",
           "navigation_of"]
