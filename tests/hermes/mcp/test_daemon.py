"""MCP servers in a real ``hermes daemon``: a broken server never keeps it from serving."""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..daemon.daemon_proc import STARTUP_BOUND, running_daemon
from .conftest import SERVER


def processes_with(argument: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``argument``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if argument.encode() in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(int(entry.name))
    return found


def post(url: str, token: str, path: str) -> tuple[int, Any]:
    """One HTTP POST to the daemon: the status and the JSON body."""
    request = urllib.request.Request(
        url.rstrip("/") + path,
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())["result"]
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_daemon_with_a_broken_mcp_server_serves_and_stops_its_servers(tmp_path: Path) -> None:
    state = str(tmp_path / "good-starts")
    config = (
        f"[mcp.servers.good]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([SERVER, '--state', state])}\n"
        f"[mcp.servers.broken]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([SERVER, '--exit-at-start', '2'])}\n"
    )
    with running_daemon(tmp_path, config) as daemon:
        deadline = time.monotonic() + STARTUP_BOUND
        messages: list[str] = []
        while time.monotonic() < deadline:
            messages = [e["msg"] for e in daemon.log_entries()]
            ready = any(m.startswith("MCP server good is ready: echo") for m in messages)
            if ready and any(m.startswith("MCP server broken is down") for m in messages):
                break
            time.sleep(0.1)
        assert any("MCP server good is ready: echo, getenv" in m for m in messages), messages
        broken = [m for m in messages if m.startswith("MCP server broken is down")]
        assert "exited with code 2; stderr: cannot start: no configuration" in broken[0]
        assert len(processes_with(state)) == 1
        tree = daemon.cli("tree")
        assert tree.returncode == 0, tree.stderr
        assert "mcp" in tree.stdout and "good" in tree.stdout and "broken" in tree.stdout
        listed = daemon.cli("mcp", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = {row["name"]: row for row in json.loads(listed.stdout)}
        assert rows["good"]["state"] == "ready" and "echo" in rows["good"]["tools"]
        assert rows["broken"]["state"] == "down"
        assert "cannot start: no configuration" in rows["broken"]["last_error"]
        tested = daemon.cli("mcp", "test", "good")
        assert tested.returncode == 0, tested.stderr
        assert tested.stdout.startswith(
            "good: ok over stdio (test-server 1.0): connect+initialize "
        )
        assert "tools/list" in tested.stdout and "ping" in tested.stdout
        assert "  live connection: good  stdio  ready" in tested.stdout
        tested = daemon.cli("mcp", "test", "broken", "--json")
        assert tested.returncode == 1
        probe = json.loads(tested.stdout)["probe"]
        assert probe == {
            "ok": False,
            "transport": "stdio",
            "reason": "the server exited with code 2; stderr: cannot start: no configuration",
        }
        missing = daemon.cli("mcp", "test", "nosuch")
        assert missing.returncode == 1
        assert "not_found: no running MCP server 'nosuch' (servers: good, broken)" in missing.stderr
        disabled = daemon.cli("mcp", "disable", "good")
        assert (disabled.returncode, disabled.stdout) == (0, "good: disabled\n"), disabled.stderr
        assert processes_with(state) == []
        enabled = daemon.cli("mcp", "enable", "good")
        assert enabled.returncode == 0 and enabled.stdout.startswith("good: "), enabled.stderr
        deadline = time.monotonic() + STARTUP_BOUND
        while time.monotonic() < deadline and len(processes_with(state)) != 1:
            time.sleep(0.1)
        assert len(processes_with(state)) == 1
        done = daemon.cli("send", "hello there", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["reason"] == "completed"
        session = json.loads(done.stdout)["session"]
        status, answer = post(daemon.url, daemon.token, f"/sessions/{session}/mcp/good/disable")
        assert (status, answer) == (
            200,
            {"session": session, "name": "good", "enabled": False, "disabled": ["good"]},
        )
        status, answer = post(daemon.url, daemon.token, f"/sessions/{session}/mcp/good/enable")
        assert (status, answer["enabled"], answer["disabled"]) == (200, True, [])
        status, answer = post(daemon.url, daemon.token, f"/sessions/{session}/mcp/nosuch/disable")
        assert status == 404 and "no running MCP server 'nosuch'" in json.dumps(answer)
    assert processes_with(state) == []  # stopped with the daemon: killed and reaped


def test_mcp_list_says_when_no_server_is_configured(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as daemon:
        listed = daemon.cli("mcp", "list")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("no MCP servers (add [mcp.servers.NAME]"), listed
        as_json = daemon.cli("mcp", "list", "--json")
        assert json.loads(as_json.stdout) == [], as_json
