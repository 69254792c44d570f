"""The running set of scorers: entries from ``[[scorers]]`` or ``register(...)``, each resolved to
a ``Scorer`` with its id, target, sample rate, filter and version.

``use`` names where the scorer lives: a prebuilt scorer's id in ``tracescore.scorers.CATALOGUE``
(``"faithfulness-scorer"``), ``"package.module:attr"`` (attr may be dotted) or
``"path/to/file.py:attr"`` (a path relative to the working directory, else to the config file's
directory). The object is a ``Scorer``, or a factory called with ``args`` that returns one. A
catalogue factory given ``model`` and ``api_base`` (``needs_judge``) gets them as one ``Judge``.

The version is a stable hash of what decides the entry's results (use, args, target, filter,
sample rate and segments) and of the scorer's source (``_code_version``): change any of them,
or edit the scorer's code, and the scorer is a new version, scored afresh.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ._code_version import code_hash
from ._config import ScorerEntry
from ._errors import ConfigError

if TYPE_CHECKING:
    from tracescore.scoring import Scorer

logger = logging.getLogger(__name__)


def scorer_version(
    *, use: str, args: Mapping[str, Any], target: str, filter: str | None, sample_rate: float,
    sample: Sequence[tuple[str, float]] = (), code: str = "",
) -> str:
    """A stable 16-hex-digit hash of an entry's config (key order and spacing do not matter),
    its sample segments and the hash of its source (``code``; neither counts when empty)."""
    fields: dict[str, Any] = {"use": use, "args": dict(args), "target": target,
                              "filter": filter, "sample_rate": float(sample_rate)}
    if sample:
        fields["sample"] = [[where, float(rate)] for where, rate in sample]
    if code:
        fields["code"] = code
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RegisteredScorer:
    """One scorer of the running set."""

    id: str
    scorer: Scorer[Any, Any] | None
    """None when the entry is disabled and could not be built (see ``disabled_reason``)."""
    version: str
    use: str
    target: str = "trace"
    sample_rate: float = 1.0
    filter: str | None = None
    enabled: bool = True
    disabled_reason: str | None = None
    uses_judge: bool = False
    """True when the scorer calls a judge (subject to the budget)."""
    args: Mapping[str, Any] = field(default_factory=dict)
    sample: tuple[tuple[str, float], ...] = ()
    """(SQL predicate over ``traces``, rate) segments; the first match gives a trace's rate."""
    daily_spend_target_usd: float | None = None
    """The judge spend per UTC day its rates are paced to (``_segments.SpendPacer``)."""
    judge_cache: bool | None = None
    """Cache its judge answers: True always, False never, None at temperature 0."""
    judge_cache_epoch: int = 0
    judge_timeout_s: float | None = None
    """Its judge timeout (None: ``[live] judge_timeout_seconds``)."""


class Registry:
    """An ordered set of scorers by id; built once at start-up and handed to the scheduler."""

    def __init__(self) -> None:
        self._by_id: dict[str, RegisteredScorer] = {}

    def __iter__(self) -> Iterator[RegisteredScorer]:
        return iter(list(self._by_id.values()))

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, scorer_id: object) -> bool:
        return scorer_id in self._by_id

    def get(self, scorer_id: str) -> RegisteredScorer | None:
        """The scorer with this id, or None."""
        return self._by_id.get(scorer_id)

    def enabled(self) -> list[RegisteredScorer]:
        """The scorers that run."""
        return [s for s in self._by_id.values() if s.enabled and s.scorer is not None]

    def register(
        self,
        scorer: Scorer[Any, Any],
        *,
        id: str | None = None,  # noqa: A002 - the config key's name
        target: str = "trace",
        sample_rate: float = 1.0,
        filter: str | None = None,  # noqa: A002
        enabled: bool = True,
        version: str | None = None,
        **options: Any,
    ) -> RegisteredScorer:
        """Add a scorer built in Python; ``version`` defaults to a hash of its id, options and
        source. ``options`` are the other ``[[scorers]]`` keys (``sample``,
        ``daily_spend_target_usd``, ``judge_cache``, ``judge_cache_epoch``,
        ``judge_timeout_seconds``)."""
        _require_scorer(scorer, what="register()")
        try:
            entry = ScorerEntry.model_validate(
                {"use": f"python:{scorer.id}", "id": id or scorer.id, "target": target,
                 "sample_rate": sample_rate, "filter": filter, "enabled": enabled, **options}
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"register({scorer.id!r}): key {key!r}: {first['msg']}") from None
        item = RegisteredScorer(
            id=entry.id or scorer.id,
            scorer=scorer,
            version=version or scorer_version(
                use=entry.use, args={}, target=entry.target, filter=entry.filter,
                sample_rate=entry.sample_rate, sample=_segments(entry),
                code=code_hash(scorer.code_objects)),
            use=entry.use, target=entry.target, sample_rate=entry.sample_rate,
            filter=entry.filter, enabled=entry.enabled, uses_judge=uses_judge(scorer),
            **_running_options(entry),
        )
        return self._add(item, label=f"register({item.id!r})")

    def add_entry(
        self,
        entry: ScorerEntry,
        *,
        index: int = 0,
        base_dir: Path | None = None,
        judge_model: str | None = None,
        judge_api_base: str | None = None,
        source: str = "the config file",
    ) -> RegisteredScorer:
        """Build and add one ``[[scorers]]`` entry; raise ``ConfigError`` naming it and the key."""
        label = f"[[scorers]] entry #{index}" + (f" (id {entry.id!r})" if entry.id else "")
        where = f"{label} in {source}"
        args = dict(entry.args)
        disabled_reason = None if entry.enabled else "enabled = false"
        if entry.needs_judge:
            if judge_model:
                args.setdefault("model", judge_model)
                if judge_api_base:
                    args.setdefault("api_base", judge_api_base)
            elif entry.enabled:
                disabled_reason = (
                    "needs a judge model: set TRACESCORE_JUDGE_MODEL (or [live] judge_model)"
                )
        scorer: Scorer[Any, Any] | None = None
        code = ""
        if disabled_reason is None:
            scorer = build_scorer(entry.use, args, base_dir=base_dir, where=where)
            code = code_hash([*scorer.code_objects, _named_object(entry.use, base_dir)])
        version = scorer_version(use=entry.use, args=args, target=entry.target,
                                 filter=entry.filter, sample_rate=entry.sample_rate,
                                 sample=_segments(entry), code=code)
        if entry.alignment is not None:
            scorer, version = _aligned(scorer, entry.alignment, version, base_dir=base_dir,
                                       where=where)
        # A disabled entry without an id: a catalogue id names it; an import path is built once
        # to learn the scorer's own id (never scheduled).
        scorer_id = entry.id or (
            scorer.id if scorer is not None
            else entry.use if catalogue_factory(entry.use) is not None
            else _disabled_id(entry, args, base_dir=base_dir, where=where))
        item = RegisteredScorer(
            id=scorer_id,
            scorer=scorer, version=version, use=entry.use, target=entry.target,
            sample_rate=entry.sample_rate, filter=entry.filter,
            enabled=disabled_reason is None, disabled_reason=disabled_reason,
            uses_judge=uses_judge(scorer) if scorer is not None else entry.needs_judge,
            args=args, **_running_options(entry),
        )
        return self._add(item, label=where)

    @classmethod
    def from_entries(
        cls,
        entries: Sequence[ScorerEntry],
        *,
        base_dir: Path | None = None,
        judge_model: str | None = None,
        judge_api_base: str | None = None,
        source: str = "the config file",
    ) -> Registry:
        """Build the registry of validated ``[[scorers]]`` entries."""
        registry = cls()
        for index, entry in enumerate(entries, start=1):
            registry.add_entry(entry, index=index, base_dir=base_dir, judge_model=judge_model,
                               judge_api_base=judge_api_base, source=source)
        return registry

    def _add(self, item: RegisteredScorer, *, label: str) -> RegisteredScorer:
        if item.id in self._by_id:
            raise ConfigError(
                f"{label}: key 'id': a scorer with id {item.id!r} is already registered; "
                "set a different id"
            )
        self._by_id[item.id] = item
        return item


def _segments(entry: ScorerEntry) -> tuple[tuple[str, float], ...]:
    return tuple((segment.where, segment.rate) for segment in entry.sample)


def _running_options(entry: ScorerEntry) -> dict[str, Any]:
    """The ``RegisteredScorer`` fields of an entry that shape its runs, not its version."""
    return {"sample": _segments(entry), "daily_spend_target_usd": entry.daily_spend_target_usd,
            "judge_cache": entry.judge_cache, "judge_cache_epoch": entry.judge_cache_epoch,
            "judge_timeout_s": entry.judge_timeout_seconds}


def _named_object(use: str, base_dir: Path | None) -> Any:
    """What ``use`` names (a factory, a Scorer's module), for the code hash; None for a
    catalogue id or ``python:`` (their code is the scorer's own functions)."""
    if catalogue_factory(use) is not None or use.startswith("python:"):
        return None
    obj = load_object(use, base_dir=base_dir)
    return None if isinstance(obj, _scorer_class()) else obj
def _aligned(scorer: Scorer[Any, Any] | None, path: str, version: str, *,
             base_dir: Path | None, where: str) -> tuple[Scorer[Any, Any] | None, str]:
    """The entry's scorer with the alignment of file ``path`` applied, and its version (the
    alignment's); ``ConfigError`` when the file was fitted on another version."""
    from tracescore.labels import AlignError, load_alignment

    try:
        alignment = load_alignment(path, base_dir=base_dir, where=f"{where}: key 'alignment'")
    except AlignError as exc:
        raise ConfigError(str(exc)) from None
    if alignment.parent_version != version:
        raise ConfigError(
            f"{where}: key 'alignment': {path!r} was fitted on version "
            f"{alignment.parent_version[:8]}, but this entry is version {version[:8]} (its use, "
            "args, target, filter or sample rate changed); run `tracescore align` again")
    return (alignment.apply(scorer) if scorer is not None else None), alignment.version


DISABLED_JUDGE_MODEL = "judge-model-not-set"
"""The ``model`` a disabled judge entry is built with to learn its id (no call is made)."""


def _disabled_id(entry: ScorerEntry, args: Mapping[str, Any], *, base_dir: Path | None,
                 where: str) -> str:
    """The id of a disabled entry without ``id``: the scorer's own, from building it once (a
    judge entry without a judge model gets a placeholder model); it is never scheduled."""
    if entry.needs_judge and "model" not in args:
        args = {**args, "model": DISABLED_JUDGE_MODEL}
    return build_scorer(entry.use, args, base_dir=base_dir, where=where).id


def _scorer_class() -> type[Scorer[Any, Any]]:
    from tracescore.scoring import Scorer

    return Scorer


def _require_scorer(obj: object, *, what: str) -> None:
    if not isinstance(obj, _scorer_class()):
        raise ConfigError(f"{what}: expected a tracescore Scorer, got {type(obj).__name__}")


def uses_judge(scorer: Scorer[Any, Any]) -> bool:
    """True when the scorer has a judge or a prompt step (it spends judge tokens)."""
    if getattr(scorer, "judge", None) is not None or getattr(scorer, "judges", None):
        return True
    steps = getattr(scorer, "_steps", None) or {}
    return any(getattr(spec, "kind", None) == "prompt" for spec in steps.values())


def build_scorer(
    use: str, args: Mapping[str, Any], *, base_dir: Path | None = None, where: str = "use"
) -> Scorer[Any, Any]:
    """Resolve ``use`` and return the Scorer it names (calling a factory with ``args``)."""
    prebuilt = catalogue_factory(use)
    if prebuilt is not None:
        obj: Any = prebuilt
        args = _judge_args(args)
    else:
        obj = load_object(use, base_dir=base_dir, where=where)
    scorer_cls = _scorer_class()
    if isinstance(obj, scorer_cls):
        if args:
            raise ConfigError(
                f"{where}: key 'args': {use!r} is a Scorer, not a factory, so it takes no args; "
                "remove args or point use at a factory"
            )
        return obj
    if not callable(obj):
        raise ConfigError(
            f"{where}: key 'use': {use!r} is a {type(obj).__name__}, not a Scorer or a factory"
        )
    args = {name: _nested_scorer(value, base_dir=base_dir, where=f"{where}, args.{name}")
            for name, value in args.items()}
    try:
        built = obj(**args)
    except TypeError as exc:
        raise ConfigError(f"{where}: key 'args': calling {use!r} failed: {exc}") from exc
    except Exception as exc:  # a factory's own error is the user's to see, as a sentence
        raise ConfigError(
            f"{where}: key 'use': the factory {use!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(built, scorer_cls):
        raise ConfigError(
            f"{where}: key 'use': calling {use!r} returned a {type(built).__name__}, "
            "not a Scorer"
        )
    return built


def _nested_scorer(value: Any, *, base_dir: Path | None, where: str) -> Any:
    """A factory argument written as a scorer entry (``{ use = "...", args = {...} }``, e.g. a
    cascade's ``cheap`` and ``expensive``) built into that Scorer; other values as they are."""
    if not isinstance(value, Mapping) or "use" not in value or not set(value) <= {"use", "args"}:
        return value
    inner_args = value.get("args") or {}
    if not isinstance(value["use"], str) or not isinstance(inner_args, Mapping):
        raise ConfigError(f"{where}: a scorer entry is {{ use = \"...\", args = {{...}} }}")
    return build_scorer(value["use"], inner_args, base_dir=base_dir, where=where)


def catalogue_factory(use: str) -> Any:
    """The factory of the prebuilt scorer with id ``use`` (``tracescore.scorers.CATALOGUE``),
    or None when ``use`` is not a catalogue id."""
    if ":" in use:
        return None
    from tracescore.scorers import CATALOGUE

    return CATALOGUE.get(use)


def _judge_args(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """``model`` + ``api_base`` as one ``Judge`` (the prebuilt LLM factories take ``model``)."""
    if "api_base" not in args or not isinstance(args.get("model"), str):
        return args
    from tracescore.scoring import Judge

    rest = {k: v for k, v in args.items() if k not in ("model", "api_base")}
    return {"model": Judge(model=args["model"], api_base=args["api_base"]), **rest}


def load_object(use: str, *, base_dir: Path | None = None, where: str = "use") -> Any:
    """Import what ``"module:attr"`` or ``"path/file.py:attr"`` names."""
    target, sep, attr = use.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(
            f"{where}: key 'use': {use!r} must look like 'package.module:name' or "
            "'path/to/file.py:name', or be a prebuilt scorer id (see "
            "tracescore.scorers.CATALOGUE, e.g. 'faithfulness-scorer')"
        )
    if target.endswith(".py") or "/" in target or "\\" in target:
        module = _load_file(target, base_dir=base_dir, where=where)
    else:
        module = _import_module(target, where=where)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(
                f"{where}: key 'use': {target!r} has no attribute {attr!r}"
            ) from None
    return obj


def _import_module(name: str, *, where: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # "package.module.attr": the last parts may be attributes of an importable module.
        head, _, tail = name.rpartition(".")
        if head and exc.name is not None and name.startswith(exc.name):
            parent = _import_module(head, where=where)
            if hasattr(parent, tail):
                return getattr(parent, tail)
        raise ConfigError(f"{where}: key 'use': cannot import {name!r}: {exc}") from None
    except Exception as exc:
        raise ConfigError(
            f"{where}: key 'use': importing {name!r} raised {type(exc).__name__}: {exc}"
        ) from exc


def _load_file(path_text: str, *, base_dir: Path | None, where: str) -> Any:
    path = Path(path_text).expanduser()
    candidates = [path] if path.is_absolute() else [Path.cwd() / path]
    if not path.is_absolute() and base_dir is not None:
        candidates.append(base_dir / path)
    found = next((c.resolve() for c in candidates if c.is_file()), None)
    if found is None:
        tried = ", ".join(str(c) for c in candidates)
        raise ConfigError(f"{where}: key 'use': no file {path_text!r} (looked at {tried})")
    module_name = "tracescore_user_" + hashlib.sha256(str(found).encode()).hexdigest()[:12]
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, found)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{where}: key 'use': cannot load {str(found)!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ConfigError(
            f"{where}: key 'use': running {str(found)!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    return module
