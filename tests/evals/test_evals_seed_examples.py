"""The seed's examples in Python spelling: gates of quick checks with tracked thresholds, and a
multi-turn conversation asserted as a whole (Mastra's gates-and-verdicts and multi-turn docs)."""

from __future__ import annotations

from typing import Any

from evals_helpers import fixed, weather_tool_message

from tracescore.evals import run_evals
from tracescore.model import get_user_message
from tracescore.scorers import checks
from tracescore.testing import assert_passes_gates, assert_verdict


class WeatherAgent:
    """Calls get_weather for the city it is asked about and answers with the forecast."""

    def __init__(self, *, broken_tool: bool = False) -> None:
        self.broken_tool = broken_tool
        self.threads: dict[str, list[str]] = {}

    async def generate(self, input: Any, *, thread_id: str | None = None,
                       **options: Any) -> list[dict[str, Any]]:
        text = get_user_message(input)
        history = self.threads.setdefault(thread_id or "", [])
        city = next((w.strip("?.") for w in text.split() if w[:1].isupper() and w != "What"),
                    history[-1] if history else "Brooklyn")
        history.append(city)
        if "compare" in text.lower():
            return [{"role": "assistant", "content": f"Both days are sunny in {city}."}]
        return weather_tool_message(city, ok=not self.broken_tool)


async def test_gates_and_tracked_thresholds_quickstart() -> None:
    result = await run_evals(
        WeatherAgent(),
        [{"input": "What is the weather in Brooklyn?"}],
        gates=[checks.called_tool("get_weather"), checks.no_tool_errors()],
        scorers=[{"scorer": fixed("faithfulness", 0.9), "threshold": 0.7},
                 checks.includes("Brooklyn")],
    )
    assert_verdict(result, "passed")
    assert_passes_gates(result)
    assert result.scores == {"faithfulness": 0.9, "check-includes": 1.0}
    assert result.threshold_results is not None
    assert [r.id for r in result.threshold_results] == ["faithfulness"]


async def test_a_broken_tool_fails_the_gate() -> None:
    result = await run_evals(
        WeatherAgent(broken_tool=True),
        [{"input": "What is the weather in Brooklyn?"}],
        gates=[checks.called_tool("get_weather"), checks.no_tool_errors()],
        scorers=[checks.includes("Brooklyn")],
    )
    assert result.verdict == "failed"
    assert result.gate_results is not None
    assert [(g.id, g.passed) for g in result.gate_results] == [
        ("check-called-tool", True), ("check-no-tool-errors", False)]


async def test_multi_turn_conversation_quickstart() -> None:
    result = await run_evals(
        WeatherAgent(),
        [{"inputs": ["What is the weather in Brooklyn?", "What about tomorrow?",
                     "Compare the two forecasts."]}],
        scorers=[checks.called_tool("get_weather", times=2), checks.includes("Brooklyn")],
    )
    assert result.scores == {"check-called-tool": 1.0, "check-includes": 1.0}
    assert result.summary.total_items == 1
    assert len(result.items[0].output) == 5  # 2 + 2 + 1 assistant messages
