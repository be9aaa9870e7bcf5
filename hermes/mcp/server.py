"""``McpServerActor``: one MCP server's connection, owned by one actor.

The actor's owned task ``connection`` runs the whole life of the connection
inside itself, so the SDK's task groups (the transport's pipe tasks, the
``ClientSession`` dispatcher) are nested in the actor's own task and end
with it: connect (spawn the stdio server or open the HTTP session),
``initialize``, list the tools (every page), register them, then wait until
the transport ends or the server sends ``notifications/tools/list_changed``
(list again, register the difference). HTTP connections are pinged every
``ping_interval`` seconds.

A failure of the server (it cannot start, exits, stops answering in
``connect_timeout``, a ping fails) is never the actor's failure: it is
recorded on the ``ServerLink`` with the delay of the next attempt
(exponential ``supervisors.Backoff``, reset once a connection has stayed up
for the backoff's quiet period), and the actor tries again. Its tools stay
registered meanwhile and answer "unavailable ... retrying in N s". Only a bug
of the actor itself crashes it; its supervisor then restarts it.

Stopping the actor cancels the task: the stdio server's group is killed and
reaped (``stdio.py``), an HTTP session is closed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import attrs
import mcp_types as types
import trio
from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage

from actors import Actor, Call, ExitReason, OwnedTask
from hermes.tools import ToolRegistry
from supervisors import Backoff

from .config import MissingVariable, ServerConfig, expand
from .elicit import elicit
from .http import http_transport, sse_transport
from .link import ServerLink
from .oauth import LoginNeeded, daemon_auth
from .osv import OsvChecker, launched_package
from .sampling import SamplingGate
from .stdio import Exited, Streams, resolve_command, stdio_transport
from .tools import McpTool, schema_problem, tool_name

log = logging.getLogger("hermes.mcp")

CLIENT_INFO = types.Implementation(name="hermes", version="0.1.0")


@attrs.frozen(slots=True, kw_only=True)
class McpOptions:
    """Timings shared by every server actor (tests shorten them)."""

    backoff: Backoff = attrs.field(factory=lambda: Backoff(min=1.0, max=60.0))
    ping_interval: float = 30.0
    """HTTP servers: seconds between liveness pings."""
    ping_timeout: float = 10.0
    list_timeout: float = 30.0
    """Seconds a re-listing after ``list_changed`` may take."""
    stop_grace: float = 0.5
    """stdio: seconds after closing stdin before the group is signalled."""
    data_dir: Path | None = None
    """The daemon's data directory: where ``auth = "oauth"`` servers' tokens live."""


@attrs.frozen(slots=True)
class GetStatus(Call[dict[str, object]]):
    """The server's state as plain data (``ServerLink.snapshot``)."""


@attrs.frozen(slots=True)
class SetEnabled(Call[dict[str, object]]):
    """Enable or disable the server at run time; answers its state."""

    on: bool


@attrs.frozen(slots=True)
class GetConfig(Call[ServerConfig]):
    """The server's configuration (what ``hermes mcp test`` probes)."""


@attrs.frozen(slots=True)
class GetDataDir(Call["Path | None"]):
    """Where the server's OAuth tokens are (``McpOptions.data_dir``)."""


class McpServerActor(Actor):
    """See the module docstring."""

    shutdown_budget = 5.0

    def __init__(
        self,
        link: ServerLink,
        registry: ToolRegistry,
        environ: Mapping[str, str],
        options: McpOptions,
        osv: OsvChecker | None = None,
        sampling: SamplingGate | None = None,
    ) -> None:
        self.link = link
        self.registry = registry
        self.environ = environ
        self.options = options
        self.osv = osv
        self.sampling = sampling
        self._wake = trio.Event()
        self._refresh = False
        self._task: OwnedTask | None = None
        self._sse = link.config.http_mode == "sse"
        """HTTP: speak legacy SSE (configured, or what worked in ``auto``)."""

    async def on_start(self) -> None:
        if self.link.state != "disabled":  # a restarted actor of a disabled server stays off
            self.link.enable()
            self._task = self.ctx.start_task(self._run, name="connection")

    async def receive(self, message: object) -> object:
        if isinstance(message, GetStatus):
            return self.link.snapshot()
        if isinstance(message, GetConfig):
            return self.link.config
        if isinstance(message, GetDataDir):
            return self.options.data_dir
        if isinstance(message, SetEnabled):
            await self._set_enabled(message.on)
            return self.link.snapshot()
        return None

    async def _set_enabled(self, on: bool) -> None:
        """Disable: end the connection (the server stopped and reaped), remove the tools."""
        running = self._task is not None and not self._task.done
        if on and not running:
            self.link.enable()
            self._task = self.ctx.start_task(self._run, name="connection")
            log.info("MCP server %s enabled", self.link.name)
        elif not on and self.link.state != "disabled":
            if self._task is not None:
                self._task.cancel()
                await self._task.wait()
            for tool in list(self.registry):
                if _ours(tool, self.link):
                    self.registry.unregister(tool.name)
            self.link.disable()
            log.info("MCP server %s disabled", self.link.name)

    async def on_stop(self, reason: ExitReason) -> None:
        self.link.stopped()

    # -- the connection --------------------------------------------------------------

    async def _run(self) -> None:
        attempt = 0
        backoff = self.options.backoff
        while True:
            self.link.attempts += 1
            began = trio.current_time()
            reason = await self._attempt()
            if self.link.connects and trio.current_time() - began >= backoff.quiet_period:
                attempt = 0
            delay = backoff.delay(attempt)
            attempt += 1
            self.link.down(reason, trio.current_time() + delay)
            log.warning(
                "MCP server %s is down (%s); retrying in %.1f s", self.link.name, reason, delay
            )
            await trio.sleep(delay)

    async def _attempt(self) -> str:
        """One connection, start to end; why it ended.

        An HTTP server in ``transport = "auto"`` that cannot be reached over
        streamable HTTP is tried over legacy SSE at once (and the other way
        round once SSE is what worked); the one that connects is kept.
        """
        connects = self.link.connects
        reason = await self._guarded()
        config = self.link.config
        if (
            config.url is None
            or config.http_mode != "auto"
            or config.auth == "oauth"  # OAuth is streamable HTTP's
            or self.link.connects > connects
        ):
            return reason
        first = "legacy SSE" if self._sse else "streamable HTTP"
        self._sse = not self._sse
        second = await self._guarded()
        if self.link.connects > connects:
            return second
        self._sse = not self._sse
        if second == reason:  # not the transport's doing (a missing variable...)
            return reason
        other = "streamable HTTP" if first == "legacy SSE" else "legacy SSE"
        return f"{first}: {reason}; {other}: {second}"

    async def _guarded(self) -> str:
        try:
            return await self._connect_once()
        except Exception as exc:  # the server's failure, never the actor's
            return describe(exc)

    def _spawned(self, pid: int) -> None:
        self.link.pid = self.link.last_pid = pid

    def _poke(self) -> None:
        self._wake.set()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh = True
            self._poke()
        elif isinstance(message, Exception):
            log.info("MCP server %s: %s", self.link.name, describe(message))

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        return await elicit(self.link, params)

    async def _sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        assert self.sampling is not None
        return await self.sampling(params)

    async def _connect_once(self) -> str:
        try:
            return await self._connect(self.link.config)
        finally:
            self.link.pid = None  # the transport's exit has reaped it (or it never ran)

    async def _connect(self, config: ServerConfig) -> str:
        if self.osv is not None and config.command is not None:
            package = launched_package(config.command, config.args)
            if package is not None and (advisories := await self.osv.malware(package)):
                ids = ", ".join(advisories)
                return f"not started: {package} has a malware advisory in OSV ({ids})"
        exited = Exited(on_close=self._poke, on_spawn=self._spawned)
        transport = self._transport(exited)
        connect = trio.CancelScope(deadline=trio.current_time() + config.connect_timeout)
        with connect:
            try:
                async with (
                    transport as (read, write),
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_message,
                        elicitation_callback=self._elicit,
                        sampling_callback=self._sample if self.sampling is not None else None,
                        client_info=CLIENT_INFO,
                    ) as session,
                ):
                    init = await session.initialize()
                    self.link.server_name = init.server_info.name
                    self.link.server_version = init.server_info.version
                    await self._list(session)
                    connect.deadline = math.inf
                    self.link.up(session)
                    log.info("MCP server %s is ready: %s", config.name, ", ".join(self.link.tools))
                    try:
                        reason = await self._serve(session, exited)
                    finally:
                        self.link.session = None
            except Exception:
                if exited.ended_first:
                    return exited.describe()
                raise
            if reason is not None:
                return reason
        if connect.cancelled_caught:
            return (
                f"it did not start, initialize and list its tools within "
                f"connect_timeout ({config.connect_timeout:g} s)"
            )
        return exited.describe()  # once the transport has reaped the process

    async def _serve(self, session: ClientSession, exited: Exited) -> str | None:
        """Serve until the connection ends: why, or None when the transport closed."""
        http = self.link.config.transport == "http"
        interval = self.options.ping_interval if http else math.inf
        while True:
            if exited.closed.is_set():
                return None
            if self._refresh:
                self._refresh = False
                with trio.fail_after(self.options.list_timeout):
                    await self._list(session)
                continue
            self._wake = trio.Event()
            with trio.move_on_after(interval) as idle:
                await self._wake.wait()
            if idle.cancelled_caught:
                try:
                    with trio.fail_after(self.options.ping_timeout):
                        await session.send_ping()
                except trio.TooSlowError:
                    return f"it did not answer a ping within {self.options.ping_timeout:g} s"

    def _transport(self, exited: Exited) -> AbstractAsyncContextManager[Streams]:
        return open_transport(
            self.link.config,
            self.environ,
            exited,
            sse=self._sse,
            grace=self.options.stop_grace,
            data_dir=self.options.data_dir,
        )

    async def _list(self, session: ClientSession) -> None:
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self._register(listed)

    def _register(self, listed: list[types.Tool]) -> None:
        config = self.link.config
        offered: list[str] = []
        skipped: list[str] = []
        wanted: dict[str, McpTool] = {}
        for tool in listed:
            if not config.offers(tool.name):
                continue
            problem = schema_problem(tool.input_schema)
            name = tool_name(config.name, tool.name)
            if problem is None and name in wanted:
                problem = f"its name becomes {name}, as another tool's does"
            existing = self.registry.get(name)
            if problem is None and existing is not None and not _ours(existing, self.link):
                problem = f"{name} is already a tool of this daemon"
            if problem is not None:
                skipped.append(f"{tool.name}: {problem}")
                log.warning("MCP server %s: tool %s skipped: %s", config.name, tool.name, problem)
                continue
            wanted[name] = McpTool(self.link, tool, name)
            offered.append(tool.name)
        for existing_tool in list(self.registry):
            if _ours(existing_tool, self.link) and existing_tool.name not in wanted:
                self.registry.unregister(existing_tool.name)
        for name, new in wanted.items():
            old = self.registry.get(name)
            if (
                isinstance(old, McpTool)
                and old.spec() == new.spec()
                and old.remote == new.remote
                and old.read_only_hint == new.read_only_hint
            ):
                continue  # unchanged: keep the registry's cached specs
            self.registry.register(new, replace=True)
        self.link.set_tools(tuple(offered), tuple(skipped))


def _ours(tool: object, link: ServerLink) -> bool:
    return isinstance(tool, McpTool) and tool.link is link


def open_transport(
    config: ServerConfig,
    environ: Mapping[str, str],
    exited: Exited,
    *,
    sse: bool = False,
    grace: float = 0.5,
    data_dir: Path | None = None,
) -> AbstractAsyncContextManager[Streams]:
    """The server's transport (``${NAME}`` expanded from ``environ``); not yet entered.

    An ``auth = "oauth"`` server gets the SDK's OAuth provider over the tokens
    kept under ``data_dir`` (``LoginNeeded`` when there are none).
    """
    if config.command is not None:
        env = {key: expand(value, environ, f"env {key}") for key, value in config.env.items()}
        argv = [resolve_command(config.command, config.cwd), *config.args]
        return stdio_transport(argv, env, config.cwd, exited, grace=grace)
    assert config.url is not None
    headers = {
        key: expand(value, environ, f"header {key}") for key, value in config.headers.items()
    }
    if config.auth == "oauth":
        if data_dir is None:
            raise LoginNeeded("OAuth needs the daemon's data directory, which was not given")
        return http_transport(config.url, headers, daemon_auth(config, data_dir))
    return sse_transport(config.url, headers) if sse else http_transport(config.url, headers)


def describe(exc: BaseException) -> str:
    """A one-line account of ``exc``: the first leaf of a group, its type and message."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError | MissingVariable | PermissionError | LoginNeeded):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
