"""A CLI control command imports only what it uses: no SDK, no store, no session code.

Each command runs in one fresh interpreter against a real daemon, through the
same click entry point as ``hermes``; the interpreter then lists its modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trio

from hermes.gateway.client import connect
from tests.hermes.daemon.daemon_proc import CLI_BOUND, running_daemon

DAEMON_ONLY = ("anthropic", "hermes.store", "hermes.session", "hermes.model")
"""What the daemon loads and a control command must never load (with submodules)."""
FORBIDDEN = (*DAEMON_ONLY, "mcp", "rich", "prompt_toolkit")
"""Those, the MCP SDK, and the terminal libraries (the probe's stdout is a pipe)."""

PROBE = """
import json, sys
from hermes.cli import main

commands, out = json.loads(sys.argv[1]), sys.argv[2]
codes = []
for args in commands:
    try:
        main.main(args, prog_name="hermes", standalone_mode=False)
        codes.append(0)
    except SystemExit as exc:
        codes.append(exc.code)
with open(out, "w") as file:
    json.dump({"codes": codes, "modules": sorted(sys.modules)}, file)
"""


def loaded_forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_the_control_commands_never_import_the_sdk_the_store_or_sessions(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as daemon:
        endpoint = daemon.endpoint
        assert endpoint is not None

        async def new_session() -> str:
            async with connect(endpoint) as client:
                session_id: str = (await client.call("session.create"))["id"]
                return session_id

        session_id = trio.run(new_session)
        commands = [
            ["daemon", "start"],  # one runs: says so
            ["daemon", "status"],
            ["sessions"],
            ["sessions", "--json"],
            ["cancel", session_id],
            ["stop", "--hard", session_id],
            ["tree"],
            ["tree", "--json"],
            ["ps"],
            ["ps", "--json"],
            ["orphans"],
            ["search", "hello"],
            ["search", "hello", "--json"],
            ["memory"],
            ["memory", "show", "--json"],
            ["memory", "pending", "--json"],
            ["logs", "-n", "1"],
            ["logs", "-n", "1", "--json"],
            ["daemon", "stop"],
        ]
        out = tmp_path / "probe.json"
        run = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(commands), str(out)],
            env=daemon.env,
            cwd=daemon.root,
            capture_output=True,
            text=True,
            timeout=CLI_BOUND,
        )
        assert run.returncode == 0, run.stderr
        probe = json.loads(out.read_text())
        assert dict(zip(map(" ".join, commands), probe["codes"], strict=True)) == {
            " ".join(args): 0 for args in commands
        }, run.stderr
        assert f"{session_id} was idle" in run.stdout
        assert f"already running (pid {endpoint.pid})" in run.stdout
        assert "hermes daemon stopped" in run.stdout
        forbidden = loaded_forbidden(probe["modules"])
        assert forbidden == [], f"{len(forbidden)} forbidden modules loaded: {forbidden[:8]}"
        assert "hermes.cli.commands" in probe["modules"]  # the probe did run the commands


def test_the_daemon_itself_loads_what_the_probe_forbids() -> None:
    """The probe's names are real modules: the daemon's own import graph has each of them."""
    code = "import sys, hermes.daemon.app; print('\\n'.join(sys.modules))"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=CLI_BOUND
    )
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert [name for name in DAEMON_ONLY if name not in loaded] == []


def test_the_curator_commands_never_import_the_sdk(tmp_path: Path) -> None:
    """``hermes curator`` reads skill files only: the tools, and so the SDK, stay unloaded."""
    env = {
        **os.environ,
        "HERMES_DATA_DIR": str(tmp_path / "data"),
        "HERMES_RUNTIME_DIR": str(tmp_path / "run"),
        "HERMES_CONFIG": str(tmp_path / "none.toml"),
    }
    commands = [["curator", "status"], ["curator", "status", "--json"]]
    out = tmp_path / "probe.json"
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(commands), str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=CLI_BOUND,
    )
    assert run.returncode == 0, run.stderr
    probe = json.loads(out.read_text())
    assert probe["codes"] == [0, 0], run.stderr
    assert "hermes.cli.curator_commands" in probe["modules"]
    assert "hermes.skills" in probe["modules"]
    sdk = [m for m in probe["modules"] if m == "anthropic" or m.startswith("anthropic.")]
    assert sdk == [], f"the curator loaded the SDK: {sdk[:5]}"
