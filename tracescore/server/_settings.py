"""Server settings: flag > TRACESCORE_* environment > config file > embedded default.

``load_settings`` reads the TOML config (``--config``, else ``TRACESCORE_CONFIG``, else the
embedded default ``config/tracescore.toml``), validates its ``[server]`` table, and merges it
with environment variables and flags through pydantic-settings into one frozen ``Settings``.
Other top-level tables (``[live]``, ``[[scorers]]``, …) are kept untouched in
``Settings.config`` for the rooms that own them.
"""

from __future__ import annotations

import contextvars
import ipaddress
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from ._errors import ConfigError

ENV_PREFIX = "TRACESCORE_"
_REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "tracescore.toml"
_file_values: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "tracescore_config_file_values", default=MappingProxyType({})
)


def default_config_path() -> Path:
    """The embedded default config: ``config/tracescore.toml`` of a checkout, else the copy
    shipped as package data (``tracescore/_data/tracescore.toml``)."""
    if _REPO_CONFIG.is_file():
        return _REPO_CONFIG
    from importlib.resources import files

    return Path(str(files("tracescore") / "_data" / "tracescore.toml"))


class Settings(BaseSettings):
    """Everything ``tracescore serve`` needs, resolved once at startup (frozen)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="forbid", validate_default=True
    )

    host: str = "127.0.0.1"
    """Interface to bind; a non-loopback address needs api_keys or insecure."""
    http_port: int = Field(4318, ge=0, le=65535)
    """OTLP/HTTP, the query API and the dashboard (0 = pick a free port)."""
    grpc_port: int = Field(4317, ge=0, le=65535)
    """OTLP/gRPC (0 = pick a free port)."""
    grpc: bool = True
    """Serve OTLP/gRPC at all."""
    db: str = "data/tracescore.duckdb"
    """The DuckDB file."""
    api_keys: Annotated[tuple[str, ...], NoDecode] = ()
    """Bearer tokens accepted; empty = no authentication. Env: comma-separated."""
    insecure: bool = False
    """Allow a non-loopback host without api_keys."""
    max_body_bytes: int = Field(16 * 1024 * 1024, gt=0)
    """Largest request body, counted after decompression."""
    api_max_body_bytes: int = Field(16 * 1024 * 1024, gt=0)
    """Largest ``/api/*`` request body (413 beyond, before it is parsed)."""
    api_max_items: int = Field(10_000, gt=0)
    """Most entries in one top-level list/object of an ``/api/*`` JSON body (items, results,
    scores, item_ids, params, ...); 413 beyond."""
    sql_row_limit: int = Field(10_000, gt=0)
    """Row cap of /api/sql."""
    sql_timeout_seconds: float = Field(30.0, gt=0)
    """Time limit of one /api/sql query."""
    sql_max_bytes: int = Field(32 * 1024 * 1024, gt=0)
    """Size cap of one /api/sql answer's rows (JSON bytes); "truncated": true beyond."""
    sql_max_concurrent: int = Field(4, ge=0)
    """User SQL statements running at once (each may hold 2,048 × its widest value in DuckDB's
    vectors); more wait their turn, up to twice their time limit; 0 = no limit."""
    max_pending_spans: int = Field(200_000, gt=0)
    """Rows that may wait for the writer before exports are refused with 503; one request
    with more is refused with 413."""
    max_pending_bytes: int = Field(256 * 1024 * 1024, gt=0)
    """Bytes (estimated text size) that may wait for the writer before exports get 503."""
    checkpoint_wal_bytes: int = Field(64 * 1024 * 1024, ge=1024 * 1024)
    """Write-ahead log size at which the writer checkpoints between commits even under load
    that never pauses (it checkpoints anyway once idle for 0.5 s, or past 32 MiB whenever no
    write is waiting)."""
    duckdb_vacuum: bool = False
    """Let DuckDB's checkpoints merge small row groups (its vacuum); off, a checkpoint costs
    what its WAL holds instead of now and then rewriting large runs of the table."""
    duckdb_reopen_after_checkpoints: int = Field(50, ge=0)
    """Reopen the database after this many writer checkpoints, once nothing is being written or
    read (0 = never): gives back what DuckDB holds for each row group while it stays open."""
    max_attribute_bytes: int = Field(1024 * 1024, ge=1024)
    """Longest string attribute value / log body stored (UTF-8 bytes); longer ones are cut
    and listed in the attribute tracescore.truncated_attributes."""
    retry_after_seconds: float = Field(1.0, gt=0)
    """Retry-After sent when the write queue is full."""
    decode_workers: int = Field(0, ge=0, le=64)
    """Processes that decode large OTLP trace bodies (0 = decode in the server process)."""
    duckdb_memory_limit: str = Field("256MB", pattern=r"^(\d+(\.\d+)?\s*([KMGT]i?B|B))?$")
    """DuckDB's memory limit (cache and query memory; more spills to disk); "" = DuckDB's
    default (80% of RAM)."""
    log_level: str = "info"
    """debug, info, warning or error."""

    _config_path: str | None = PrivateAttr(None)
    _config: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def config_path(self) -> str | None:
        """The config file these settings were read from (set by ``load_settings``)."""
        return self._config_path

    @property
    def config(self) -> dict[str, Any]:
        """The whole parsed config file, for the rooms that own its other tables
        (``[live]``, ``[[scorers]]``); ``config["server"]`` is the raw ``[server]`` table."""
        return self._config

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            keys = tuple(key.strip() for key in value.split(",") if key.strip())
            if not keys:
                raise ValueError(
                    "it is set but holds no key (an unset shell variable?); give at least one "
                    "key, or unset it to run without authentication"
                )
            return keys
        return value

    @field_validator("api_keys")
    @classmethod
    def _check_keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        keys = tuple(key.strip() for key in value)
        if any(not key for key in keys):
            raise ValueError(
                "an API key is empty or only whitespace (an unset shell variable?), and an empty "
                "key would let requests without a key in; give a real key or leave it out"
            )
        return keys

    @field_validator("log_level")
    @classmethod
    def _check_level(cls, value: str) -> str:
        level = value.lower()
        if level not in ("debug", "info", "warning", "error"):
            raise ValueError("must be one of debug, info, warning, error")
        return level

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags (init arguments) > environment > the config file's [server] table."""
        return (init_settings, env_settings, _ConfigFileSource(settings_cls))

    @property
    def is_loopback(self) -> bool:
        """True when ``host`` only accepts local connections."""
        if self.host in ("localhost", ""):
            return self.host == "localhost"
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    @property
    def auth_enabled(self) -> bool:
        """True when requests must carry one of ``api_keys``."""
        return bool(self.api_keys)


SERVER_KEYS = frozenset(Settings.model_fields)


class _ConfigFileSource(PydanticBaseSettingsSource):
    """The ``[server]`` table of the config file chosen by ``load_settings``."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return _file_values.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_file_values.get())


def read_config(path: str | os.PathLike[str] | None) -> tuple[Path, dict[str, Any]]:
    """Parse a config file (or the embedded default when ``path`` is None)."""
    chosen = Path(path) if path is not None else default_config_path()
    try:
        text = chosen.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {chosen} does not exist; check --config") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {chosen}: {exc}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {chosen} is not valid TOML: {exc}") from None
    server = document.get("server", {})
    if not isinstance(server, dict):
        raise ConfigError(f"{chosen}: [server] must be a table")
    unknown = sorted(set(server) - SERVER_KEYS)
    if unknown:
        raise ConfigError(
            f"{chosen}: unknown key [server].{unknown[0]}; the keys are "
            f"{', '.join(sorted(SERVER_KEYS))}"
        )
    return chosen, document


def load_settings(config: str | os.PathLike[str] | None = None, **flags: Any) -> Settings:
    """Resolve settings: ``flags`` (None values are ignored) > TRACESCORE_* env > config file.

    ``config`` defaults to ``TRACESCORE_CONFIG``, else the embedded default. Raises
    ``ConfigError`` naming the key and its source.
    """
    if config is None:
        config = os.environ.get(f"{ENV_PREFIX}CONFIG") or None
    path, document = read_config(config)
    given = {name: value for name, value in flags.items() if value is not None}
    unknown = sorted(set(given) - SERVER_KEYS)
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r}")
    token = _file_values.set(dict(document.get("server", {})))
    try:
        settings = Settings(**given)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, path, given)) from None
    finally:
        _file_values.reset(token)
    settings._config_path = str(path)
    settings._config = document
    return settings


def _explain(exc: ValidationError, path: Path, flags: dict[str, Any]) -> str:
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else "?"
    env_name = f"{ENV_PREFIX}{key.upper()}"
    if key in flags:
        flag = "api-key" if key == "api_keys" else key.replace("_", "-")
        source = f"the --{flag} option"
    elif env_name in os.environ:
        source = f"the environment variable {env_name}"
    else:
        source = f"{path} [server].{key}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if key == "api_keys":  # never echo keys into logs
        return f"invalid {key} in {source}: {message}"
    return f"invalid {key} in {source}: {message} (got {error.get('input')!r})"


SHORT_KEY_CHARS = 16
"""API keys shorter than this get a start-up warning (easy to guess)."""


def short_key_warning(settings: Settings) -> str | None:
    """The warning to log when an API key is shorter than ``SHORT_KEY_CHARS``, else None."""
    short = sum(1 for key in settings.api_keys if len(key) < SHORT_KEY_CHARS)
    if not short:
        return None
    return (
        f"{short} of the {len(settings.api_keys)} API key(s) are shorter than {SHORT_KEY_CHARS} "
        "characters and easy to guess; use long random keys (e.g. `openssl rand -hex 32`)"
    )


def check_bind(settings: Settings) -> None:
    """Refuse a non-loopback host without API keys unless ``insecure`` is set."""
    if not settings.is_loopback and not settings.auth_enabled and not settings.insecure:
        raise ConfigError(
            f"refusing to listen on {settings.host} without authentication: set api_keys "
            "(--api-key or TRACESCORE_API_KEYS) or pass --insecure"
        )


__all__ = [
    "SERVER_KEYS",
    "Settings",
    "SHORT_KEY_CHARS",
    "check_bind",
    "default_config_path",
    "load_settings",
    "read_config",
    "short_key_warning",
]
