"""``hermes mcp login NAME``: the OAuth authorization that needs a person, once.

``login`` listens on 127.0.0.1 (the server's ``oauth.redirect_port``, or a
free port), forgets the server's old tokens and registration, and connects
to the server with the SDK's ``OAuthClientProvider``: the SDK discovers the
authorization server, registers Hermes (dynamic client registration) with
the callback as redirect URI, and hands over the authorization URL, which
``announce`` shows the person. Their browser comes back to the callback with
the code; the SDK exchanges it (PKCE) and the tokens land in the server's
0600 token file (``oauth.py``). The login ends by listing the server's tools
over the new authorization, so a login that "worked" but gives no access is
reported as failed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import attrs
import trio
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.shared.auth import AuthorizationCodeResult

from .config import ServerConfig, expand
from .http import http_transport
from .oauth import TokenFile, client_metadata, token_path
from .server import CLIENT_INFO, describe

LOGIN_TIMEOUT = 600.0
"""Seconds the person has to finish in the browser."""
MAX_REQUEST = 16_384

_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s"
)


class LoginFailed(RuntimeError):
    """The login did not give Hermes a working authorization (the message says why)."""


@attrs.frozen(slots=True)
class LoginResult:
    """A finished login: where the tokens are and what the server offers with them."""

    token_file: Path
    tools: tuple[str, ...]


async def _read_request(stream: trio.SocketStream) -> str | None:
    """The request target of one HTTP request, or None for something else."""
    data = b""
    with trio.move_on_after(10):
        while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST:
            chunk = await stream.receive_some(4096)
            if not chunk:
                break
            data += chunk
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "GET":
        return None
    return parts[1]


async def _answer(stream: trio.SocketStream, text: str) -> None:
    body = f"<!doctype html><title>Hermes</title><p>{text}</p>".encode()
    with contextlib.suppress(trio.BrokenResourceError):
        await stream.send_all(_PAGE % (len(body), body))


class Callback:
    """The 127.0.0.1 listener the browser is redirected to (``/callback?code=...&state=...``)."""

    def __init__(self, listener: trio.SocketListener) -> None:
        self.listener = listener
        host, port = listener.socket.getsockname()[:2]
        self.redirect_uri = f"http://{host}:{port}/callback"

    async def wait(self) -> AuthorizationCodeResult:
        """The first request to ``/callback`` carrying a code (or an OAuth error)."""
        while True:
            stream = await self.listener.accept()
            async with stream:
                target = await _read_request(stream)
                if target is None or urlsplit(target).path != "/callback":
                    await _answer(stream, "Not the Hermes login callback.")
                    continue
                query = parse_qs(urlsplit(target).query)
                error = query.get("error", [""])[0]
                if error:
                    detail = query.get("error_description", [""])[0]
                    await _answer(stream, "The login was refused. You can close this tab.")
                    raise LoginFailed(f"the authorization server refused: {error} {detail}".strip())
                code = query.get("code", [""])[0]
                if not code:
                    await _answer(stream, "No authorization code in this request.")
                    continue
                await _answer(stream, "Hermes is logged in. You can close this tab.")
                return AuthorizationCodeResult(
                    code=code,
                    state=query.get("state", [None])[0],
                    iss=query.get("iss", [None])[0],
                )


async def login(
    config: ServerConfig,
    data_dir: Path,
    announce: Callable[[str], None],
    *,
    timeout: float = LOGIN_TIMEOUT,
) -> LoginResult:
    """Run the OAuth login for HTTP server ``config`` (see the module); ``LoginFailed`` if not."""
    if config.url is None or config.auth != "oauth":
        raise LoginFailed(f'MCP server {config.name!r} is not an HTTP server with auth = "oauth"')
    headers = {k: expand(v, os.environ, f"header {k}") for k, v in config.headers.items()}
    listeners = await trio.open_tcp_listeners(config.oauth.redirect_port, host="127.0.0.1")
    callback = Callback(listeners[0])
    storage = TokenFile(token_path(data_dir, config.name), config.url)
    await trio.to_thread.run_sync(storage.clear)

    async def redirect(url: str) -> None:
        announce(url)

    provider = OAuthClientProvider(
        server_url=config.url,
        client_metadata=client_metadata(config, callback.redirect_uri),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback.wait,
    )
    try:
        with trio.fail_after(timeout):
            async with (
                http_transport(config.url, headers, provider) as (read, write),
                ClientSession(read, write, client_info=CLIENT_INFO) as session,
            ):
                await session.initialize()
                listed = await session.list_tools()
    except trio.TooSlowError:
        raise LoginFailed(f"the login was not finished within {timeout:g} s") from None
    except Exception as exc:
        leaf: BaseException = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, LoginFailed):
            raise leaf from None
        raise LoginFailed(describe(exc)) from None
    finally:
        await listeners[0].aclose()
    if not storage.has_tokens():
        raise LoginFailed("the server let Hermes in without OAuth: no token was issued")
    return LoginResult(storage.path, tuple(t.name for t in listed.tools))
