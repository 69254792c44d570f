"""``create_cascade_scorer``: a cheap judge first, the expensive one only when the cheap is unsure.

Judging every trace with the best model is the accurate and the expensive way; most traces are
easy. A cascade runs the ``cheap`` scorer, reads how sure it is, and runs the ``expensive``
scorer only when that confidence is below ``unsure_below``; the score of the judge that decided
is the cascade's score, and ``ScorerRunResult.decided_by`` (``scores.decided_by``) says which:
``"cheap"`` or ``"expensive"``.

The cheap scorer's confidence, first found of:

1. what it states: a number in [0, 1] under ``confidence`` in its generate_score judge output,
   its analyze or its preprocess step result (a judge asked for ``{"score", "confidence"}``);
2. a boolean classifier's P(true) read from log-probabilities
   (``create_classifier_scorer``): max(p, 1 − p);
3. its judge replies' token log-probabilities, when the provider gives them (the cascade asks
   for them): the probability of the least likely token of its generate_score reply (or of its
   last reply), ``JudgeExecution.confidence``.

No confidence at all counts as unsure (the expensive judge decides). A cheap run that is not
scorable ends the cascade (the expensive judge would be asked the same impossible question).
Both scorers' judge executions are the cascade's, their steps named ``cheap.<step>`` and
``expensive.<step>``, so spend and the expensive calls are counted. ``queue`` names a review
queue the live scorer hands unsure items to (``tracescore.live``; nothing happens where no queue
of that name exists). The analyze step result records ``cheap_score``, ``cheap_confidence``,
``confidence_source``, ``unsure`` and, when asked, ``expensive_score``.

In a config: ``use = "cascade"`` with ``args = { cheap = { use = "...", args = {...} },
expensive = { use = "...", args = {...} }, unsure_below = 0.7, queue = "name" }`` (the live
registry builds the two nested entries first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracescore.model import ScorerRun, ScorerRunResult, StepJudge
from tracescore.scoring import (
    Scorer,
    ScorerDefinitionError,
    ScorerRunError,
    judge_options,
    relay_judge_executions,
)

CASCADE_ID = "cascade"


class CascadeScorer(Scorer[Any, Any]):
    """A ``Scorer`` running ``cheap``, then ``expensive`` when ``cheap`` is unsure."""

    __slots__ = ("cheap", "expensive", "unsure_below", "queue")

    cheap: Scorer[Any, Any]
    expensive: Scorer[Any, Any]
    unsure_below: float
    queue: str | None

    def __init__(self, *, id: str, cheap: Scorer[Any, Any],  # noqa: A002 - the public name
                 expensive: Scorer[Any, Any], unsure_below: float,
                 queue: str | None = None) -> None:
        super().__init__(id=id, description=(
            f"{cheap.id} first; {expensive.id} when its confidence is below {unsure_below:g}"),
            type=cheap.type or expensive.type)
        sets = object.__setattr__
        sets(self, "cheap", cheap)
        sets(self, "expensive", expensive)
        sets(self, "unsure_below", unsure_below)
        sets(self, "queue", queue)
        sets(self, "_problem", None)

    def __repr__(self) -> str:
        return f"CascadeScorer(id={self.id!r}, cheap={self.cheap.id!r}, " \
               f"expensive={self.expensive.id!r}, unsure_below={self.unsure_below:g})"

    @property
    def judges(self) -> tuple[Any, ...]:
        """Both scorers' judges (what start-up checks and ``tracescore check`` look at)."""
        return (*self.cheap.judges, *self.expensive.judges)

    @property
    def code_objects(self) -> tuple[Any, ...]:
        """Both scorers' functions (the live version hashes their source)."""
        return (*self.cheap.code_objects, *self.expensive.code_objects)

    @property
    def steps(self) -> list[str]:
        """The two scorers, in the order they may run."""
        return ["cheap", "expensive"]

    async def run(
        self,
        run: ScorerRun | Mapping[str, Any] | None = None,
        /,
        *,
        input: Any = None,  # noqa: A002 - the public name
        output: Any = None,
        run_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
        ground_truth: Any = None,
        expected_trajectory: Any = None,
    ) -> ScorerRunResult:
        """Run ``cheap``, then ``expensive`` when ``cheap`` is unsure (module docstring)."""
        fields = {"input": input, "output": output, "run_id": run_id,
                  "request_context": request_context, "ground_truth": ground_truth,
                  "expected_trajectory": expected_trajectory}
        cheap = await _run_part(self, "cheap", self.cheap, run, fields, logprobs=True)
        judge = _prefixed("cheap", cheap)
        confidence, source = confidence_of(cheap)
        unsure = confidence is None or confidence < self.unsure_below
        evidence: dict[str, Any] = {"cheap_score": cheap.score, "cheap_confidence": confidence,
                                    "confidence_source": source, "unsure": unsure,
                                    "unsure_below": self.unsure_below}
        decided, by = cheap, "cheap"
        if unsure and cheap.not_scorable is None:
            decided = await _run_part(self, "expensive", self.expensive, run, fields,
                                      logprobs=False, before=judge)
            judge.update(_prefixed("expensive", decided))
            by = "expensive"
            evidence["expensive_score"] = decided.score
        if self.queue is not None:
            evidence["queue"] = self.queue
        return decided.model_copy(update={
            "scorer_id": self.id, "judge": judge, "decided_by": by,
            "analyze_step_result": evidence,
            "preprocess_step_result": {"cheap": cheap.analyze_step_result,
                                       "expensive": decided.analyze_step_result
                                       if by == "expensive" else None}})


async def _run_part(cascade: CascadeScorer, part: str, scorer: Scorer[Any, Any], run: Any,
                    fields: dict[str, Any], *, logprobs: bool,
                    before: dict[str, StepJudge] | None = None) -> ScorerRunResult:
    """One of the two runs, its judge executions reported as ``<part>.<step>``; a failure is
    the cascade's, its snapshot holding every execution so far."""
    try:
        with relay_judge_executions(f"{part}."), judge_options(logprobs=logprobs):
            return await scorer.run(run, **fields)
    except ScorerRunError as exc:
        snapshot = None
        if exc.result is not None or before:
            judge = dict(before or {})
            if exc.result is not None:
                judge.update(_prefixed(part, exc.result))
            base = exc.result or ScorerRunResult(run_id=str(fields.get("run_id") or ""))
            snapshot = base.model_copy(update={"scorer_id": cascade.id, "judge": judge})
        raise ScorerRunError(f"{part}.{exc.failed_step}", [f"{part}.{s}" for s in
                                                          exc.completed_steps],
                             snapshot, exc.cause, scorer_id=cascade.id) from exc.cause


def _prefixed(part: str, result: ScorerRunResult) -> dict[str, StepJudge]:
    return {f"{part}.{step}": record for step, record in (result.judge or {}).items()}


def confidence_of(result: ScorerRunResult) -> tuple[float | None, str | None]:
    """The cheap run's confidence and where it came from (``stated``, ``classifier``,
    ``logprobs``), or (None, None)."""
    executions = (result.judge or {}).get("generate_score")
    outputs = [ex.output for ex in executions.executions] if executions else []
    for value in (*outputs, result.analyze_step_result, result.preprocess_step_result):
        stated = value.get("confidence") if isinstance(value, dict) else None
        if isinstance(stated, int | float) and not isinstance(stated, bool) and (
                0 <= stated <= 1):
            return float(stated), "stated"
    evidence = result.analyze_step_result
    if isinstance(evidence, dict) and evidence.get("probability_source") == "logprobs":
        p = float(evidence["probability"])
        return max(p, 1 - p), "classifier"
    every = [ex for record in (result.judge or {}).values() for ex in record.executions]
    chosen = (executions.executions if executions else []) or every
    found = [ex.confidence for ex in chosen if ex.confidence is not None]
    if found:
        return found[-1], "logprobs"
    return None, None


def create_cascade_scorer(
    cheap: Scorer[Any, Any],
    expensive: Scorer[Any, Any],
    *,
    unsure_below: float = 0.7,
    queue: str | None = None,
    id: str = CASCADE_ID,  # noqa: A002 - the public name
) -> CascadeScorer:
    """A cascade of two scorers (see the module docstring).

    Args:
        cheap: the scorer asked first (a cheap judge).
        expensive: the scorer asked when ``cheap`` is unsure.
        unsure_below: ``cheap``'s confidence below which ``expensive`` decides (0..1).
        queue: a review queue for unsure items (live scoring hands them to it).
        id: the cascade's id.
    """
    for name, value in (("cheap", cheap), ("expensive", expensive)):
        if not isinstance(value, Scorer):
            raise ScorerDefinitionError(
                f"cascade {id!r}: {name} must be a Scorer (in a config: {{ use = \"...\", "
                f"args = {{...}} }}), got {type(value).__name__}")
    if isinstance(unsure_below, bool) or not isinstance(unsure_below, int | float) or not (
            0 <= unsure_below <= 1):
        raise ScorerDefinitionError(
            f"cascade {id!r}: unsure_below is a confidence between 0 and 1, got {unsure_below!r}")
    return CascadeScorer(id=id, cheap=cheap, expensive=expensive,
                         unsure_below=float(unsure_below), queue=queue)


__all__ = ["CascadeScorer", "confidence_of", "create_cascade_scorer"]
