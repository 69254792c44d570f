"""Printing a run_evals result or an agent input is short and readable, not a model dump."""

from __future__ import annotations

from tracescore import checks, create_scorer, run_evals_sync
from tracescore.model import AgentInput, Message


def test_eval_result_prints_verdict_counts_and_averages() -> None:
    mentions = create_scorer(id="mentions-paris", description="Paris?").generate_score(
        lambda run, results: 1.0 if "paris" in str(run.output).lower() else 0.0)
    result = run_evals_sync(
        target=lambda question: "The Louvre is in Paris. " + "x" * 5000,
        data=[{"input": "Where is the Louvre?"}, {"input": "And the Prado?"}],
        scorers=[{"scorer": mentions, "threshold": 1.0}],
        gates=[checks.includes("Lisbon")],
    )
    text = str(result)
    assert text == repr(result)
    assert text.startswith("EvalResult(verdict='failed', items=2, errors=0, ")
    assert "'mentions-paris': 1.0" in text and "failed=[" in text
    assert len(text) < 300  # the 5,000-character outputs are not in it
    item = repr(result.items[0])
    assert item.startswith("ItemResult(index=0, status='success', scores={") and len(item) < 200


def test_agent_input_prints_as_the_conversation() -> None:
    agent_input = AgentInput(
        system_messages=[Message(role="system", content="You are a weather assistant.")],
        remembered_messages=[Message(role="user", content="Hi"),
                             Message(role="assistant", content="Hello!")],
        input_messages=[Message(role="user", content="Weather in Paris?")],
    )
    assert str(agent_input) == ("system: You are a weather assistant.\nuser: Hi\n"
                                "assistant: Hello!\nuser: Weather in Paris?")
    call = Message.model_validate({"role": "assistant", "content": "", "tool_invocations": [
        {"tool_name": "get_weather", "args": {"city": "Paris"}, "result": {"c": 18},
         "state": "result"}]})
    assert str(call) == 'assistant:\n  → get_weather({"city": "Paris"}) = {"c": 18}'
    assert str(AgentInput()) == "(no messages)"
