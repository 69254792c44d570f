"""The ``[cluster]`` table of the config file: one frozen ``ClusterSettings``, or None.

With no ``[cluster]`` table nothing changes: one DuckDB file and no service. With one, the node
keeps acknowledging spans after its local commit and copies them to the shared lake every
``flush_interval_seconds`` (docs/cluster.md). Parsing needs pydantic only, so ``tracescore
check`` validates the table without the ``[cluster]`` extra installed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._errors import ClusterConfigError

_NODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ClusterSettings(BaseModel):
    """What one cluster node needs (see docs/cluster.md for each key)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    node_id: str
    """Unique and stable across restarts: the node's flushes are found by it after a crash."""
    postgres: str
    """libpq connection string (``host=… port=… dbname=… user=…``) or ``postgresql://`` URI."""
    data_path: str
    """The lake's data directory, shared by every node (a mounted shared directory)."""
    flush_interval_seconds: float = Field(5.0, gt=0, le=3600)
    """How often the rows that arrived since the last flush are copied to the lake."""
    flush_rows: int = Field(50_000, ge=1)
    """Flush earlier once this many rows arrived since the last flush."""
    local_retention_seconds: float = Field(3600.0, ge=0)
    """How long flushed rows stay in the node's file (unflushed rows always stay)."""
    maintenance_interval_seconds: float = Field(300.0, gt=0)
    """How often a node tries the lake's maintenance (one node at a time, advisory lock)."""
    snapshot_retention_seconds: float = Field(86_400.0, ge=0)
    """Lake snapshots older than this are expired by maintenance (time travel stops there)."""
    retention_days: int = Field(0, ge=0)
    """Lake rows older than this many days of arrival are deleted by maintenance (0 = keep)."""
    lease_seconds: float = Field(30.0, ge=1, le=3600)
    """How long a node's claim on a judge pair holds unless renewed (each tick renews the
    pairs in flight past half their lease); a node that stops renewing (killed, paused) loses
    its pairs to another node after this long."""

    @field_validator("node_id")
    @classmethod
    def _check_node_id(cls, value: str) -> str:
        if not _NODE_ID.match(value):
            raise ValueError(
                "must be 1-64 letters, digits, '.', '_' or '-' (starting with a letter or "
                "digit), unique per node and the same after a restart, e.g. \"node-1\"")
        return value

    @field_validator("postgres")
    @classmethod
    def _check_postgres(cls, value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError('is empty; give a libpq connection string such as "host=db.internal '
                             'port=5432 dbname=tracescore user=tracescore"')
        if "'" in text and not text.startswith(("postgresql://", "postgres://")):
            raise ValueError("holds a single quote; write the connection string without quotes "
                             "(or as a postgresql:// URI)")
        return text

    @field_validator("data_path")
    @classmethod
    def _check_data_path(cls, value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError("is empty; give the lake's shared data directory")
        if "://" in text:
            raise ValueError(
                "names object storage; this build reads and writes the lake through a shared "
                "directory (mount it on every node and give its path)")
        if "'" in text:
            raise ValueError("holds a single quote; choose a directory without one")
        return text if text.endswith("/") else text + "/"


KEYS = tuple(ClusterSettings.model_fields)
"""Every ``[cluster]`` key, in the order of the docs."""


def parse_cluster(document: Mapping[str, Any], *, source: str) -> ClusterSettings | None:
    """The ``[cluster]`` table of a parsed config file, validated (None when absent).

    Raises ``ClusterConfigError`` naming the key and ``source`` (the file).
    """
    table = document.get("cluster")
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise ClusterConfigError(f"{source}: [cluster] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ClusterConfigError(
            f"{source}: unknown key [cluster].{unknown[0]}; the keys are {', '.join(KEYS)}")
    try:
        return ClusterSettings(**table)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else "?"
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "missing":
            raise ClusterConfigError(
                f"{source}: [cluster].{key} is required in cluster mode; see docs/cluster.md"
            ) from None
        shown = "" if key == "postgres" else f" (got {error.get('input')!r})"  # may hold a password
        raise ClusterConfigError(f"{source}: [cluster].{key} {message}{shown}") from None


__all__ = ["KEYS", "ClusterSettings", "parse_cluster"]
