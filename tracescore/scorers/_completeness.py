"""``create_completeness_scorer``: how many of the input's words the output covers.

Elements of a text are its words (accents stripped, lower-cased, split on anything that is not
a letter or digit) plus the infinitive of every word that is a known verb form (``ran`` →
``run``, ``is`` → ``be``), from lemminflect's bundled English lexicon. Mastra takes nouns,
verbs (infinitive), topics and terms from ``compromise``; since its terms are every word, the
two sets differ only in which verb forms get an infinitive added, and lemminflect adds one for
any word its lexicon lists as a verb form, where compromise tags verbs by context.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from tracescore.scoring import Scorer

from ._code_scorer import text_code_scorer
from ._results import Record
from ._text import joined_input_text, joined_output_text

NULL_TEXT = "Inputs cannot be null or undefined"
_WORD = re.compile(r"[a-z0-9]+")
_COMBINING = re.compile("[\u0300-\u036f]")


def normalise(text: str) -> str:
    """NFD, combining accents (U+0300-U+036F) removed, lower-cased: ``Café`` → ``cafe``."""
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower()


@functools.lru_cache(maxsize=8192)
def _verb_infinitive(word: str) -> str | None:
    import lemminflect  # loads its lexicon on first use

    lemmas = lemminflect.getAllLemmas(word, upos="VERB").get("VERB")
    return str(lemmas[0]) if lemmas else None


def extract_elements(text: str) -> list[str]:
    """The text's elements, deduplicated in order: each word, then its infinitive if it is a
    verb form with a different infinitive."""
    elements: dict[str, None] = {}
    for word in _WORD.findall(normalise(text)):
        elements[word] = None
        if word.isalpha():
            infinitive = _verb_infinitive(word)
            if infinitive and infinitive != word:
                for part in _WORD.findall(normalise(infinitive)):
                    elements[part] = None
    return list(elements)


def _covers(element: str, candidate: str) -> bool:
    if len(element) <= 3:
        return element == candidate
    longer, shorter = (element, candidate) if len(element) > len(candidate) else (
        candidate, element)
    return shorter in longer and len(shorter) / len(longer) > 0.6


def coverage(input_elements: Sequence[str], output_elements: Sequence[str]) -> float:
    """The share of input elements covered by some output element.

    An element of up to 3 characters needs an equal output element; a longer one is covered
    when the shorter of the two is inside the longer and is more than 60 % of its length. No
    input elements: 1 when the output has none either, else 0.
    """
    if not input_elements:
        return 1.0 if not output_elements else 0.0
    covered = sum(1 for e in input_elements if any(_covers(e, s) for s in output_elements))
    return covered / len(input_elements)


def _has_null_text(value: Any) -> bool:
    """A missing value, or a message (dict) whose text is None."""
    if value is None:
        return True
    if isinstance(value, Mapping):
        for key in ("input_messages", "inputMessages", "messages"):
            if isinstance(value.get(key), list):
                return _has_null_text(value[key])
        for key in ("content", "text"):
            if key in value and value[key] is None and not value.get("parts"):
                return True
        return False
    if isinstance(value, list | tuple):
        return any(item is None or (isinstance(item, Mapping) and _has_null_text(item))
                   for item in value)
    return False


def create_completeness_scorer() -> Scorer[Any, Any]:
    """Score the share of the input's elements (words and verb infinitives) found in the output.

    Input text: the input messages joined with ``", "``; output text: every output message's
    text joined with ``", "``. A missing input or output, or a message whose text is None,
    raises ``Inputs cannot be null or undefined`` (``ScorerRunError`` from ``run``). The score is
    not rounded.

    ``preprocess_step_result``: ``input_elements, output_elements, missing_elements`` (input
    elements not literally in the output's), ``element_counts {input, output}``.
    """

    def preprocess(run: Any) -> Record:
        if _has_null_text(run.input) or _has_null_text(run.output):
            raise ValueError(NULL_TEXT)
        input_elements = extract_elements(joined_input_text(run.input).strip())
        output_elements = extract_elements(joined_output_text(run.output).strip())
        present = set(output_elements)
        return Record(
            input_elements=input_elements,
            output_elements=output_elements,
            missing_elements=[e for e in input_elements if e not in present],
            element_counts={"input": len(input_elements), "output": len(output_elements)},
        )

    return text_code_scorer(
        "completeness-scorer", "How much of the input's words and verbs the output covers",
        name="Completeness Scorer", preprocess=preprocess,
        score=lambda pre, _: coverage(pre["input_elements"], pre["output_elements"]))
