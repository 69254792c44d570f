"""An example scorer registry: ``[[scorers]]`` entries can point at the names in a file like this.

Copy it (for example to ``config/scorers.py``) and register its scorers in your config file::

    [[scorers]]
    id = "answer-length"
    use = "config/scorers.py:answer_length"     # a factory: called with args
    args = { max_chars = 300 }

    [[scorers]]
    use = "config/scorers.py:mentions_a_tool"    # a Scorer: no args; id defaults to its own
    sample_rate = 0.5
    filter = "service_name = 'support-bot'"

A path is relative to the working directory (else to the config file's directory). Each scorer
gets what ``tracescore.traces`` builds from the trace: ``type="agent"`` scorers the agent's
input and output messages, ``type="trajectory"`` the trajectory, others the span's input/output.
"""

from __future__ import annotations

from typing import Any

from tracescore import create_scorer, get_assistant_message
from tracescore.scoring import Scorer, not_scorable


def answer_length(max_chars: int = 400) -> Scorer[Any, Any]:
    """1 when the agent's final answer fits in ``max_chars`` characters, less the longer it is."""

    def measure(run: Any) -> Any:
        text = get_assistant_message(run.output) or ""
        if not text:
            return not_scorable("the agent gave no text answer")
        return {"chars": len(text)}

    def score(run: Any, results: Any) -> float:
        chars = results.preprocess_step_result["chars"]
        return 1.0 if chars <= max_chars else round(max_chars / chars, 3)

    return (
        create_scorer("answer-length", f"Final answer within {max_chars} characters",
                      type="agent")
        .preprocess(measure)
        .generate_score(score)
        .generate_reason(lambda run, results, score: (
            f"{results.preprocess_step_result['chars']} characters (budget {max_chars})"))
    )


def _tools_used(run: Any) -> dict[str, Any]:
    names = [inv.tool_name for msg in run.output for inv in (msg.tool_invocations or [])]
    return {"tools": names}


mentions_a_tool = (
    create_scorer("mentions-a-tool", "The agent called at least one tool", type="agent")
    .preprocess(_tools_used)
    .generate_score(lambda run, results: 1.0 if results.preprocess_step_result["tools"] else 0.0)
)
"""A ready-made Scorer (not a factory): 1 when the agent called any tool."""
