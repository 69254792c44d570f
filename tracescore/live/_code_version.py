"""A hash of a scorer's source, part of its live version: editing its code makes a new version.

The version of a ``[[scorers]]`` entry hashes its config (``use``, ``args``, ``target``, ...); the
code it runs is hashed too, so a changed step function scores traces again as a new version.
What is hashed is the contents of every source file that defines a function the scorer runs
(``Scorer.code_objects``: steps, prompt builders, ``prepare_run``, judge processors) and the
object ``use`` names (a factory's module). Whole files, not single functions, so a helper the
steps call in the same file counts too; a helper in another module does not (import it through
the scorer's module, or change the entry, to make a new version). Moving or renaming a file
does not change the hash; editing a comment in it does.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def code_hash(objects: Iterable[Any]) -> str:
    """16 hex digits over the source files defining ``objects`` ("" when none has a file)."""
    digests = sorted({digest for digest in map(_file_digest_of, objects) if digest})
    if not digests:
        return ""
    return hashlib.sha256("".join(digests).encode()).hexdigest()[:16]


def _file_digest_of(obj: Any) -> str | None:
    while isinstance(obj, functools.partial):
        obj = obj.func
    target = obj if inspect.isfunction(obj) or inspect.ismodule(obj) or inspect.isclass(obj) \
        or inspect.ismethod(obj) else type(obj)
    try:
        path = inspect.getsourcefile(target)
    except TypeError:  # a builtin: no source of ours
        return None
    if path is None:
        return None
    file = Path(path)
    try:
        stat = file.stat()
    except OSError:
        return None
    return _digest(str(file.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=1024)
def _digest(path: str, mtime_ns: int, size: int) -> str | None:
    """The sha256 of a file's bytes (remembered while its mtime and size stay the same)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


__all__ = ["code_hash"]
