"""``align``: fit a judge to people's labels and prove it on held-out labels.

The labelled targets of a schema that carry a stored score of the scorer (its input and output
are re-scored, exactly as the judge saw them) are split, with a stated seed, into a training
part and a held-out part. From the training part's disagreements (the current version's verdict
against the person's) come the candidates: few-shot examples, an instruction rewrite proposed
by a judge model, and both. The current version and every candidate score the held-out items;
the report gives each one's agreement (κ, TPR/TNR or ρ/MAE, with bootstrap intervals) and its
judge cost per call. The winner, when a candidate beats the current version's κ, is an
``Alignment``: a new version recording its parent and the label set it was fitted on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._agreement import agreement_row, consensus, verdicts
from ._alignment import Alignment, Example, render
from ._errors import AlignError
from ._models import LabelSchema, json_value
from ._pairing import LABELS_SQL, paired_scores_sql

log = logging.getLogger(__name__)

Read = Callable[[str, Any], list[dict[str, Any]]]
"""``read(sql, params)``: a store read (``Store.read``, or ``POST /api/sql`` of a server)."""

MIN_ITEMS = 6
"""Labelled, scored targets ``align`` needs at least (some to learn from, some to test on)."""

ITEMS_SQL = paired_scores_sql("score, reason, input, output, ground_truth") + """
SELECT key, arg_max(score, (scorer_version = $parent, created_at)) AS score,
       arg_max(reason, (scorer_version = $parent, created_at)) AS reason,
       arg_max(input, (scorer_version = $parent, created_at)) AS input,
       arg_max(output, (scorer_version = $parent, created_at)) AS output,
       arg_max(ground_truth, (scorer_version = $parent, created_at)) AS ground_truth
FROM matched GROUP BY key ORDER BY key
"""

HISTORY_SQL = """
SELECT count(*) AS runs, avg(judge_cost) AS cost FROM scores
WHERE scorer_id = ? AND scorer_version = ? AND status = 'success'
"""

REWRITE_SYSTEM = (
    "You improve the instructions of an LLM judge so that its verdicts agree with a human "
    "expert's labels. Keep what the instructions get right and change what made the judge "
    "disagree; do not mention the examples themselves. Answer with a JSON object "
    '{"instructions": "<the new instructions>"}.')
REWRITE_SCHEMA = {"type": "object", "properties": {"instructions": {"type": "string"}},
                  "required": ["instructions"]}


@dataclass
class AlignItem:
    """One labelled target with what the judge saw."""

    key: str
    label: float
    """The (consensus) label as stored: 1/0, a category index, or a number."""
    comment: str | None
    input: Any
    output: Any
    ground_truth: Any
    score: float
    """The current version's stored score (another version's when it has none)."""
    reason: str | None


def split_keys(keys: Sequence[str], *, seed: int, holdout: float) -> tuple[list[str], list[str]]:
    """(train, held out): a seeded permutation of the sorted keys; the held-out share rounded,
    at least one on each side."""
    ordered = sorted(keys)
    permuted = [ordered[i] for i in np.random.default_rng(seed).permutation(len(ordered))]
    held = min(max(1, round(holdout * len(ordered))), len(ordered) - 1)
    return sorted(permuted[held:]), sorted(permuted[:held])


def label_set_hash(items: Sequence[AlignItem]) -> str:
    """16 hex digits naming the labels a version was fitted on (target and value)."""
    canonical = json.dumps(sorted((i.key, i.label) for i in items), separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def load_items(read: Read, schema: LabelSchema, parent_version: str) -> list[AlignItem]:
    """The schema's labelled targets that carry a stored score of its scorer."""
    labels = {r["key"]: r for r in read(LABELS_SQL, [schema.name])}
    rows = read(ITEMS_SQL, {"schema": schema.name, "scorer": schema.scorer_id,
                            "parent": parent_version})
    items = []
    for row in rows:
        labelled = labels.get(row["key"])
        value = consensus(schema, labelled["values"]) if labelled else None
        if value is None:
            continue
        comments = [c for c in (labelled or {}).get("comments") or () if c]
        items.append(AlignItem(key=row["key"], label=value,
                               comment="; ".join(comments) or None,
                               input=json_value(row["input"]),
                               output=json_value(row["output"]),
                               ground_truth=json_value(row["ground_truth"]),
                               score=float(row["score"]), reason=row["reason"]))
    return items


def _verdict_text(schema: LabelSchema, label: float) -> str:
    if schema.kind == "boolean":
        return "true" if label >= 0.5 else "false"
    if schema.kind == "categorical":
        return (schema.values or [])[int(label)]
    return f"{label:g}"


def few_shot_examples(schema: LabelSchema, train: Sequence[AlignItem], *, count: int,
                      seed: int) -> tuple[Example, ...]:
    """Up to ``count`` examples from the training disagreements, taking label values in turn
    (so one kind of mistake does not crowd out the others)."""
    people, judged = verdicts(schema, [i.label for i in train], [i.score for i in train])
    wrong = [item for item, p, j in zip(train, people, judged, strict=True) if p != j]
    order = np.random.default_rng(seed).permutation(len(wrong))
    by_value: dict[str, list[AlignItem]] = {}
    for index in order:
        item = wrong[int(index)]
        by_value.setdefault(_verdict_text(schema, item.label), []).append(item)
    picked: list[AlignItem] = []
    while len(picked) < count and any(by_value.values()):
        for queue in by_value.values():
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    return tuple(Example(input=render(i.input), output=render(i.output),
                         verdict=_verdict_text(schema, i.label),
                         target_score=round(float(schema.normalized(i.label)), 4),
                         comment=i.comment) for i in picked)


@dataclass
class CandidateResult:
    """One version scored on the held-out items."""

    name: str
    """``current``, ``few_shot``, ``rewrite`` or ``rewrite+few_shot``."""
    version: str
    agreement: dict[str, Any]
    """The ``judge_agreement``-shaped row of its held-out scores."""
    cost_per_call_usd: float | None
    calls: int
    failed: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        agreement = {k: v for k, v in self.agreement.items()
                     if k not in ("updated_at", "scorer_id", "schema_name", "scorer_version")}
        return {"name": self.name, "version": self.version, "agreement": agreement,
                "cost_per_call_usd": self.cost_per_call_usd, "calls": self.calls,
                "failed": self.failed}


@dataclass
class AlignReport:
    """What ``align`` did and found."""

    scorer_id: str
    parent_version: str
    schema_name: str
    seed: int
    train: int
    holdout: int
    disagreements: int
    """Training items where the current version's verdict differs from the person's."""
    dry_run: bool = False
    candidates: list[CandidateResult] = field(default_factory=list)
    winner: Alignment | None = None
    """The new version, or None when no candidate beat the current one (or a dry run)."""
    rewrite_cost_usd: float | None = None
    estimated_calls: int = 0
    """Scorer runs (and the rewrite call) a real run makes."""
    estimated_cost_usd: float | None = None
    """Dry run: those runs at the current version's average judge cost."""
    backfill_runs: int = 0
    backfill_cost_usd: float | None = None
    """What re-scoring the current version's history with the winner would cost."""
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"scorer_id": self.scorer_id, "parent_version": self.parent_version,
                "schema_name": self.schema_name, "seed": self.seed, "train": self.train,
                "holdout": self.holdout, "disagreements": self.disagreements,
                "dry_run": self.dry_run,
                "candidates": [c.as_dict() for c in self.candidates],
                "winner": self.winner.to_json() if self.winner else None,
                "rewrite_cost_usd": self.rewrite_cost_usd,
                "estimated_calls": self.estimated_calls,
                "estimated_cost_usd": self.estimated_cost_usd, "backfill_runs": self.backfill_runs,
                "backfill_cost_usd": self.backfill_cost_usd, "notes": self.notes}


async def _score_all(scorer: Any, items: Sequence[AlignItem], concurrency: int
                     ) -> tuple[list[float | None], list[float]]:
    """Each item's score (None when the run failed) and the judge cost of every run."""
    gate = asyncio.Semaphore(concurrency)
    from tracescore.scoring import ScorerRunError

    async def one(item: AlignItem) -> tuple[float | None, float]:
        async with gate:
            try:
                result = await scorer.run(input=item.input, output=item.output,
                                          ground_truth=item.ground_truth)
            except ScorerRunError as exc:
                log.warning("align: scoring %s failed: %s", item.key, exc)
                spent = exc.result.judge_cost() if exc.result is not None else None
                return None, spent or 0.0
            return result.score, result.judge_cost() or 0.0

    done = await asyncio.gather(*(one(item) for item in items))
    return [score for score, _ in done], [cost for _, cost in done]


async def _evaluate(name: str, version: str, scorer: Any, schema: LabelSchema,
                    items: Sequence[AlignItem], *, scorer_id: str, concurrency: int,
                    resamples: int, seed: int) -> CandidateResult:
    scores, costs = await _score_all(scorer, items, concurrency)
    kept = [(item.label, s) for item, s in zip(items, scores, strict=True) if s is not None]
    row = agreement_row(schema, scorer_id, version, [k[0] for k in kept], [k[1] for k in kept],
                        resamples=resamples, seed=seed)
    priced = sum(costs)
    return CandidateResult(name=name, version=version, agreement=row,
                           cost_per_call_usd=priced / len(items) if priced else None,
                           calls=len(items), failed=len(items) - len(kept))


async def _rewrite(judge: Any, schema: LabelSchema, original: str,
                   wrong: Sequence[AlignItem]) -> tuple[str | None, float | None]:
    """New instructions proposed by ``judge`` from the disagreements, and what it cost."""
    from tracescore.scoring import Judge, PromptStep, ScorerRunError, create_scorer

    cases = "\n\n".join(
        f"Case {i}\nInput: {render(item.input, 800)}\nOutput: {render(item.output, 800)}\n"
        f"The judge's score: {item.score:g}" + (f" ({item.reason})" if item.reason else "")
        + f"\nThe person's label: {_verdict_text(schema, item.label)}"
        + (f" ({item.comment})" if item.comment else "")
        for i, item in enumerate(wrong, start=1))
    prompt = (f"The judge's current instructions:\n{original or '(none)'}\n\n"
              f"What people were asked ({schema.name}, {schema.kind}): "
              f"{schema.rubric or 'no rubric given'}\n\nCases where the judge and the person "
              f"disagreed:\n\n{cases}\n\nWrite the judge's new instructions.")
    writer = Judge(model=judge.model, instructions=REWRITE_SYSTEM, api_base=judge.api_base,
                   api_key=judge.api_key, timeout_s=judge.timeout_s)
    rewrite = (create_scorer("tracescore-align-rewrite", "proposes judge instructions",
                             judge=writer)
               .analyze(PromptStep("rewrite the instructions", lambda run, results: prompt,
                                   output_schema=REWRITE_SCHEMA))
               .generate_score(lambda run, results: 1.0))
    try:
        result = await rewrite.run(input=None, output=None)
    except ScorerRunError as exc:
        log.warning("align: the instruction rewrite failed: %s", exc)
        return None, None
    text = (result.analyze_step_result or {}).get("instructions")
    return (str(text).strip() or None) if text else None, result.judge_cost()


async def align(read: Read, scorer: Any, *, scorer_id: str, parent_version: str,
                schema: LabelSchema, seed: int = 0, holdout: float = 0.3, examples: int = 4,
                rewrite_judge: Any = None, concurrency: int = 4, resamples: int = 1000,
                dry_run: bool = False) -> AlignReport:
    """Fit candidates on the training labels and measure them on the held-out ones.

    ``scorer`` is the current version (a judge scorer); ``rewrite_judge`` proposes the
    instruction rewrite (default: the scorer's first judge). Nothing is written here: the
    report's ``winner`` is the new version to store.
    """
    if schema.scorer_id != scorer_id:
        raise AlignError(f"schema {schema.name!r} checks scorer {schema.scorer_id!r}, not "
                         f"{scorer_id!r}; set its scorer_id first")
    judges = list(getattr(scorer, "judges", ()))
    if not judges:
        raise AlignError(f"scorer {scorer_id!r} has no judge (no prompt step): there is "
                         "nothing to align")
    items = load_items(read, schema, parent_version)
    if len(items) < MIN_ITEMS:
        raise AlignError(f"align needs at least {MIN_ITEMS} targets labelled with "
                         f"{schema.name!r} that carry a stored score of {scorer_id!r}; found "
                         f"{len(items)} (label more, or let the scorer score them first)")
    train_keys, held_keys = split_keys([i.key for i in items], seed=seed, holdout=holdout)
    by_key = {i.key: i for i in items}
    train = [by_key[k] for k in train_keys]
    held = [by_key[k] for k in held_keys]
    people, judged = verdicts(schema, [i.label for i in train], [i.score for i in train])
    wrong = [i for i, p, j in zip(train, people, judged, strict=True) if p != j]
    report = AlignReport(scorer_id=scorer_id, parent_version=parent_version,
                         schema_name=schema.name, seed=seed, train=len(train),
                         holdout=len(held), disagreements=len(wrong), dry_run=dry_run)
    [history] = read(HISTORY_SQL, [scorer_id, parent_version])
    report.backfill_runs = int(history["runs"] or 0)
    names = ["few_shot", "rewrite", "rewrite+few_shot"] if wrong else []
    report.estimated_calls = len(held) * (1 + len(names)) + (1 if wrong else 0)
    if not wrong:
        report.notes.append("the current version agrees with every training label: there is "
                            "no disagreement to learn from")
    if dry_run:
        per_call = history["cost"]
        if per_call is not None:
            report.estimated_cost_usd = float(per_call) * report.estimated_calls
        return report
    shots = few_shot_examples(schema, train, count=examples, seed=seed)
    original = judges[0].instructions or ""
    instructions = None
    if wrong:
        instructions, report.rewrite_cost_usd = await _rewrite(rewrite_judge or judges[0],
                                                               schema, original, wrong)
        if instructions is None:
            report.notes.append("the instruction rewrite gave nothing usable; its candidates "
                                "were left out")
    base: dict[str, Any] = {"scorer_id": scorer_id, "parent_version": parent_version,
                            "schema_name": schema.name, "label_set": label_set_hash(train),
                            "label_count": len(train), "seed": seed}
    candidates: list[tuple[str, Alignment]] = []
    if shots:
        candidates.append(("few_shot", Alignment(method="few_shot", examples=shots, **base)))
    if instructions:
        candidates.append(("rewrite", Alignment(method="rewrite", instructions=instructions,
                                                **base)))
        if shots:
            candidates.append(("rewrite+few_shot", Alignment(
                method="rewrite+few_shot", instructions=instructions, examples=shots, **base)))
    options: dict[str, Any] = {"scorer_id": scorer_id, "concurrency": concurrency,
                               "resamples": resamples, "seed": seed}
    report.candidates.append(await _evaluate("current", parent_version, scorer, schema, held,
                                             **options))
    for name, alignment in candidates:
        report.candidates.append(await _evaluate(name, alignment.version,
                                                 alignment.apply(scorer), schema, held,
                                                 **options))
    best = max(report.candidates, key=_rank)
    if best.name != "current" and _rank(best) > _rank(report.candidates[0]):
        chosen = dict(candidates)[best.name]
        metrics = {"before": report.candidates[0].as_dict(), "after": best.as_dict(),
                   "holdout": len(held)}
        report.winner = dataclasses.replace(chosen, metrics=metrics)
        cost = best.cost_per_call_usd
        report.backfill_cost_usd = cost * report.backfill_runs if cost is not None else None
    else:
        report.notes.append("no candidate agreed with the held-out labels better than the "
                            "current version; nothing was written")
    return report


def _rank(result: CandidateResult) -> tuple[float, float]:
    """Higher κ first; on a tie the cheaper version."""
    kappa = result.agreement.get("kappa")
    cost = result.cost_per_call_usd
    return (-2.0 if kappa is None else float(kappa), -(cost or 0.0))


def version_row(report: AlignReport, *, now: Any) -> dict[str, Any]:
    """The ``scorer_versions`` row of the report's winner."""
    winner = report.winner
    assert winner is not None
    metrics = winner.metrics
    return {"scorer_id": winner.scorer_id, "version": winner.version,
            "parent_version": winner.parent_version, "schema_name": winner.schema_name,
            "method": winner.method, "instructions": winner.instructions,
            "examples": winner.to_json()["examples"], "label_set": winner.label_set,
            "label_count": winner.label_count, "holdout_count": metrics.get("holdout"),
            "seed": winner.seed, "before": metrics.get("before"), "after": metrics.get("after"),
            "candidates": [c.as_dict() for c in report.candidates], "created_at": now}


__all__ = [
    "MIN_ITEMS",
    "AlignItem",
    "AlignReport",
    "CandidateResult",
    "align",
    "few_shot_examples",
    "label_set_hash",
    "load_items",
    "split_keys",
    "version_row",
]
