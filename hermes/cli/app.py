"""The ``hermes`` click group and what every command shares: paths, the daemon, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import click

from hermes import __version__

T = TypeVar("T")


class _Group(click.Group):
    """The ``hermes`` group: an untrusted runtime directory or pid is one line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        from hermes.daemon.trust import Untrusted

        try:
            return super().invoke(ctx)
        except Untrusted as exc:
            fail(str(exc))
        except BaseExceptionGroup as group:
            match, _ = group.split(Untrusted)
            if match is None:
                raise
            fail(str(_leaf(match)))


def _leaf(group: BaseException) -> BaseException:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="hermes")
def main() -> None:
    """Hermes on Trio: an agent daemon built from supervised actors.

    `hermes chat` starts the daemon if none runs and talks to it;
    `hermes daemon` runs it in the foreground. See docs/protocol.md.
    """


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"hermes: {message}", err=True)
    sys.exit(code)


def daemon_paths() -> Any:
    from hermes.daemon.config import ConfigError, prepare
    from hermes.paths import resolve_paths

    try:
        _, paths = prepare()
    except ConfigError as exc:
        click.echo(
            f"hermes: warning: invalid configuration (a daemon would refuse it):\n{exc}", err=True
        )
        return resolve_paths()
    return paths


def daemon_endpoint(start: bool = False) -> Any:
    from hermes.daemon.control import StartFailed, start_background
    from hermes.daemon.endpoint import NoDaemon, find_daemon

    paths = daemon_paths()
    try:
        return find_daemon(paths)
    except NoDaemon as exc:
        if not start:
            fail(str(exc))
    try:
        endpoint = start_background(paths)
    except StartFailed as exc:
        fail(str(exc))
    click.echo(f"hermes: started the daemon (pid {endpoint.pid})", err=True)
    return endpoint


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    import trio
    import trio_websocket

    from hermes.gateway.client import GatewayError

    try:
        return trio.run(fn)
    except BaseExceptionGroup as group:  # the client's reader failed alongside the request
        leaf = _first_leaf(group, (GatewayError, trio_websocket.HandshakeError, OSError))
        if leaf is None:
            raise
        error = leaf
    except (GatewayError, trio_websocket.HandshakeError, OSError) as exc:
        error = exc
    if isinstance(error, GatewayError):
        fail(f"{error.code}: {error.message}")
    fail(f"cannot talk to the daemon: {type(error).__name__}: {error}")


def _first_leaf(
    group: BaseExceptionGroup[BaseException], kinds: tuple[type[BaseException], ...]
) -> BaseException | None:
    """The first exception of one of ``kinds`` in ``group``, nested groups included."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = _first_leaf(exc, kinds)
            if found is not None:
                return found
        elif isinstance(exc, kinds):
            return exc
    return None


async def call_daemon(method: str, **params: Any) -> Any:
    """One request to the running daemon (exit 1 if none runs)."""
    return await call_endpoint(daemon_endpoint(), method, **params)


async def call_endpoint(endpoint: Any, method: str, **params: Any) -> Any:
    """One request to the daemon at ``endpoint`` (a ``find_daemon`` result)."""
    from hermes.gateway.client import connect

    async with connect(endpoint) as client:
        return await client.call(method, **params)


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))
