"""The ``hermes`` command line."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import click

from . import __version__

T = TypeVar("T")


@click.group()
@click.version_option(__version__, prog_name="hermes")
def main() -> None:
    """Hermes on Trio: an agent daemon built from supervised actors.

    `hermes chat` starts the daemon if none runs and talks to it;
    `hermes daemon` runs it in the foreground. See docs/protocol.md.
    """


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"hermes: {message}", err=True)
    sys.exit(code)


def _paths() -> Any:
    from hermes.daemon.config import ConfigError, prepare
    from hermes.daemon.paths import resolve_paths

    try:
        _, paths = prepare()
    except ConfigError as exc:
        click.echo(
            f"hermes: warning: invalid configuration (a daemon would refuse it):\n{exc}", err=True
        )
        return resolve_paths()
    return paths


def _endpoint(start: bool = False) -> Any:
    from hermes.daemon.control import StartFailed, start_background
    from hermes.gateway.client import NoDaemon, find_daemon

    paths = _paths()
    try:
        return find_daemon(paths)
    except NoDaemon as exc:
        if not start:
            _fail(str(exc))
    try:
        endpoint = start_background(paths)
    except StartFailed as exc:
        _fail(str(exc))
    click.echo(f"hermes: started the daemon (pid {endpoint.pid})", err=True)
    return endpoint


def _run(fn: Callable[[], Awaitable[T]]) -> T:
    import trio
    import trio_websocket

    from hermes.gateway.client import GatewayError

    try:
        return trio.run(fn)
    except GatewayError as exc:
        _fail(f"{exc.code}: {exc.message}")
    except (trio_websocket.HandshakeError, OSError) as exc:
        _fail(f"cannot talk to the daemon: {type(exc).__name__}: {exc}")


async def _call(method: str, **params: Any) -> Any:
    from hermes.gateway.client import connect

    async with connect(_endpoint()) as client:
        return await client.call(method, **params)


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


# -- the daemon ----------------------------------------------------------------------------


@main.group("daemon", invoke_without_command=True)
@click.pass_context
def daemon(ctx: click.Context) -> None:
    """Run the daemon in the foreground (or: start, stop, status)."""
    if ctx.invoked_subcommand is None:
        from hermes.daemon.app import run_daemon

        sys.exit(run_daemon())


@daemon.command("start")
def daemon_start() -> None:
    """Start the daemon in the background (nothing to do if one runs)."""
    from hermes.daemon.control import StartFailed, start_background
    from hermes.gateway.client import NoDaemon, find_daemon

    paths = _paths()
    try:
        endpoint = find_daemon(paths)
        click.echo(f"hermes daemon already running (pid {endpoint.pid}) at {endpoint.url}")
        return
    except NoDaemon:
        pass
    try:
        endpoint = start_background(paths)
    except StartFailed as exc:
        _fail(str(exc))
    click.echo(f"hermes daemon started (pid {endpoint.pid}) at {endpoint.url}")


@daemon.command("stop")
@click.option("--force", is_flag=True, help="SIGKILL instead of a graceful SIGTERM.")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds to wait.")
def daemon_stop(force: bool, timeout: float) -> None:
    """Stop the running daemon (gracefully: turns settled, processes killed)."""
    from hermes.daemon.control import stop_daemon
    from hermes.gateway.client import NoDaemon

    try:
        pid = stop_daemon(_paths(), timeout, force)
    except (NoDaemon, TimeoutError) as exc:
        _fail(str(exc))
    click.echo(f"hermes daemon stopped (pid {pid})")


@daemon.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def daemon_status(as_json: bool) -> None:
    """Whether the daemon runs, where, and with which model."""
    from hermes.gateway.client import NoDaemon, find_daemon

    paths = _paths()
    try:
        endpoint = find_daemon(paths)
    except NoDaemon as exc:
        if as_json:
            _print_json({"running": False, "reason": str(exc)})
        _fail(str(exc), 3)
    status = _run(lambda: _call("daemon.status"))
    info = {
        "running": True,
        "url": endpoint.url,
        **status,
        "token_file": str(paths.token_file),
        "log": str(paths.log_file),
    }
    if as_json:
        _print_json(info)
        return
    model = (
        f"{status['model']} (offline demo model: no ANTHROPIC_API_KEY)"
        if status["demo"]
        else status["model"]
    )
    click.echo(f"hermes daemon running (pid {status['pid']}) at {endpoint.url}")
    click.echo(f"  model:    {model}")
    click.echo(f"  sessions: {status['sessions_running']} running")
    click.echo(f"  uptime:   {status['uptime']:.0f}s")
    click.echo(f"  token:    {paths.token_file}")
    click.echo(f"  log:      {paths.log_file}")


@main.command("logs")
@click.option("-n", "lines", default=50, show_default=True, help="How many lines.")
@click.option("--raw", is_flag=True, help="The JSON lines as written.")
def logs(lines: int, raw: bool) -> None:
    """Show the daemon's structured log."""
    from hermes.daemon.logs import format_line

    path = _paths().log_file
    if not path.exists():
        _fail(f"no log yet at {path}")
    for line in path.read_text(errors="replace").splitlines()[-lines:]:
        click.echo(line if raw else format_line(line))


# -- one-shot commands ---------------------------------------------------------------------


@main.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--limit", default=50, show_default=True)
def sessions(as_json: bool, limit: int) -> None:
    """List sessions, most recent first."""
    rows = _run(lambda: _call("session.list", limit=limit))
    if as_json:
        _print_json(rows)
        return
    if not rows:
        click.echo("no sessions")
    for row in rows:
        state = (
            "ended"
            if row["ended"]
            else ("busy" if row["busy"] else ("running" if row["running"] else "idle"))
        )
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated_at"]))
        click.echo(
            f"{row['id']}  {state:7}  {row['messages']:4} msgs  {when}  {row['title'] or ''}"
        )


@main.command("send")
@click.argument("text")
@click.option("--session", "session_id", default=None, help="Session id (default: a new one).")
@click.option("--mode", default=None, help="Busy mode for this prompt.")
@click.option("--no-wait", is_flag=True, help="Return once the prompt is accepted.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def send(text: str, session_id: str | None, mode: str | None, no_wait: bool, as_json: bool) -> None:
    """Send a prompt; print the reply (or, with --no-wait, how it was accepted)."""
    from hermes.gateway.client import connect

    async def go() -> Any:
        async with connect(_endpoint()) as client:
            sid = session_id or (await client.call("session.create"))["id"]
            if not no_wait:
                await client.call("events.subscribe", session=sid)
            params: dict[str, Any] = {"session": sid, "text": text}
            if mode:
                params["mode"] = mode
            accepted = await client.request("prompt.submit", params)
            if no_wait:
                return {"session": sid, **accepted}
            end = await _wait_turn(client, accepted, text, None)
            return {"session": sid, **end}

    result = _run(go)
    if as_json or no_wait:
        _print_json(result)
    else:
        click.echo(result.get("text", ""))
    if not no_wait and result.get("reason") not in ("completed", None):
        sys.exit(1)


async def _wait_turn(
    client: Any,
    accepted: dict[str, Any],
    text: str,
    render: Callable[[dict[str, Any]], None] | None,
) -> dict[str, Any]:
    target = accepted.get("turn") if accepted.get("how") in ("started", "rolled_back") else None
    async for event in client.events:
        if render is not None:
            render(event)
        payload = event.get("payload") or {}
        if event["type"] == "turn.started" and target is None and payload.get("prompt") == text:
            target = payload.get("turn")
        if event["type"] == "turn.completed" and payload.get("turn") == target:
            return dict(payload)
    raise RuntimeError("the connection closed before the turn ended")


@main.command("cancel")
@click.argument("target")
def cancel(target: str) -> None:
    """Cancel a session's running turn (TARGET = session id) or any actor (TARGET = /path)."""
    if target.startswith("/"):
        result = _run(lambda: _call("actor.cancel", path=target))
        click.echo(f"cancelled {result['path']}: {result['reason']}")
    else:
        result = _run(lambda: _call("cancel", session=target))
        if result["cancelled"]:
            click.echo(f"cancelled turn {result['turn']} of {target}")
        else:
            click.echo(f"{target} was idle")


@main.command("steer")
@click.argument("session_id")
@click.argument("text")
def steer(session_id: str, text: str) -> None:
    """Steer the running turn of a session (or start one when idle)."""
    result = _run(lambda: _call("steer", session=session_id, text=text))
    click.echo(result["how"])


@main.command("stop")
@click.argument("session_id")
@click.option("--hard", is_flag=True, help="Cancel at once instead of a soft interrupt.")
def stop(session_id: str, hard: bool) -> None:
    """Interrupt (soft) or cancel (--hard) a session's running turn."""
    method = "cancel" if hard else "interrupt"
    result = _run(lambda: _call(method, session=session_id))
    click.echo(json.dumps(result))


@main.command("search")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, as_json: bool) -> None:
    """Full-text search over every session."""
    hits = _run(lambda: _call("search", query=query))
    if as_json:
        _print_json(hits)
        return
    for hit in hits:
        click.echo(f"{hit['session_id']} #{hit['seq']} {hit['role']}: {hit['snippet']}")


@main.command("orphans")
@click.option("--kill", "kill_them", is_flag=True, help="Kill them (fingerprint re-checked first).")
@click.option("--process", "process_id", default=None, help="Only this process id.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def orphans(kill_them: bool, process_id: str | None, as_json: bool) -> None:
    """Background processes a dead daemon left running; --kill kills them.

    A process whose pid now names another program is never signalled: it is
    marked lost. Asks the running daemon, which owns the store.
    """
    if kill_them:
        params = {} if process_id is None else {"process": process_id}
        rows = _run(lambda: _call("orphans.kill", **params))
    else:
        rows = _run(lambda: _call("orphans.list"))
    if as_json:
        _print_json(rows)
        return
    if not rows:
        click.echo("no orphaned background processes")
    for row in rows:
        state = row.get("action") or row.get("liveness")
        click.echo(f"{row['id']}  pid {row['pid']}  {state}  {row['command'][:60]}")


@main.command("tree")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tree(as_json: bool) -> None:
    """The daemon's supervision tree: state, mailbox depth, heartbeat age, restarts."""
    snapshot = _run(lambda: _call("tree.snapshot"))
    if as_json:
        _print_json(snapshot)
        return
    for line in render_tree(snapshot):
        click.echo(line)


def render_tree(snapshot: dict[str, Any]) -> list[str]:
    lines: list[str] = []

    def walk(node: dict[str, Any], depth: int) -> None:
        mailbox = node.get("mailbox") or {}
        age = node.get("heartbeat_age")
        age_text = f"{age:.1f}s" if isinstance(age, int | float) else "-"
        name = node.get("path", "?").rsplit("/", 1)[-1]
        lines.append(
            f"{'  ' * depth}{name}  [{node.get('class', '?')}] {node.get('state', '?')}"
            f"  mailbox {mailbox.get('depth', 0)}  beat {age_text}"
            f"  restarts {node.get('restarts', 0)}  {node.get('path', '')}"
        )
        for child in node.get("children") or []:
            walk(child, depth + 1)

    for top in snapshot.get("children") or []:
        walk(top, 0)
    return lines


# -- chat ----------------------------------------------------------------------------------


@main.command("chat")
@click.argument("prompt", required=False)
@click.option("--session", "session_id", default=None, help="Resume this session.")
def chat(prompt: str | None, session_id: str | None) -> None:
    """Chat with the agent: streams the answer, shows tools, asks approvals inline.

    With PROMPT, runs that one turn and exits. Ctrl+C interrupts the turn;
    twice within 2 s exits. Starts the daemon if none runs.
    """
    endpoint = _endpoint(start=True)
    code = _run(lambda: _chat(endpoint, prompt, session_id))
    sys.exit(code)


async def _chat(endpoint: Any, prompt: str | None, session_id: str | None) -> int:
    import trio

    from hermes.gateway.client import GatewayError, connect

    async with connect(endpoint) as client:
        status = await client.call("daemon.status")
        if session_id is None:
            session_id = (
                await client.call("session.create", title=prompt[:60] if prompt else None)
            )["id"]
        else:
            await client.call("session.resume", session=session_id)
        sid: str = session_id
        if status["demo"]:
            click.echo(
                f"[offline demo model {status['model']}: set ANTHROPIC_API_KEY for Claude]",
                err=True,
            )
        click.echo(f"[session {sid}]", err=True)
        await client.call("events.subscribe", session=sid, approvals=True)
        state = _ChatState()

        async def on_signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    now = time.monotonic()
                    if now - state.last_sigint < 2.0:
                        state.code = 130
                        state.done.set()
                        return
                    state.last_sigint = now
                    click.echo("\n[^C: interrupting; again within 2 s to exit]", err=True)
                    with contextlib.suppress(GatewayError):
                        await client.call("interrupt", session=sid)

        def render(event: dict[str, Any]) -> None:
            kind, payload = event["type"], event.get("payload") or {}
            if kind == "text.delta":
                click.echo(payload["text"], nl=False)
            elif kind == "tool.started":
                click.echo(f"\n[tool {payload['name']} {payload['call_id']}]", err=True)
            elif kind == "tool.completed":
                click.echo(f"[tool {payload['name']}: {payload['status']}]", err=True)
            elif kind == "approval.requested":
                click.echo(
                    f"\n[approval {payload['request_id']}: {payload['command']} "
                    f"({payload['reasons']}) - answer /approve {payload['request_id']} "
                    "once|session|always|deny]",
                    err=True,
                )
            elif kind == "error.occurred":
                click.echo(f"\n[error: {payload['message']}]", err=True)
            elif kind == "message.completed" and payload.get("text"):
                click.echo("")
            elif kind == "turn.completed" and payload["reason"] != "completed":
                click.echo(f"\n[turn {payload['turn']} {payload['reason']}]", err=True)
            elif kind == "events.dropped":
                click.echo(f"\n[{payload.get('count')} events dropped]", err=True)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(on_signals)

            async def stop_when_done() -> None:
                await state.done.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(stop_when_done)
            if prompt is not None:
                accepted = await client.call("prompt.submit", session=sid, text=prompt)
                end = await _wait_turn(client, accepted, prompt, render)
                state.code = 0 if end["reason"] in ("completed", "interrupted") else 1
                nursery.cancel_scope.cancel()
                return state.code

            async def printer() -> None:
                async for event in client.events:
                    render(event)

            nursery.start_soon(printer)
            while True:
                line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
                if not line:
                    break
                text = line.strip()
                if not text:
                    continue
                try:
                    if await _slash(client, sid, text):
                        break
                except GatewayError as exc:
                    click.echo(f"[{exc.code}: {exc.message}]", err=True)
            nursery.cancel_scope.cancel()
        return state.code


class _ChatState:
    """What the chat loop's tasks share: the exit code and the double-Ctrl+C clock."""

    def __init__(self) -> None:
        import trio  # the CLI imports trio lazily, for a fast start

        self.last_sigint = 0.0
        self.code = 0
        self.done = trio.Event()


async def _slash(client: Any, sid: str, text: str) -> bool:
    """Handle one typed line; True to quit."""
    if not text.startswith("/"):
        await client.call("prompt.submit", session=sid, text=text)
        return False
    command, _, rest = text.partition(" ")
    rest = rest.strip()
    if command in ("/quit", "/exit"):
        return True
    if command == "/steer":
        await client.call("steer", session=sid, text=rest)
    elif command == "/redirect":
        await client.call("redirect", session=sid, text=rest)
    elif command == "/stop":
        await client.call("interrupt", session=sid)
    elif command == "/cancel":
        await client.call("cancel", session=sid)
    elif command == "/tree":
        for line in render_tree(await client.call("tree.snapshot")):
            click.echo(line)
    elif command == "/sessions":
        for row in await client.call("session.list"):
            click.echo(f"{row['id']}  {row['messages']} msgs  {row['title'] or ''}")
    elif command == "/approve":
        request_id, _, choice = rest.partition(" ")
        await client.call(
            "approval.respond", session=sid, request_id=int(request_id), choice=choice or "once"
        )
    else:
        click.echo(
            f"[{command}: not available (try /steer /redirect /stop /cancel /tree "
            "/sessions /approve /quit)]",
            err=True,
        )
    return False


@main.command("fake-provider")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--api-key", default=None, help="Key clients must send (default: accept any).")
@click.option(
    "--event-delay",
    default=0.0,
    show_default=True,
    type=float,
    help="Seconds between the demo model's SSE events.",
)
@click.option(
    "--reply", default=None, help="Answer every request with this text instead of the demo model."
)
@click.option("-v", "--verbose", is_flag=True, help="Log each request to stderr.")
def fake_provider(
    host: str,
    port: int,
    api_key: str | None,
    event_delay: float,
    reply: str | None,
    verbose: bool,
) -> None:
    """Serve the fake Anthropic Messages API (offline demo model) until SIGINT/SIGTERM.

    Prints the base URL (for ANTHROPIC_BASE_URL) on the first line of stdout.
    """
    import trio

    from actors import tune_gc

    from .fake.standalone import serve_standalone

    tune_gc()  # a process of its own: fewer cyclic-GC passes over the request records
    trio.run(
        lambda: serve_standalone(
            host,
            port,
            verbose=verbose,
            reply=reply,
            api_key=api_key,
            demo_event_delay=event_delay,
            record_limit=1000,
        )
    )
