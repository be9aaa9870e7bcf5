"""``hermes mcp list|test|enable|disable|login|serve``: MCP servers, and the daemon as one.

See docs/mcp.md.
"""

from __future__ import annotations

from typing import Any

import click

from .app import call_daemon, call_endpoint, fail, main, print_json, run_async


@main.group("mcp")
def mcp() -> None:
    """MCP servers: their state, tools and last error."""


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_servers(as_json: bool) -> None:
    """Each configured server: state, tools, last error."""
    rows: list[dict[str, Any]] = run_async(lambda: call_daemon("mcp.list"))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no MCP servers (add [mcp.servers.NAME] to the config; see docs/mcp.md)")
    for row in rows:
        click.echo(_line(row))


def _line(row: dict[str, Any]) -> str:
    state = row["state"]
    if state == "down" and row.get("retry_in") is not None:
        state = f"down, retrying in {row['retry_in']:g} s"
    tools = row.get("tools") or []
    line = f"{row['name']}  {row.get('transport', '?')}  {state}  {len(tools)} tool(s)"
    if tools:
        line += ": " + ", ".join(tools)
    if row.get("last_error"):
        line += f"\n    last error: {row['last_error']}"
    for skipped in row.get("skipped") or []:
        line += f"\n    skipped {skipped}"
    return line


@mcp.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def test_server(name: str, as_json: bool) -> None:
    """Connect to one server afresh: initialize, list its tools, ping, with timings."""
    answer: dict[str, Any] = run_async(lambda: call_daemon("mcp.test", name=name))
    probe, live = answer["probe"], answer["live"]
    if as_json:
        print_json(answer)
    elif probe is None:
        click.echo(f"{name}: {live['state']}: {live.get('reason') or 'not probed'}")
    elif probe["ok"]:
        click.echo(
            f"{name}: ok over {probe['transport']} ({probe['server']}): connect+initialize "
            f"{probe['connect_ms']:g} ms, tools/list {probe['list_ms']:g} ms "
            f"({probe['listed']} tools), ping {probe['ping_ms']:g} ms"
        )
    else:
        click.echo(f"{name}: failed over {probe['transport']}: {probe['reason']}")
    if not as_json:
        click.echo(f"  live connection: {_line(live)}")
    if probe is None or not probe["ok"]:
        raise SystemExit(1)


@mcp.command("enable")
@click.argument("name")
def enable(name: str) -> None:
    """Start a disabled server again (its tools come back once it has listed them)."""
    row: dict[str, Any] = run_async(lambda: call_daemon("mcp.enable", name=name))
    click.echo(f"{name}: {row['state']}")


@mcp.command("disable")
@click.argument("name")
def disable(name: str) -> None:
    """Stop a server until enabled again: its process is stopped and its tools removed."""
    row: dict[str, Any] = run_async(lambda: call_daemon("mcp.disable", name=name))
    click.echo(f"{name}: {row['state']}")


@mcp.command("login")
@click.argument("name")
def login(name: str) -> None:
    """Authorize Hermes with an `auth = "oauth"` HTTP server (opens a URL for you to visit)."""
    import trio

    from hermes.daemon.config import ConfigError, prepare
    from hermes.mcp.login import LoginFailed
    from hermes.mcp.login import login as run_login

    try:
        config, paths = prepare()
    except ConfigError as exc:
        fail(f"invalid configuration:\n{exc}")
    servers = {s.name: s for s in config.mcp.servers}
    server = servers.get(name)
    if server is None:
        listed = ", ".join(servers) or "none"
        fail(f"no MCP server {name!r} in {paths.config_file} (servers: {listed})")

    def announce(url: str) -> None:
        click.echo(f"Open this URL in your browser to authorize Hermes with {name}:\n\n  {url}\n")
        click.echo("Waiting for the authorization (the browser comes back to 127.0.0.1)...")

    try:
        result = trio.run(run_login, server, paths.data_dir, announce)
    except LoginFailed as exc:
        fail(f"{name}: login failed: {exc}")
    click.echo(
        f"{name}: logged in; token saved in {result.token_file} (mode 0600); "
        f"{len(result.tools)} tool(s): {', '.join(result.tools)}"
    )
    _reconnect(name)


def _reconnect(name: str) -> None:
    """A running daemon connects the server again at once with the new token."""
    from hermes.daemon.endpoint import NoDaemon, find_daemon

    from .app import daemon_paths

    try:
        endpoint = find_daemon(daemon_paths())
    except NoDaemon:
        return

    async def again() -> Any:
        await call_endpoint(endpoint, "mcp.disable", name=name)
        return await call_endpoint(endpoint, "mcp.enable", name=name)

    row: dict[str, Any] = run_async(again)
    click.echo(f"{name}: the running daemon reconnects ({row['state']})")


@mcp.command("serve")
def serve() -> None:
    """Serve this daemon as an MCP server over stdio (prompt, follow, steer, cancel...)."""
    from hermes.daemon.endpoint import find_daemon

    from .app import daemon_paths
    from .mcp_serve import serve as serve_stdio

    serve_stdio(lambda: find_daemon(daemon_paths()))
