"""The judge stand-in answers every prebuilt LLM scorer with an object its schema accepts.

Each catalogue factory that takes a judge is built on ``Judge(model="openai/gpt-4o-mini",
api_base=<stand-in>)`` and run once; the stand-in (``tracescore.testing.standin_server``, real
HTTP) derives every answer from the request's schema. A run must end with a score or as not
scorable (a scorer that needs something the run lacks), never with a judge answer that did not
fit.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from tracescore.scorers import CATALOGUE
from tracescore.scoring import Judge, ScorerRunError
from tracescore.testing import ScriptedLLMServer, example_of, standin_server

LLM_SCORERS = sorted(k for k, f in CATALOGUE.items() if "model" in inspect.signature(f).parameters)
EXTRA = {"criterion": "The answer is polite.", "context": ["Paris is sunny today."],
         "criteria": "The answer names the city.",
         "baseline_response": "It is sunny in Paris.", "noisy_query": "Weather Paris pls??"}
TRAJECTORY = {"steps": [{"step_type": "tool_call", "name": "get_weather",
                         "tool_args": {"city": "Paris"}, "tool_result": "sunny"}]}


@pytest.fixture(scope="module")
def standin() -> Iterator[ScriptedLLMServer]:
    with standin_server() as server:
        yield server


@pytest.mark.parametrize("scorer_id", LLM_SCORERS)
async def test_every_llm_scorer_gets_answers_that_fit_its_schema(
    standin: ScriptedLLMServer, scorer_id: str
) -> None:
    factory = CATALOGUE[scorer_id]
    params = inspect.signature(factory).parameters
    judge = Judge(model="openai/gpt-4o-mini", api_base=standin.url, api_key="unused")
    scorer = factory(model=judge, **{k: v for k, v in EXTRA.items() if k in params})
    asked = standin.answered
    output: Any = TRAJECTORY if scorer.type == "trajectory" else "It is sunny in Paris."
    try:
        result = await scorer.run(input="What is the weather in Paris?", output=output,
                                  ground_truth="Sunny in Paris.")
    except ScorerRunError as exc:
        pytest.fail(f"{scorer_id}: {exc}")
    assert result.score is not None or result.not_scorable is not None
    if result.score is not None:
        assert standin.answered > asked  # the judge was asked and its answers were used


def test_the_rule_builds_a_valid_instance_of_nested_schemas() -> None:
    import jsonschema  # type: ignore[import-untyped]

    schema = {
        "type": "object",
        "$defs": {"Verdict": {"type": "object", "properties": {
            "verdict": {"enum": ["yes", "no", "idk"]}, "reason": {"type": "string"}},
            "required": ["verdict", "reason"]}},
        "properties": {
            "verdicts": {"type": "array", "items": {"$ref": "#/$defs/Verdict"}, "minItems": 2},
            "score": {"type": "number", "minimum": 0, "maximum": 0.5},
            "count": {"type": "integer", "minimum": 3},
            "ok": {"type": "boolean"},
            "note": {"anyOf": [{"type": "null"}, {"type": "string"}]},
        },
        "required": ["verdicts", "score", "count", "ok", "note"],
    }
    value = example_of(schema)
    jsonschema.validate(value, schema)
    assert value["verdicts"] == [{"verdict": "yes", "reason": "stand-in answer"}] * 2
    assert (value["score"], value["count"], value["ok"]) == (0.5, 3, True)
