"""The seed's examples (Mastra's createScorer docs) in Python spelling, end to end."""

from __future__ import annotations

from pydantic import BaseModel

from tracescore.model import AgentInput, Message, ScorerRun, get_assistant_message, get_user_message
from tracescore.scoring import Judge, PromptStep, Scorer, StepResults, create_scorer
from tracescore.testing import Reply, ScriptedLLMServer


class GlutenAnalysis(BaseModel):
    is_gluten_free: bool
    gluten_sources: list[str]


def _gluten_checker(server: ScriptedLLMServer) -> Scorer[AgentInput, list[Message]]:
    judge = Judge("openai/scripted-judge", "You are a chef who identifies gluten in recipes.",
                  api_base=server.url)
    return (
        create_scorer("gluten-checker", "Check if the output contains any gluten",
                      name="Gluten Checker", judge=judge, type="agent")
        .analyze(PromptStep(
            "Analyze the output for gluten",
            lambda run, results: "Check this recipe for gluten:\n"
            + get_assistant_message(run.output),
            output_schema=GlutenAnalysis))
        .generate_score(lambda run, results: 1 if results.analyze_step_result["is_gluten_free"]
                        else 0)
        .generate_reason(PromptStep(
            "Explain the score",
            lambda run, results, score: (
                f"The recipe is {'gluten-free' if score else 'not gluten-free'}; sources: "
                f"{', '.join(results.analyze_step_result['gluten_sources']) or 'none'}. "
                "Explain in one sentence.")))
    )


async def test_gluten_checker(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(Reply(content={"is_gluten_free": False, "gluten_sources": ["flour"]}),
                      Reply(content="The recipe uses wheat flour, which contains gluten."))
    scorer = _gluten_checker(llm_server)
    agent_input = AgentInput(input_messages=[Message(role="user", content="A pancake recipe?")])
    output = [Message(role="assistant", content="Mix flour, eggs and milk; fry.")]
    result = await scorer.run(input=agent_input, output=output)
    assert result.score == 0.0
    assert result.analyze_step_result == {"is_gluten_free": False, "gluten_sources": ["flour"]}
    assert result.reason == "The recipe uses wheat flour, which contains gluten."
    assert result.analyze_prompt is not None and "Mix flour" in result.analyze_prompt
    assert result.generate_reason_prompt is not None and "flour" in result.generate_reason_prompt
    assert [e.status for s in result.judge.values() for e in s.executions] == ["success"] * 2
    assert scorer.name == "Gluten Checker" and scorer.type == "agent"


def _keyword_coverage() -> Scorer[object, object]:
    stop = {"the", "a", "is", "of", "what", "in"}

    def preprocess(run: ScorerRun) -> dict[str, list[str]]:
        words = [w.strip("?.,!").lower() for w in get_user_message(run.input).split()]
        return {"keywords": [w for w in words if w and w not in stop]}

    def analyze(run: ScorerRun, results: StepResults) -> dict[str, object]:
        answer = get_assistant_message(run.output).lower()
        keywords = results.preprocess_step_result["keywords"]
        matched = [k for k in keywords if k in answer]
        return {"matched": matched, "total": len(keywords)}

    async def score(run: ScorerRun, results: StepResults) -> float:
        counts = results.analyze_step_result
        return len(counts["matched"]) / counts["total"] if counts["total"] else 1.0

    def reason(run: ScorerRun, results: StepResults, score: float) -> str:
        return f"{len(results.analyze_step_result['matched'])} of " \
               f"{results.analyze_step_result['total']} keywords covered (score {score:.2f})"

    return (create_scorer("keyword-coverage", "Share of the question's keywords the answer uses")
            .preprocess(preprocess).analyze(analyze).generate_score(score)
            .generate_reason(reason))


async def test_keyword_coverage_with_loose_shapes() -> None:
    scorer = _keyword_coverage()
    as_text = await scorer.run(input="What is the capital of France?",
                               output="Paris is the capital of France.")
    assert as_text.score == 1.0
    as_messages = await scorer.run(
        input=[{"role": "user", "content": "What is the capital of France?"}],
        output={"text": "It is Paris."})
    assert as_messages.score == 0.0
    assert as_messages.reason == "0 of 2 keywords covered (score 0.00)"


def test_keyword_coverage_run_sync_for_scripts() -> None:
    result = _keyword_coverage().run_sync(input="capital of Spain", output="Madrid, the capital")
    assert result.score == 0.5
