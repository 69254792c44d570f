"""The tracescore server: settings, the FastAPI app (OTLP/HTTP, JSON API), OTLP/gRPC, ``serve``.

``load_settings(...)`` resolves flags > TRACESCORE_* env > config file > embedded default;
``create_app(settings)`` builds the app whose lifespan runs the store, gRPC and hooks;
``serve(settings)`` runs it with uvicorn.
"""

from ._api import EXPORT_TIME_COLUMNS, span_tree
from ._app import DEFAULT_HOOKS, DEFAULT_MOUNTS, LifespanHook, create_app, open_store
from ._arrow_pool import use_system_arrow_pool
from ._errors import ConfigError, ServeError, TraceIdError
from ._gc import tune_gc
from ._handlers import error_body
from ._ingest_stats import IngestStats
from ._malloc import limit_malloc_arenas, malloc_trimmed, trim_malloc
from ._serve import serve
from ._settings import (
    SERVER_KEYS,
    Settings,
    check_bind,
    default_config_path,
    load_settings,
    read_config,
)
from ._timeparse import parse_since
from ._trace_ids import check_trace_ref, resolve_trace_id

__all__ = [
    "DEFAULT_HOOKS",
    "DEFAULT_MOUNTS",
    "EXPORT_TIME_COLUMNS",
    "SERVER_KEYS",
    "ConfigError",
    "IngestStats",
    "LifespanHook",
    "ServeError",
    "Settings",
    "TraceIdError",
    "check_bind",
    "check_trace_ref",
    "create_app",
    "default_config_path",
    "error_body",
    "limit_malloc_arenas",
    "load_settings",
    "malloc_trimmed",
    "open_store",
    "parse_since",
    "read_config",
    "resolve_trace_id",
    "serve",
    "span_tree",
    "trim_malloc",
    "tune_gc",
    "use_system_arrow_pool",
]
