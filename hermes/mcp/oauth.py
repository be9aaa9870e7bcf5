"""OAuth for HTTP MCP servers (``auth = "oauth"``): the SDK's client, Hermes' token file.

The flow is the SDK's (``mcp.client.auth.OAuthClientProvider``: discovery,
dynamic client registration, PKCE, refresh). What Hermes adds is where the
tokens live: ``TokenFile`` keeps one server's tokens and client registration
in ``<data_dir>/mcp/oauth/<server>.json``, mode 0600 in a 0700 directory,
written atomically, never in ``config.toml`` (seed #108: MCP tokens are
Hermes-owned state). The file also records the server's URL, so tokens are
never sent to a URL they were not issued for.

The daemon's connections never ask a person: with no tokens the server stays
down with ``LoginNeeded`` ("run ``hermes mcp login NAME``"), and a provider
that would need a new authorization (a refresh refused) fails the same way.
``login.py`` runs the part that needs a person.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import trio
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from hermes.files import replace_file

from .config import ServerConfig


class LoginNeeded(RuntimeError):
    """The server wants an OAuth authorization that only a person can give."""


def token_path(data_dir: Path, server: str) -> Path:
    """Where server ``server``'s OAuth state is kept."""
    return data_dir / "mcp" / "oauth" / f"{server}.json"


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, mode 0600, in a 0700 directory."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    replace_file(path, data, mode=0o600)


class TokenFile:
    """The SDK's ``TokenStorage`` for one server, in its 0600 file (see the module)."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _read(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(raw, dict) or raw.get("url") != self.url:
            return {}  # issued for another URL (the config changed): never sent here
        return raw

    def _write(self, key: str, value: dict[str, Any]) -> None:
        state = self._read()
        state.update({"url": self.url, key: value})
        _write_private(self.path, json.dumps(state, indent=1).encode() + b"\n")

    def has_tokens(self) -> bool:
        return "tokens" in self._read()

    def clear(self) -> None:
        """Forget the tokens and the client registration (a new login starts afresh)."""
        self.path.unlink(missing_ok=True)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = (await trio.to_thread.run_sync(self._read)).get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await trio.to_thread.run_sync(self._write, "tokens", tokens.model_dump(mode="json"))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info = (await trio.to_thread.run_sync(self._read)).get("client")
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = client_info.model_dump(mode="json", exclude_none=True)
        await trio.to_thread.run_sync(self._write, "client", data)


def client_metadata(config: ServerConfig, redirect_uri: str) -> OAuthClientMetadata:
    """What Hermes registers as with the server's authorization server."""
    return OAuthClientMetadata(
        client_name=config.oauth.client_name,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=config.oauth.scope,
        token_endpoint_auth_method="none",
    )


def daemon_auth(config: ServerConfig, data_dir: Path) -> OAuthClientProvider:
    """The provider a daemon's connection uses: stored tokens (refreshed), never a person.

    ``LoginNeeded`` when there are no tokens yet.
    """
    assert config.url is not None
    storage = TokenFile(token_path(data_dir, config.name), config.url)
    if not storage.has_tokens():
        raise LoginNeeded(
            f"not logged in: run `hermes mcp login {config.name}` (OAuth needs a person once)"
        )
    why = f"its OAuth authorization is no longer accepted: run `hermes mcp login {config.name}`"

    async def no_person(url: str) -> None:
        raise LoginNeeded(why)

    async def no_callback() -> AuthorizationCodeResult:
        raise LoginNeeded(why)

    redirect = f"http://127.0.0.1:{config.oauth.redirect_port or 1}/callback"
    return OAuthClientProvider(
        server_url=config.url,
        client_metadata=client_metadata(config, redirect),
        storage=storage,
        redirect_handler=no_person,
        callback_handler=no_callback,
    )
