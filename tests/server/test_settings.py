"""Settings: precedence, the embedded default, config errors (tracescore.server._settings)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tracescore.server import ConfigError, Settings, check_bind, default_config_path, load_settings

REPO = Path(__file__).resolve().parents[2]


def test_embedded_default_is_the_repo_config_and_the_packaged_copy() -> None:
    repo_config = REPO / "config" / "tracescore.toml"
    packaged = REPO / "tracescore" / "_data" / "tracescore.toml"
    assert default_config_path().read_bytes() == repo_config.read_bytes()
    assert packaged.read_bytes() == repo_config.read_bytes()


def test_model_defaults_match_the_embedded_default() -> None:
    server = tomllib.loads(default_config_path().read_text())["server"]
    defaults = Settings().model_dump()
    assert set(server) == set(defaults)
    for key, value in server.items():
        expected = tuple(value) if isinstance(value, list) else value
        assert defaults[key] == expected, key


def test_precedence_flag_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[server]\nhttp_port = 1111\ngrpc_port = 2222\ndb = "file.duckdb"\n')
    settings = load_settings(config)
    assert (settings.http_port, settings.grpc_port, settings.db) == (1111, 2222, "file.duckdb")
    assert settings.sql_row_limit == 10_000  # not in the file: the default
    monkeypatch.setenv("TRACESCORE_HTTP_PORT", "3333")
    monkeypatch.setenv("TRACESCORE_GRPC_PORT", "4444")
    settings = load_settings(config, grpc_port=5555)
    assert (settings.http_port, settings.grpc_port) == (3333, 5555)
    assert settings.config_path == str(config)


def test_config_env_var_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[server]\nsql_row_limit = 7\n")
    monkeypatch.setenv("TRACESCORE_CONFIG", str(config))
    assert load_settings().sql_row_limit == 7


def test_api_keys_from_env_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACESCORE_API_KEYS", "k1, k2,,")
    settings = load_settings()
    assert settings.api_keys == ("k1", "k2")
    assert settings.auth_enabled


def test_other_tables_are_kept_for_their_owners(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[server]\nhttp_port = 9\n[live]\ninterval_seconds = 5\n[live.budget]\nx = 1\n'
        '[[scorers]]\nid = "a"\n[[scorers]]\nid = "b"\n'
    )
    settings = load_settings(config)
    assert settings.config["live"] == {"interval_seconds": 5, "budget": {"x": 1}}
    assert [entry["id"] for entry in settings.config["scorers"]] == ["a", "b"]


def test_unknown_server_key_names_key_and_file(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[server]\nhttp_prot = 1\n")
    with pytest.raises(ConfigError, match=r"bad\.toml.*\[server\]\.http_prot"):
        load_settings(config)


def test_bad_value_names_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[server]\nhttp_port = "many"\n')
    with pytest.raises(ConfigError, match=r"http_port in .*bad\.toml \[server\]\.http_port"):
        load_settings(config)
    monkeypatch.setenv("TRACESCORE_SQL_ROW_LIMIT", "-3")
    with pytest.raises(ConfigError, match="TRACESCORE_SQL_ROW_LIMIT"):
        load_settings()
    monkeypatch.delenv("TRACESCORE_SQL_ROW_LIMIT")
    with pytest.raises(ConfigError, match="--log-level"):
        load_settings(log_level="loud")


def test_missing_or_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(broken)


def test_settings_are_frozen() -> None:
    settings = load_settings()
    with pytest.raises(ValueError):
        settings.http_port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("host", "keys", "insecure", "refused"),
    [
        ("127.0.0.1", (), False, False),
        ("::1", (), False, False),
        ("localhost", (), False, False),
        ("0.0.0.0", (), False, True),
        ("0.0.0.0", ("k",), False, False),
        ("0.0.0.0", (), True, False),
        ("192.168.1.5", (), False, True),
    ],
)
def test_non_loopback_needs_keys(host: str, keys: tuple[str, ...], insecure: bool,
                                 refused: bool) -> None:
    settings = load_settings(host=host, api_keys=keys or None, insecure=insecure or None)
    if refused:
        with pytest.raises(ConfigError, match="--insecure"):
            check_bind(settings)
    else:
        check_bind(settings)
