"""What labels are in Python: ``LabelSchema`` (what a person is asked), ``Label`` (one answer),
``QueueSpec`` (a review queue) and ``Agreement`` (how a judge version agrees with people).

A schema checks and normalizes values: a boolean label is true/false (numeric value 1/0), a
categorical label one of ``values`` (ordered worst to best; numeric value its index), a numeric
label a number within ``[min_value, max_value]``. ``normalized`` puts any of them on 0..1, the
scale judge scores are compared on.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

SchemaKind = Literal["boolean", "categorical", "numeric"]
TargetType = Literal["trace", "span", "session", "item"]

NAME_PATTERN = r"^[A-Za-z0-9_.:\-]+$"
DEFAULT_THRESHOLD = 0.5
"""A judge score at or above this counts as a positive verdict, unless the schema says."""

_TRUE = {"true", "yes", "y", "1", "pass", "good"}
_FALSE = {"false", "no", "n", "0", "fail", "bad"}
_HEX = re.compile(r"^[0-9a-f]+$")


class LabelSchema(BaseModel):
    """What annotators are asked about a target, and which judge's scores it checks."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    """Unique; labels and queues name it."""
    kind: SchemaKind
    """``boolean``, ``categorical`` (one of ``values``) or ``numeric`` (within a range)."""
    values: list[str] | None = None
    """Categorical: the allowed values, ordered from worst to best."""
    min_value: float | None = None
    """Numeric: the lowest allowed value."""
    max_value: float | None = None
    """Numeric: the highest allowed value."""
    rubric: str | None = None
    """What annotators should look for (shown on the review page)."""
    scorer_id: str | None = None
    """The scorer whose scores these labels check (``judge_agreement`` is kept for it)."""
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """A judge score (and a normalized label) at or above this is a positive verdict
    (default 0.5): κ of numeric schemas, TPR and TNR are computed at it."""
    created_at: datetime | None = None
    """When the schema was stored (UTC)."""

    @model_validator(mode="after")
    def _fits_kind(self) -> LabelSchema:
        if self.kind == "categorical":
            if not self.values or len(self.values) < 2:
                raise ValueError("a categorical schema needs at least two values")
            if len(set(self.values)) != len(self.values):
                raise ValueError("the values of a categorical schema must differ")
        elif self.values:
            raise ValueError(f"values belong to categorical schemas, not {self.kind}")
        if self.kind == "numeric":
            if self.min_value is None or self.max_value is None:
                raise ValueError("a numeric schema needs min_value and max_value")
            if not self.min_value < self.max_value:
                raise ValueError("min_value must be below max_value")
        elif self.min_value is not None or self.max_value is not None:
            raise ValueError(f"min_value and max_value belong to numeric schemas, not {self.kind}")
        return self

    @property
    def cutoff(self) -> float:
        """The threshold in effect (``threshold`` or 0.5)."""
        return DEFAULT_THRESHOLD if self.threshold is None else self.threshold

    def parse(self, value: Any) -> tuple[str, float]:
        """A label value as stored: (text, numeric value); ValueError naming what is allowed."""
        if self.kind == "boolean":
            if isinstance(value, bool):
                return ("true", 1.0) if value else ("false", 0.0)
            text = str(value).strip().lower()
            if isinstance(value, int | float) and value in (0, 1):
                text = str(int(value))
            if text in _TRUE:
                return "true", 1.0
            if text in _FALSE:
                return "false", 0.0
            raise ValueError(f"schema {self.name!r} is boolean: give true or false, "
                             f"got {value!r}")
        if self.kind == "categorical":
            assert self.values is not None
            text = str(value)
            if text not in self.values:
                raise ValueError(f"schema {self.name!r} takes one of {self.values}, got {value!r}")
            return text, float(self.values.index(text))
        assert self.min_value is not None and self.max_value is not None
        if isinstance(value, bool):
            raise ValueError(f"schema {self.name!r} is numeric: give a number, got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"schema {self.name!r} is numeric: give a number, "
                             f"got {value!r}") from None
        if not math.isfinite(number) or not self.min_value <= number <= self.max_value:
            raise ValueError(f"schema {self.name!r} takes a number from {self.min_value:g} to "
                             f"{self.max_value:g}, got {value!r}")
        return f"{number:g}", number

    def normalized(self, number: float) -> float:
        """A stored numeric value on 0..1 (what judge scores are compared with)."""
        if self.kind == "categorical":
            assert self.values is not None
            return number / (len(self.values) - 1)
        if self.kind == "numeric":
            assert self.min_value is not None and self.max_value is not None
            return (number - self.min_value) / (self.max_value - self.min_value)
        return number

    def choices(self) -> list[str]:
        """The values a person picks from on the review page (numeric: the integers of small
        ranges; empty for other numeric ranges, which take typed numbers)."""
        if self.kind == "boolean":
            return ["true", "false"]
        if self.kind == "categorical":
            return list(self.values or [])
        assert self.min_value is not None and self.max_value is not None
        low, high = self.min_value, self.max_value
        if low.is_integer() and high.is_integer() and high - low <= 9:
            return [f"{v:g}" for v in range(int(low), int(high) + 1)]
        return []


class Label(BaseModel):
    """One person's answer about one target (a trace, a span, a session or a dataset item).

    JSONL lines of ``tracescore labels import`` are this shape:
    ``{"trace_id", "span_id"?, "schema", "value", "annotator"?, "comment"?}``.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_name: str = Field(validation_alias=AliasChoices("schema_name", "schema"),
                             min_length=1)
    """The label schema answered."""
    value: Any
    """The answer: true/false, one of the schema's values, or a number in its range."""
    trace_id: str | None = None
    span_id: str | None = None
    session_id: str | None = None
    item_id: str | None = None
    target_type: TargetType | None = None
    """Inferred when left out: item, else session, else span (a span id given), else trace."""
    annotator: str | None = Field(default=None, max_length=200)
    comment: str | None = Field(default=None, max_length=20_000)
    queue: str | None = None
    """The review queue this label answers (its item is then done for the annotator)."""
    label_id: str | None = None
    created_at: datetime | None = None

    @field_validator("trace_id", "span_id")
    @classmethod
    def _hex_id(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip().lower()
        if not _HEX.match(text):
            raise ValueError(f"must be hexadecimal, got {value!r}")
        return text

    @model_validator(mode="after")
    def _target(self) -> Label:
        if self.target_type is None:
            self.target_type = ("item" if self.item_id else "session" if self.session_id
                                else "span" if self.span_id else "trace")
        need = {"trace": ("trace_id",), "span": ("trace_id", "span_id"),
                "session": ("session_id",), "item": ("item_id",)}[self.target_type]
        missing = [name for name in need if not getattr(self, name)]
        if missing:
            raise ValueError(f"a {self.target_type} label needs {' and '.join(missing)}")
        return self

    @property
    def target_key(self) -> str:
        """The target as one string (``trace:<id>``, ``span:<trace>/<span>``, ...)."""
        return target_key(self.target_type or "trace", trace_id=self.trace_id,
                          span_id=self.span_id, session_id=self.session_id,
                          item_id=self.item_id)


def target_key(target_type: str, *, trace_id: str | None = None, span_id: str | None = None,
               session_id: str | None = None, item_id: str | None = None) -> str:
    """One string naming a label target (review queues key their items by it)."""
    if target_type == "span":
        return f"span:{trace_id}/{span_id}"
    if target_type == "session":
        return f"session:{session_id}"
    if target_type == "item":
        return f"item:{item_id}"
    return f"trace:{trace_id}"


class QueueSpec(BaseModel):
    """A review queue: what to label (a selection of targets and a size), with which schemas,
    by how many annotators per item."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    schemas: list[str] = Field(min_length=1)
    """The label schemas asked for each item, in order."""
    target_type: Literal["trace", "session", "item"] = "trace"
    selection: str | None = None
    """A SQL predicate over ``traces`` (target trace), ``sessions`` (session) or
    ``dataset_items`` (item); subqueries may read ``scores`` (low scores, two scorers that
    disagree)."""
    dataset: str | None = None
    """Target item: the dataset whose current items are queued."""
    size: int = Field(default=100, ge=1, le=100_000)
    order: Literal["random", "newest", "oldest"] = "random"
    """Which matching targets are taken: a seeded random sample, or by time."""
    seed: int = 0
    annotators_per_item: int = Field(default=1, ge=1, le=50)
    scorer_id: str | None = None
    """Whose score and reason the page reveals after labelling (default: the first schema's
    scorer)."""
    hide_judge: bool | None = None
    """Hide the judge's score and reason until the item is labelled (default: ``[labels]
    hide_judge``)."""
    lease_seconds: float = Field(default=900.0, gt=0, le=7 * 86400)
    """How long a claimed item stays with its annotator."""
    description: str | None = None

    @field_validator("selection")
    @classmethod
    def _one_predicate(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if ";" in value:
            raise ValueError("must be one SQL predicate, without ';'")
        return value.strip()

    @model_validator(mode="after")
    def _dataset_for_items(self) -> QueueSpec:
        if (self.target_type == "item") != (self.dataset is not None):
            raise ValueError("a queue of dataset items names its dataset (and only such a "
                             "queue does)")
        return self


class Agreement(BaseModel):
    """How one scorer version's scores agree with people's labels of one schema."""

    scorer_id: str
    scorer_version: str
    schema_name: str
    schema_kind: str | None = None
    n: int
    """Labelled targets with a score of this version (several annotators: one consensus)."""
    kappa: float | None = None
    """Cohen's κ between the judge's verdicts and people's (None when undefined)."""
    kappa_low: float | None = None
    kappa_high: float | None = None
    spearman: float | None = None
    spearman_low: float | None = None
    spearman_high: float | None = None
    mae: float | None = None
    """Mean absolute error between the score and the label on 0..1."""
    mae_low: float | None = None
    mae_high: float | None = None
    tpr: float | None = None
    """Share of the targets people judged positive that the judge did too."""
    tpr_low: float | None = None
    tpr_high: float | None = None
    tnr: float | None = None
    """Share of the targets people judged negative that the judge did too."""
    tnr_low: float | None = None
    tnr_high: float | None = None
    threshold: float | None = None
    """The score at or above which the judge's verdict counts as positive."""
    updated_at: datetime | None = None

    @property
    def text(self) -> str:
        """``agrees with people κ 0.72 [0.61–0.81], n 140`` (what score cards show)."""
        return agreement_text(self.kappa, self.kappa_low, self.kappa_high, self.n)


def kappa_text(kappa: float | None, low: float | None, high: float | None) -> str:
    """``κ 0.72 [0.61–0.81]`` (the interval left out when there is none)."""
    if kappa is None:
        return "κ undefined"
    interval = f" [{low:.2f}–{high:.2f}]" if low is not None and high is not None else ""
    return f"κ {kappa:.2f}{interval}"


def agreement_text(kappa: float | None, low: float | None, high: float | None, n: int) -> str:
    """One line about a judge version's agreement with people."""
    if kappa is None:
        return f"agreement with people undefined (n {n}: one class only)"
    return f"agrees with people {kappa_text(kappa, low, high)}, n {n}"


def json_value(value: Any) -> Any:
    """A JSON column's value as read (JSON text) parsed; other values as they are."""
    import json

    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


__all__ = [
    "DEFAULT_THRESHOLD",
    "Agreement",
    "Label",
    "LabelSchema",
    "QueueSpec",
    "SchemaKind",
    "TargetType",
    "agreement_text",
    "json_value",
    "kappa_text",
    "target_key",
]
