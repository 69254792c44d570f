"""Versioning rules, pure: which rows a version sees, and ``name@version`` references.

Each change (``add_items``, ``remove_items``) makes version ``current + 1``; ``create_dataset``
makes version 1. Version ``N`` sees the items added at or before ``N`` and not removed at or
before ``N``, so every past version reads back exactly.
"""

from __future__ import annotations

from ._errors import DatasetNotFound

VISIBLE_SQL = "version_added <= ? AND (version_removed IS NULL OR version_removed > ?)"
"""The SQL form of ``is_visible`` (bind the version twice)."""


def is_visible(version_added: int, version_removed: int | None, version: int) -> bool:
    """True when an item with these versions belongs to ``version``."""
    return version_added <= version and (version_removed is None or version_removed > version)


def parse_ref(ref: str) -> tuple[str, int | None]:
    """``"name"`` → ``(name, None)``; ``"name@3"`` → ``(name, 3)``."""
    name, sep, tail = ref.rpartition("@")
    if not sep:
        return ref, None
    if not tail.isdigit() or not name:
        raise DatasetNotFound(
            f"{ref!r} is not a dataset reference; write 'name' or 'name@VERSION' (VERSION >= 1)"
        )
    return name, int(tail)


def check_version(name: str, version: int | None, current: int) -> int:
    """The version to read: ``version``, or ``current`` when None; refuse one that never was."""
    if version is None:
        return current
    if version < 1 or version > current:
        raise DatasetNotFound(
            f"dataset {name!r} has versions 1 to {current}; version {version} does not exist"
        )
    return version


__all__ = ["VISIBLE_SQL", "check_version", "is_visible", "parse_ref"]
