"""The ``[mcp.servers.NAME]`` tables of the daemon's TOML configuration.

Pure and cheap to import (no ``mcp`` SDK): the daemon's config loader calls
``parse_mcp`` for the ``[mcp]`` table and reports the returned problems with
its own, one line each, naming the file, the table, the key and what was
expected (``config.toml: [mcp.servers.github] timeout: expected a number > 0,
got string 'soon'``).

A server is stdio (``command``, ``args``, ``env``, ``cwd``) or streamable
HTTP (``url``, ``headers``), never both. ``env`` and ``headers`` values may
name variables of the daemon's environment as ``${NAME}``, expanded when the
server is started, so tokens stay out of the file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import attrs

SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
"""A server's name: it is part of its tools' names (``mcp_<server>_<tool>``) and an actor path."""
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TRUST = ("trusted", "untrusted")
HTTP_MODES = ("auto", "streamable_http", "sse")
AUTH = ("none", "oauth")

DEFAULT_TIMEOUT = 120.0
DEFAULT_CONNECT_TIMEOUT = 60.0


@attrs.frozen(slots=True)
class SamplingConfig:
    """A server's sampling limits (``sampling = { ... }``; Hermes' defaults)."""

    enabled: bool = True
    max_rpm: int = 10
    allowed_models: tuple[str, ...] = ()
    """Models a request may ask for; empty: any (it runs on the session's model either way)."""
    max_tokens_cap: int = 4096


@attrs.frozen(slots=True)
class OAuthConfig:
    """``oauth = { ... }`` of a server with ``auth = "oauth"``: how Hermes registers."""

    scope: str | None = None
    """Scopes to ask for (space-separated); None: the server's default."""
    client_name: str = "Hermes"
    redirect_port: int = 0
    """The 127.0.0.1 port ``hermes mcp login`` receives the redirect on; 0: any free one."""


@attrs.frozen(slots=True, kw_only=True)
class ServerConfig:
    """One configured MCP server."""

    name: str
    command: str | None = None
    """stdio: the program (looked up on the daemon's PATH); None for an HTTP server."""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    """stdio: the child's whole environment (values may hold ``${NAME}``); nothing else passes."""
    cwd: str | None = None
    url: str | None = None
    """HTTP: the streamable HTTP endpoint; None for a stdio server."""
    headers: Mapping[str, str] = attrs.field(factory=dict)
    http_mode: str = "auto"
    """HTTP (TOML ``transport``): ``auto`` (streamable HTTP, else legacy SSE), ``streamable_http``
    or ``sse``."""
    enabled: bool = True
    include: tuple[str, ...] | None = None
    """Only these of the server's tools (its own names); None: all."""
    exclude: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one tool call may take."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds to start, initialize and list tools."""
    trust: str = "trusted"
    parallel: bool = False
    """Its tools may run concurrently with each other and with reads in one batch."""
    sampling: SamplingConfig = attrs.field(factory=SamplingConfig)
    auth: str = "none"
    """HTTP: ``"oauth"`` (tokens from ``hermes mcp login``, in the data dir) or ``"none"``."""
    oauth: OAuthConfig = attrs.field(factory=OAuthConfig)

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def offers(self, tool: str) -> bool:
        """Whether ``include``/``exclude`` let the server's tool ``tool`` through."""
        if self.include is not None and tool not in self.include:
            return False
        return tool not in self.exclude


OSV_URL = "https://api.osv.dev/v1/query"


@attrs.frozen(slots=True)
class McpConfig:
    """Every configured server, in file order (disabled ones included), and the OSV check."""

    servers: tuple[ServerConfig, ...] = ()
    osv_check: bool = True
    """Look up packages launched through npx, uvx or pipx in OSV before starting them."""
    osv_url: str = OSV_URL

    @property
    def enabled(self) -> tuple[ServerConfig, ...]:
        return tuple(s for s in self.servers if s.enabled)


def _describe(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "float", str: "string", dict: "table"}.get(
        type(value), type(value).__name__
    )
    if isinstance(value, dict | list):
        return kind if kind != "list" else "array"
    return f"{kind} {value!r}"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "a non-empty string"


def _strings(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return "an array of strings"


def _names(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return None
    return "an array of tool names"


def _seconds(value: Any) -> str | None:
    if type(value) in (int, float) and math.isfinite(value) and 0 < value <= 86_400:
        return None
    return "a number of seconds > 0 and <= 86400"


def _bool(value: Any) -> str | None:
    return None if type(value) is bool else "a boolean (true or false)"


def _trust(value: Any) -> str | None:
    return None if value in TRUST else "one of " + ", ".join(TRUST)


def _url(value: Any) -> str | None:
    if isinstance(value, str) and re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
        return None
    return "an http:// or https:// URL"


def _env_table(value: Any) -> str | None:
    expected = 'a table of NAME = "value" (values may hold ${NAME})'
    if not isinstance(value, dict):
        return expected
    for key, item in value.items():
        if not ENV_NAME.fullmatch(key) or not isinstance(item, str) or "\0" in item:
            return expected
    return None


def _header_table(value: Any) -> str | None:
    expected = 'a table of Header-Name = "value" (values may hold ${NAME})'
    if not isinstance(value, dict):
        return expected
    for key, item in value.items():
        if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", key) or not isinstance(item, str):
            return expected
        if any(c in item for c in "\r\n\0"):
            return expected
    return None


_KEYS: dict[str, Any] = {
    "command": _text,
    "args": _strings,
    "env": _env_table,
    "cwd": _text,
    "url": _url,
    "headers": _header_table,
    "transport": lambda v: None if v in HTTP_MODES else "one of " + ", ".join(HTTP_MODES),
    "enabled": _bool,
    "tools": None,  # a table, checked below
    "timeout": _seconds,
    "connect_timeout": _seconds,
    "trust": _trust,
    "parallel": _bool,
    "sampling": None,  # a table, checked below
    "auth": lambda v: None if v in AUTH else "one of " + ", ".join(AUTH),
    "oauth": None,  # a table, checked below
}
_STDIO_ONLY = ("command", "args", "env", "cwd")
_HTTP_ONLY = ("url", "headers", "transport", "auth", "oauth")


def parse_mcp(raw: Any, source: str) -> tuple[McpConfig, list[str]]:
    """The ``[mcp]`` table as an ``McpConfig``, and every problem found (empty when valid)."""
    errors: list[str] = []
    if not isinstance(raw, dict):
        return McpConfig(), [f"{source}: [mcp]: expected a table, got {_describe(raw)}"]
    top: dict[str, Any] = {}
    for key, value in raw.items():
        check = {"osv_check": _bool, "osv_url": _url}.get(key)
        if key == "servers":
            continue
        if check is None:
            errors.append(
                f"{source}: [mcp] {key}: unknown key (known: servers, osv_check, osv_url)"
            )
        elif (expected := check(value)) is not None:
            errors.append(f"{source}: [mcp] {key}: expected {expected}, got {_describe(value)}")
        else:
            top[key] = value
    servers_raw = raw.get("servers", {})
    if not isinstance(servers_raw, dict):
        errors.append(f"{source}: [mcp] servers: expected a table, got {_describe(servers_raw)}")
        return McpConfig(), errors
    servers: list[ServerConfig] = []
    for name, table in servers_raw.items():
        server = _server(name, table, source, errors)
        if server is not None:
            servers.append(server)
    return McpConfig(tuple(servers), **top), errors


def _server(name: str, table: Any, source: str, errors: list[str]) -> ServerConfig | None:
    where = f"{source}: [mcp.servers.{name}]"
    if not SERVER_NAME.fullmatch(name):
        errors.append(
            f"{where}: invalid server name {name!r} (expected 1-32 letters, digits, '_' or '-', "
            "starting with a letter or digit)"
        )
        return None
    if not isinstance(table, dict):
        errors.append(f"{where}: expected a table, got {_describe(table)}")
        return None
    count = len(errors)
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            errors.append(f"{where} {key}: unknown key (known: {', '.join(_KEYS)})")
            continue
        check = _KEYS[key]
        if key == "tools":
            values.update(_tools_table(value, where, errors))
            continue
        if key == "sampling":
            values["sampling"] = _sampling_table(value, where, errors)
            continue
        if key == "oauth":
            values["oauth"] = _oauth_table(value, where, errors)
            continue
        expected = check(value)
        if expected is not None:
            errors.append(f"{where} {key}: expected {expected}, got {_describe(value)}")
            continue
        values[key] = value
    has_command, has_url = "command" in table, "url" in table
    if has_command and has_url:
        errors.append(f"{where}: give either command (stdio) or url (HTTP), not both")
    elif not has_command and not has_url:
        errors.append(f"{where}: missing command (a stdio server) or url (an HTTP server)")
    elif has_url:
        errors.extend(
            f"{where} {k}: only for a stdio server (this one has url)"
            for k in _STDIO_ONLY
            if k in table
        )
    else:
        errors.extend(
            f"{where} {k}: only for an HTTP server (this one has command)"
            for k in _HTTP_ONLY
            if k in table
        )
    if "oauth" in table and table.get("auth") != "oauth":
        errors.append(f'{where} oauth: only with auth = "oauth"')
    if values.get("auth") == "oauth" and values.get("transport") == "sse":
        errors.append(f'{where} auth: "oauth" needs streamable HTTP (not transport = "sse")')
    if len(errors) > count:
        return None
    return ServerConfig(
        name=name,
        command=values.get("command"),
        args=tuple(values.get("args", ())),
        env=dict(values.get("env", {})),
        cwd=values.get("cwd"),
        url=values.get("url"),
        headers=dict(values.get("headers", {})),
        http_mode=values.get("transport", "auto"),
        enabled=values.get("enabled", True),
        include=values.get("include"),
        exclude=values.get("exclude", ()),
        timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
        connect_timeout=float(values.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)),
        trust=values.get("trust", "trusted"),
        parallel=values.get("parallel", False),
        sampling=values.get("sampling") or SamplingConfig(),
        auth=values.get("auth", "none"),
        oauth=values.get("oauth") or OAuthConfig(),
    )


def _tools_table(value: Any, where: str, errors: list[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        errors.append(f"{where} tools: expected a table (include, exclude), got {_describe(value)}")
        return {}
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key not in ("include", "exclude"):
            errors.append(f"{where} tools.{key}: unknown key (known: include, exclude)")
            continue
        expected = _names(item)
        if expected is not None:
            errors.append(f"{where} tools.{key}: expected {expected}, got {_describe(item)}")
            continue
        out[key] = tuple(item)
    return out


def _count(value: Any) -> str | None:
    return None if type(value) is int and 1 <= value <= 1_000_000 else "an integer >= 1"


_SAMPLING_KEYS: dict[str, Any] = {
    "enabled": _bool,
    "max_rpm": _count,
    "allowed_models": _strings,
    "max_tokens_cap": _count,
}


def _sampling_table(value: Any, where: str, errors: list[str]) -> SamplingConfig | None:
    if not isinstance(value, dict):
        errors.append(
            f"{where} sampling: expected a table ({', '.join(_SAMPLING_KEYS)}), "
            f"got {_describe(value)}"
        )
        return None
    out: dict[str, Any] = {}
    for key, item in value.items():
        check = _SAMPLING_KEYS.get(key)
        if check is None:
            errors.append(
                f"{where} sampling.{key}: unknown key (known: {', '.join(_SAMPLING_KEYS)})"
            )
        elif (expected := check(item)) is not None:
            errors.append(f"{where} sampling.{key}: expected {expected}, got {_describe(item)}")
        else:
            out[key] = tuple(item) if key == "allowed_models" else item
    return SamplingConfig(**out)


def _port(value: Any) -> str | None:
    return None if type(value) is int and 0 <= value <= 65_535 else "a port number 0-65535"


_OAUTH_KEYS: dict[str, Any] = {"scope": _text, "client_name": _text, "redirect_port": _port}


def _oauth_table(value: Any, where: str, errors: list[str]) -> OAuthConfig | None:
    if not isinstance(value, dict):
        errors.append(
            f"{where} oauth: expected a table ({', '.join(_OAUTH_KEYS)}), got {_describe(value)}"
        )
        return None
    out: dict[str, Any] = {}
    for key, item in value.items():
        check = _OAUTH_KEYS.get(key)
        if check is None:
            errors.append(f"{where} oauth.{key}: unknown key (known: {', '.join(_OAUTH_KEYS)})")
        elif (expected := check(item)) is not None:
            errors.append(f"{where} oauth.{key}: expected {expected}, got {_describe(item)}")
        else:
            out[key] = item
    return OAuthConfig(**out)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MissingVariable(LookupError):
    """A ``${NAME}`` in ``env`` or ``headers`` names a variable the daemon does not have."""


def expand(value: str, environ: Mapping[str, str], where: str) -> str:
    """``value`` with each ``${NAME}`` replaced from ``environ`` (``MissingVariable`` if unset)."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        found = environ.get(name)
        if found is None:
            raise MissingVariable(
                f"{where} names ${{{name}}}, which is not set in the daemon's environment"
            )
        return found

    return _VAR.sub(sub, value)
