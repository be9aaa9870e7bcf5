"""The daemon's TOML configuration: a fixed schema, every key checked.

Every key is documented in ``docs/config.md``; the schema is
``config_schema.py``. A file with an unknown key or a value of the wrong type
is refused with the file, the key and the expected type (``config.toml:
[gateway] max_frame_bytes: expected an integer >= 1024, got str "big"``); the
daemon does not start on it, and a reload (SIGHUP) keeps the running
configuration.

A few settings have environment overrides: ``ANTHROPIC_API_KEY`` (never in
the file), ``HERMES_MODEL``, ``HERMES_DATA_DIR``, ``HERMES_HOST``,
``HERMES_PORT``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from hermes.paths import Paths, resolve_paths

from .config_schema import BUSY_MODES, LOG_LEVELS, SCHEMA, Check, Key

if TYPE_CHECKING:
    from hermes.mcp.config import McpConfig

__all__ = [
    "BUSY_MODES",
    "DEFAULT_MODEL",
    "DEMO_MODEL",
    "LOG_LEVELS",
    "SCHEMA",
    "Check",
    "Config",
    "ConfigError",
    "Key",
    "load_config",
    "prepare",
    "reload_changes",
    "render_docs",
    "validate",
]

DEMO_MODEL = "hermes-demo"
DEFAULT_MODEL = "claude-sonnet-4-5"


class ConfigError(ValueError):
    """An invalid configuration: names the file, the key and what was expected."""


@attrs.frozen(slots=True)
class Config:
    """The validated configuration: ``values[section][key]`` (top-level keys under ``""``)."""

    values: Mapping[str, Mapping[str, Any]]
    source: Path | None
    api_key: str | None = None

    def get(self, section: str, key: str) -> Any:
        return self.values[section][key]

    @property
    def demo(self) -> bool:
        """No API key: the built-in fake provider and its demo model."""
        return not self.api_key

    @property
    def model(self) -> str:
        name: str = self.get("model", "name")
        if name:
            return name
        return DEFAULT_MODEL if self.api_key else DEMO_MODEL

    @property
    def mcp(self) -> McpConfig:
        """The ``[mcp.servers.NAME]`` tables (``hermes/mcp/config.py``)."""
        from hermes.mcp.config import McpConfig  # only when asked: an import the CLI skips

        servers: McpConfig = self.values.get("mcp", {}).get("servers") or McpConfig()
        return servers

    def data_dir(self, paths: Paths) -> Path:
        given: str = self.get("", "data_dir")
        return Path(given).expanduser() if given else paths.data_dir


def _where(section: str, key: str) -> str:
    return f"[{section}] {key}" if section else key


def _describe(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "float", str: "string"}.get(
        type(value), type(value).__name__
    )
    return f"{kind} {value!r}"


def validate(raw: Mapping[str, Any], source: str) -> dict[str, dict[str, Any]]:
    """Check a parsed TOML document against ``SCHEMA``; every problem in one ``ConfigError``."""
    errors: list[str] = []
    values: dict[str, dict[str, Any]] = {
        section: {key: spec.default for key, spec in keys.items()}
        for section, keys in SCHEMA.items()
    }
    values["mcp"] = {"servers": None}  # None: no [mcp] table (Config.mcp is then empty)
    for name, value in raw.items():
        if name == "mcp":  # [mcp.servers.NAME]: checked by hermes/mcp/config.py
            from hermes.mcp.config import parse_mcp

            values["mcp"]["servers"], problems = parse_mcp(value, source)
            errors.extend(problems)
            continue
        if name in SCHEMA[""]:
            section, key, items = "", name, {name: value}
        elif name in SCHEMA:
            if not isinstance(value, dict):
                errors.append(f"{source}: [{name}]: expected a table, got {_describe(value)}")
                continue
            section, items = name, value
        else:
            known = ", ".join(sorted([*SCHEMA[""], "[mcp]", *(f"[{s}]" for s in SCHEMA if s)]))
            errors.append(f"{source}: unknown key {name!r} (known: {known})")
            continue
        for key, item in items.items():
            spec = SCHEMA[section].get(key)
            if spec is None:
                known = ", ".join(SCHEMA[section])
                errors.append(f"{source}: {_where(section, key)}: unknown key (known: {known})")
                continue
            expected = spec.check(item)
            if expected is not None:
                errors.append(
                    f"{source}: {_where(section, key)}: expected {expected}, got {_describe(item)}"
                )
                continue
            values[section][key] = float(item) if type(spec.default) is float else item
    window, reply = values["model"]["context_window"], values["model"]["max_tokens"]
    if not errors and reply >= window:
        errors.append(
            f"{source}: [model] max_tokens ({reply}) must be less than context_window ({window})"
        )
    errors.extend(_cross_checks(values, source) if not errors else ())
    if errors:
        raise ConfigError("\n".join(errors))
    return values


def _cross_checks(values: Mapping[str, Mapping[str, Any]], source: str) -> list[str]:
    """Keys that are each fine but not together."""
    errors: list[str] = []
    tools = values["tools"]
    if tools["foreground_timeout"] > tools["foreground_max_timeout"]:
        errors.append(
            f"{source}: [tools] foreground_timeout ({tools['foreground_timeout']}) must be "
            f"at most foreground_max_timeout ({tools['foreground_max_timeout']})"
        )
    if tools["batch_chars"] < tools["result_chars"]:
        errors.append(
            f"{source}: [tools] batch_chars ({tools['batch_chars']}) must be at least "
            f"result_chars ({tools['result_chars']})"
        )
    return errors


_ENV = (
    ("HERMES_MODEL", "model", "name", str),
    ("HERMES_DATA_DIR", "", "data_dir", str),
    ("HERMES_HOST", "daemon", "host", str),
    ("HERMES_PORT", "daemon", "port", int),
)


def load_config(path: Path | None, env: Mapping[str, str] | None = None) -> Config:
    """Read and validate ``path`` (a missing file means the defaults), then apply overrides."""
    env = os.environ if env is None else env
    raw: dict[str, Any] = {}
    source: Path | None = None
    if path is not None and path.exists():
        source = path
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
    values = validate(raw, str(path) if path is not None else "(defaults)")
    for var, section, key, kind in _ENV:
        text = env.get(var)
        if not text:
            continue
        value: Any = text
        if kind is int:
            try:
                value = int(text)
            except ValueError:
                raise ConfigError(f"${var}: expected an integer, got {text!r}") from None
        expected = SCHEMA[section][key].check(value)
        if expected is not None:
            raise ConfigError(f"${var}: expected {expected}, got {text!r}")
        values[section][key] = value
    return Config(values, source, env.get("ANTHROPIC_API_KEY") or None)


def reload_changes(old: Config, new: Config) -> tuple[list[str], list[str]]:
    """Keys that changed: (applied on reload, needing a restart)."""
    applied: list[str] = []
    restart: list[str] = []
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            if old.get(section, key) != new.get(section, key):
                (applied if spec.reload else restart).append(_where(section, key))
    if old.mcp != new.mcp:
        restart.append("[mcp]")
    return applied, restart


def render_docs() -> str:
    """The schema as a markdown table (the base of docs/config.md's, whose rows say more)."""
    lines = ["| key | default | reload | meaning |", "|---|---|---|---|"]
    for section, keys in SCHEMA.items():
        for key, spec in keys.items():
            name = f"`{section}.{key}`" if section else f"`{key}`"
            default = repr(spec.default).replace("'", '"')
            lines.append(
                f"| {name} | `{default}` | {'yes' if spec.reload else 'no'} | {spec.doc} |"
            )
    return "\n".join(lines)


def prepare(env: Mapping[str, str] | None = None) -> tuple[Config, Paths]:
    """The configuration and the paths it implies (``ConfigError`` if invalid)."""
    paths = resolve_paths(env)
    config = load_config(paths.config_file, env)
    return config, paths.with_data_dir(config.data_dir(paths))
