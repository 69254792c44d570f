"""An aligned judge version: rewritten instructions and/or few-shot examples from labelled
disagreements, applied to a scorer's prompt steps.

``Alignment.apply(scorer)`` returns the scorer with an input processor on each prompt step's
judge (the reason step aside): it replaces the judge's instructions inside the system message
(leaving an injected output schema in place) and appends the examples. The version is a hash
of the parent version and of what changed, so the same alignment is the same version on any
machine. An alignment is written as a JSON file; a ``[[scorers]]`` entry opts in with
``alignment = "that/file.json"`` (nothing replaces a running version silently).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._errors import AlignError

EXAMPLES_HEADING = "Examples a human expert labelled (follow these judgements on similar cases):"
"""The first line of the examples block appended to the judge's system message."""
SKIPPED_STEPS = ("generate_reason",)
"""Steps an alignment leaves alone: the reason explains the score, it does not decide it."""
EXAMPLE_CHARS = 1200
"""Longest input or output text one example carries."""


def render(value: Any, limit: int = EXAMPLE_CHARS) -> str:
    """A scorer input or output as short text: messages as ``role: text`` lines, else JSON."""
    if isinstance(value, Mapping) and isinstance(value.get("input_messages"), list):
        value = [*(value.get("system_messages") or ()),
                 *(value.get("remembered_messages") or ()), *value["input_messages"]]
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m
                                                 for m in value):
        text = "\n".join(f"{m['role']}: {m.get('content') or ''}".rstrip() for m in value)
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Example:
    """One labelled case shown to the judge."""

    input: str
    output: str
    verdict: str
    """The person's label, as text."""
    target_score: float
    """The score that label means (0..1)."""
    comment: str | None = None

    def text(self, number: int) -> str:
        """The example as it appears in the system message."""
        lines = [f"Example {number}", f"Input: {self.input}", f"Output: {self.output}",
                 f"Human verdict: {self.verdict} (a matching score is {self.target_score:g})"]
        if self.comment:
            lines.append(f"Why: {self.comment}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Alignment:
    """A judge version fitted to labels (``tracescore align`` writes it)."""

    scorer_id: str
    parent_version: str
    method: str
    """``few_shot``, ``rewrite`` or ``rewrite+few_shot``."""
    instructions: str | None = None
    """Replaces the judge's instructions when set."""
    examples: tuple[Example, ...] = ()
    schema_name: str | None = None
    label_set: str | None = None
    """A hash of the labels it was fitted on (target, value) — the training split."""
    label_count: int = 0
    seed: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    """Held-out agreement and cost before and after (what ``align`` measured)."""

    @property
    def version(self) -> str:
        """16 hex digits from the parent version and the changes."""
        canonical = json.dumps({"parent": self.parent_version, "instructions": self.instructions,
                                "examples": [asdict(e) for e in self.examples]},
                               sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]

    def examples_block(self) -> str:
        """The few-shot block appended to the system message ("" without examples)."""
        if not self.examples:
            return ""
        body = "\n\n".join(e.text(i) for i, e in enumerate(self.examples, start=1))
        return f"{EXAMPLES_HEADING}\n\n{body}"

    def apply(self, scorer: Any) -> Any:
        """``scorer`` with this alignment on each prompt step's judge."""
        from tracescore.scoring import Judge

        block = self.examples_block()

        def change(step: str, judge: Judge) -> Judge:
            if step in SKIPPED_STEPS:
                return judge
            processor = AlignedMessages(original=judge.instructions or "",
                                        instructions=self.instructions, examples=block)
            return judge.replace(input_processors=(*judge.input_processors, processor))

        return scorer.with_judges(change)

    def to_json(self) -> dict[str, Any]:
        """The alignment file's content."""
        return {"scorer_id": self.scorer_id, "version": self.version,
                "parent_version": self.parent_version, "method": self.method,
                "instructions": self.instructions,
                "examples": [asdict(e) for e in self.examples],
                "schema_name": self.schema_name, "label_set": self.label_set,
                "label_count": self.label_count, "seed": self.seed, "metrics": self.metrics}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, where: str = "the alignment") -> Alignment:
        """Read an alignment file's content back (``AlignError`` when it does not fit)."""
        try:
            made = cls(scorer_id=str(data["scorer_id"]),
                       parent_version=str(data["parent_version"]), method=str(data["method"]),
                       instructions=data.get("instructions"),
                       examples=tuple(Example(**e) for e in data.get("examples") or ()),
                       schema_name=data.get("schema_name"), label_set=data.get("label_set"),
                       label_count=int(data.get("label_count") or 0), seed=data.get("seed"),
                       metrics=dict(data.get("metrics") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise AlignError(f"{where} is not an alignment written by `tracescore align`: "
                             f"{exc}") from None
        stated = data.get("version")
        if stated is not None and stated != made.version:
            raise AlignError(f"{where}: its content does not match its version {stated!r} "
                             "(was it edited? run `tracescore align` again)")
        return made


@dataclass(frozen=True)
class AlignedMessages:
    """The input processor of an aligned judge: instructions swapped, examples appended."""

    original: str
    instructions: str | None
    examples: str

    def __call__(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The request's messages with the alignment applied to the system message."""
        out = [dict(m) for m in messages]
        system = next((m for m in out if m.get("role") == "system"), None)
        if system is None:
            system = {"role": "system", "content": ""}
            out.insert(0, system)
        content = str(system.get("content") or "")
        if self.instructions is not None:
            if self.original and self.original in content:
                content = content.replace(self.original, self.instructions, 1)
            else:
                content = f"{self.instructions}\n\n{content}".strip()
        if self.examples:
            content = f"{content}\n\n{self.examples}".strip()
        system["content"] = content
        return out


def load_alignment(path: str | Path, *, base_dir: Path | None = None,
                   where: str = "alignment") -> Alignment:
    """The alignment in a JSON file (relative paths: the working directory, then
    ``base_dir``); ``AlignError`` naming the file when it cannot be read."""
    given = Path(path).expanduser()
    candidates = [given] if given.is_absolute() else [Path.cwd() / given]
    if not given.is_absolute() and base_dir is not None:
        candidates.append(base_dir / given)
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        tried = ", ".join(str(c) for c in candidates)
        raise AlignError(f"{where}: no alignment file {str(path)!r} (looked at {tried})")
    try:
        data = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AlignError(f"{where}: cannot read {found}: {exc}") from None
    if not isinstance(data, Mapping):
        raise AlignError(f"{where}: {found} does not hold a JSON object")
    return Alignment.from_json(data, where=f"{where} ({found})")


__all__ = [
    "EXAMPLES_HEADING",
    "AlignedMessages",
    "Alignment",
    "Example",
    "load_alignment",
    "render",
]
