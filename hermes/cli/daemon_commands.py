"""``hermes daemon [start|stop|status]`` and ``hermes logs``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from .app import call_endpoint, daemon_paths, fail, main, print_json, run_async
from .tables import on_terminal, print_table


@main.group("daemon", invoke_without_command=True)
@click.pass_context
def daemon(ctx: click.Context) -> None:
    """Run the daemon in the foreground (or: start, stop, status)."""
    if ctx.invoked_subcommand is None:
        from hermes.daemon.app import run_daemon
        from hermes.daemon.ready import ReadyOut, take_ready_fd
        from hermes.gateway.server import GatewayActor

        ready_fd = take_ready_fd(os.environ)  # set by `hermes daemon start`
        if ready_fd is None:
            sys.exit(run_daemon(GatewayActor))
        with ReadyOut(sys.stdout, ready_fd) as out:
            code = run_daemon(GatewayActor, out=out)
        sys.exit(code)


@daemon.command("start")
def daemon_start() -> None:
    """Start the daemon in the background (nothing to do if one runs)."""
    from hermes.daemon.control import StartFailed, start_background
    from hermes.daemon.endpoint import NoDaemon, find_daemon

    paths = daemon_paths()
    try:
        endpoint = find_daemon(paths)
        click.echo(f"hermes daemon already running (pid {endpoint.pid}) at {endpoint.url}")
        return
    except NoDaemon:
        pass
    try:
        endpoint = start_background(paths)
    except StartFailed as exc:
        fail(str(exc))
    click.echo(f"hermes daemon started (pid {endpoint.pid}) at {endpoint.url}")


@daemon.command("stop")
@click.option("--force", is_flag=True, help="SIGKILL instead of a graceful SIGTERM.")
@click.option(
    "--timeout",
    default=60.0,
    show_default=True,
    help="Seconds to wait (the shutdown's phases take up to ~50 s with the defaults).",
)
def daemon_stop(force: bool, timeout: float) -> None:
    """Stop the running daemon (its phased shutdown); says what ran over, if anything."""
    from hermes.daemon.control import stop_daemon
    from hermes.daemon.endpoint import NoDaemon
    from hermes.daemon.shutdown_report import stop_note

    paths = daemon_paths()
    try:
        pid = stop_daemon(paths, timeout, force)
    except (NoDaemon, TimeoutError) as exc:
        fail(str(exc))
    click.echo(f"hermes daemon stopped (pid {pid})")
    note = stop_note(paths, pid)  # what ran over in its shutdown, in one line
    if note is not None:
        click.echo(note)


@daemon.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def daemon_status(as_json: bool) -> None:
    """Whether the daemon runs, where, and with which model."""
    from hermes.gateway.client import NoDaemon, find_daemon

    paths = daemon_paths()
    try:
        endpoint = find_daemon(paths)
    except NoDaemon as exc:
        if as_json:
            print_json({"running": False, "reason": str(exc)})
        fail(str(exc), 3)
    status = run_async(lambda: call_endpoint(endpoint, "daemon.status"))
    info = {
        "running": True,
        "url": endpoint.url,
        **status,
        "token_file": str(paths.token_file),
        "log": str(paths.log_file),
    }
    if as_json:
        print_json(info)
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
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of the entries.")
def logs(lines: int, raw: bool, as_json: bool) -> None:
    """Show the daemon's structured log (a table on a terminal)."""
    from hermes.daemon.logs import format_line

    path = daemon_paths().log_file
    if not path.exists():
        fail(f"no log yet at {path}")
    tail = path.read_text(errors="replace").splitlines()[-lines:]
    if as_json:
        print_json([_entry(line) for line in tail])
    elif not raw and on_terminal():
        rows = [_log_row(_entry(line)) for line in tail]
        print_table(
            ("TIME", "LEVEL", "ACTOR", "LOGGER", "MESSAGE"), rows, wrap=("ACTOR", "MESSAGE")
        )
    else:
        for line in tail:
            click.echo(line if raw else format_line(line))


def _entry(line: str) -> dict[str, Any]:
    """A log line as its JSON object; a line that is not one is ``{"raw": line}``."""
    try:
        entry = json.loads(line)
    except ValueError:
        return {"raw": line}
    return entry if isinstance(entry, dict) else {"raw": line}


def _log_row(entry: dict[str, Any]) -> tuple[str, ...]:
    if "raw" in entry and "msg" not in entry:
        return ("", "", "", "", str(entry["raw"]))
    message = str(entry.get("msg"))
    if entry.get("exc"):
        message += "\n" + str(entry["exc"])
    return (
        str(entry.get("ts", "")),
        str(entry.get("level", "?")),
        str(entry.get("actor") or "-"),
        str(entry.get("logger", "")),
        message,
    )
