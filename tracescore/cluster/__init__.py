"""Cluster mode: N tracescore nodes on one PostgreSQL and one DuckLake (docs/cluster.md).

With a ``[cluster]`` table in the config, a node still acknowledges spans after its local
commit; it copies them to the lake every ``flush_interval_seconds`` (``Flusher``), keeps the
traces and the scoring tables in PostgreSQL (schema derived from ``store.TABLES``), answers
users' SQL over the lake ∪ its unflushed rows (``ClusterStore``), and takes its turn at the
lake's maintenance. ``Coordination`` is how nodes share the scoring queue (``PgCoordination``).

Importing this room is cheap: duckdb, psycopg and the extensions load only when a node starts.
"""

from ._config import KEYS, ClusterSettings, parse_cluster
from ._coordination import Claim, Coordination, PairId, Spend
from ._errors import ClusterConfigError, ClusterError, ClusterUnavailable, FlushFailed
from ._flush import Flusher, FlushMark, FlushResult, FlushStats
from ._maintenance import Maintenance, MaintenanceResult
from ._node import ClusterNode, owner, pg_connect
from ._pg_coordination import PgCoordination
from ._pg_judge_cache import PgJudgeCache
from ._pg_schema import LAKE_TABLES, SCHEMA, pg_tables
from ._pg_writes import PgWrites
from ._reads import ClusterStore
from ._views import CLUSTER

__all__ = [
    "CLUSTER",
    "KEYS",
    "LAKE_TABLES",
    "SCHEMA",
    "Claim",
    "ClusterConfigError",
    "ClusterError",
    "ClusterNode",
    "ClusterSettings",
    "ClusterStore",
    "ClusterUnavailable",
    "Coordination",
    "FlushFailed",
    "FlushMark",
    "FlushResult",
    "FlushStats",
    "Flusher",
    "Maintenance",
    "MaintenanceResult",
    "PairId",
    "PgCoordination",
    "PgJudgeCache",
    "PgWrites",
    "Spend",
    "owner",
    "parse_cluster",
    "pg_connect",
    "pg_tables",
]
