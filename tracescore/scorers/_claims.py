"""Claims checked against context: the steps faithfulness and hallucination share.

Both extract the answer's claims with one prompt, then judge the claims against the resolved
context with their own prompt, then explain the score with their own reason prompt; only the
templates differ.
"""

from __future__ import annotations

from collections.abc import Callable

from ._builder import Judged
from ._llm import as_json, numbered

EXTRACT_CLAIMS_PROMPT = """\
Break the text below into claims.

A claim is one self-contained statement that can be checked against a source.
- Split a sentence that says several things into one claim per fact.
- Keep hedged or speculative statements ("may", "might", "probably", "will likely") as claims, \
with their hedging words.
- Make each claim stand on its own: replace pronouns with what they refer to.
- Leave out greetings, questions, offers of help and remarks about the conversation itself.
- If the text is empty or makes no claims, return an empty list.

Return a JSON object: {{"claims": ["<claim>", ...]}}

Text:
\"\"\"
{output}
\"\"\""""


CLAIMS_MATERIAL = """\
Context:
{context}

Claims:
{claims}"""
"""What a claims analyze prompt shows the judge after its instructions."""

REASON_MATERIAL = """\
User question:
{input}

Answer:
{output}

Context:
{context}

Verdicts:
{verdicts}"""
"""What a claims reason prompt shows the judge after its instructions."""


def extract_claims_prompt(j: Judged) -> str:
    """The preprocess prompt: the assistant's answer, to be split into claims."""
    return EXTRACT_CLAIMS_PROMPT.format(output=j.output_text)


def claims_prompt(template: str) -> Callable[[Judged], str]:
    """An analyze prompt: ``template`` filled with the numbered context and claims."""
    def prompt(j: Judged) -> str:
        return template.format(context=numbered(j.context, "(no context)"),
                               claims=numbered(j.preprocess.claims, "(no claims)"))
    return prompt


def claims_reason_prompt(template: str) -> Callable[[Judged], str]:
    """A reason prompt: ``template`` filled with the score, the run, the context and verdicts."""
    def prompt(j: Judged) -> str:
        return template.format(
            score=j.score, scale=j.scale, input=j.input_text, output=j.output_text,
            context=numbered(j.context, "(no context)"), verdicts=as_json(j.analyze.verdicts))
    return prompt
