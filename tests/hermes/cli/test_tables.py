"""The control commands against a real daemon: ``--json`` parses, a terminal gets a table.

Piped output keeps its plain lines (other tests parse them); on a pseudo-terminal
each command prints one table whose columns start where their headers do.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hermes.cli.chat_pty import PtyChat
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon

PROMPT = "remember the marmalade jar"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("tables")) as d:
        sent = d.cli("send", PROMPT, "--json", timeout=CLI_BOUND)
        assert sent.returncode == 0, sent.stderr
        yield d


def cli_json(daemon: Daemon, *args: str) -> Any:
    run = daemon.cli(*args, "--json", timeout=CLI_BOUND)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def on_pty(daemon: Daemon, *args: str, cols: int = 200) -> list[str]:
    """The lines ``hermes ARGS`` shows on a pseudo-terminal ``cols`` wide."""
    term = PtyChat(list(args), daemon.env, daemon.root, cols=cols)
    try:
        assert term.wait(CLI_BOUND) == 0, term.text
        return term.text.splitlines()
    finally:
        term.close()


def columns(lines: list[str], headers: tuple[str, ...]) -> tuple[int, dict[str, int]]:
    """The header line's index and where each header starts on it."""
    for index, line in enumerate(lines):
        words = line.split()
        if words[: len(headers)] == list(headers):
            starts, at = {}, 0
            for header in headers:
                at = line.index(header, at)
                starts[header] = at
                at += len(header)
            return index, starts
    raise AssertionError(f"no header {headers} in:\n" + "\n".join(lines))


def cell(line: str, start: int, value: str) -> str:
    return line[start : start + len(value)]


def test_json_output_of_each_control_command_parses_with_its_fields(daemon: Daemon) -> None:
    sessions = cli_json(daemon, "sessions")
    assert len(sessions) == 1
    assert {"id", "title", "messages", "busy", "running", "ended", "updated_at"} <= set(sessions[0])
    assert sessions[0]["messages"] >= 2  # the prompt and its reply

    hits = cli_json(daemon, "search", "marmalade")
    assert hits and {"session_id", "seq", "role", "snippet"} <= set(hits[0])
    assert hits[0]["session_id"] == sessions[0]["id"]

    assert cli_json(daemon, "ps") == []
    tree = cli_json(daemon, "tree")
    assert tree["children"] and {"path", "class", "state"} <= set(tree["children"][0])

    memory = cli_json(daemon, "memory", "show")
    assert {"memory", "user", "pending"} <= set(memory)
    assert {"file", "used", "cap", "entries"} <= set(memory["memory"])
    assert cli_json(daemon, "memory", "pending") == []

    logs = cli_json(daemon, "logs", "-n", "5")
    assert len(logs) == 5 and all({"ts", "level", "msg"} <= set(entry) for entry in logs)


def test_piped_output_keeps_its_plain_lines(daemon: Daemon) -> None:
    run = daemon.cli("sessions", timeout=CLI_BOUND)
    assert run.returncode == 0, run.stderr
    [line] = run.stdout.splitlines()
    assert " msgs " in line and "ID" not in line and "\x1b" not in run.stdout


def test_sessions_on_a_terminal_is_a_table_with_aligned_columns(daemon: Daemon) -> None:
    [row] = cli_json(daemon, "sessions")
    lines = on_pty(daemon, "sessions", cols=120)
    at, starts = columns(lines, ("ID", "STATE", "MSGS", "UPDATED", "TITLE"))
    line = next(text for text in lines[at + 1 :] if row["id"] in text)
    assert cell(line, starts["ID"], row["id"]) == row["id"]
    state = "ended" if row["ended"] else ("busy" if row["busy"] else "running")
    state = state if row["ended"] or row["busy"] or row["running"] else "idle"
    assert cell(line, starts["STATE"], state) == state
    end, count = starts["MSGS"] + len("MSGS"), str(row["messages"])
    assert line[end - len(count) : end] == count  # numbers align right, under their header


def test_tree_on_a_terminal_lines_every_actor_up_under_its_headers(daemon: Daemon) -> None:
    tree = cli_json(daemon, "tree")
    nodes: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        nodes.append(node)
        for child in node.get("children") or []:
            walk(child)

    for top in tree["children"]:
        walk(top)
    lines = on_pty(daemon, "tree", cols=120)
    at, starts = columns(lines, ("ACTOR", "CLASS", "STATE", "MAILBOX", "BEAT", "RESTARTS"))
    body = [line for line in lines[at + 1 :] if line.strip()]
    lasting = [node for node in nodes if "/conn-" not in node["path"]]  # not this CLI's own
    assert len(lasting) > 3 and len(body) >= len(lasting)
    shown = {(len(line) - len(line.lstrip()), line.split()[0]): line for line in body}
    for node in lasting:
        depth = node["path"].count("/") - 1  # /hermes is depth 0
        line = shown[(2 * depth, node["path"].rsplit("/", 1)[-1])]  # indented by its depth
        assert cell(line, starts["CLASS"], node["class"]) == node["class"], line
        assert cell(line, starts["STATE"], node["state"]) == node["state"], line
        end, restarts = starts["RESTARTS"] + len("RESTARTS"), str(node.get("restarts", 0))
        assert line[end - len(restarts) : end] == restarts, line


def test_memory_show_on_a_terminal_titles_each_store_with_its_usage(daemon: Daemon) -> None:
    text = "\n".join(on_pty(daemon, "memory", cols=120))
    assert "Agent notes (" in text and "User profile (" in text
    assert text.count("(empty)") == 2


def test_tree_watch_on_a_terminal_redraws_one_table_in_place(daemon: Daemon) -> None:
    term = PtyChat(["tree", "--watch", "--interval", "0.2"], daemon.env, daemon.root, cols=120)
    try:
        for _ in range(3):  # three frames, each with the table under its stamp
            term.expect(r"hermes tree  \d\d:\d\d:\d\d  \d+ actors", timeout=CLI_BOUND)
            term.expect(r"ACTOR +CLASS +STATE +MAILBOX +BEAT +RESTARTS", timeout=CLI_BOUND)
            term.expect(r"SessionsManager +running", timeout=CLI_BOUND)
        raw = term.raw.decode("utf-8", "replace")
        assert "\x1b[2J" not in raw  # never a cleared screen
        assert raw.count("\x1b[2K") >= 2 * 10  # the frame's lines erased and rewritten
        os.kill(term.proc.pid, signal.SIGINT)
        assert term.wait(CLI_BOUND) == 0, term.text[-2000:]
    finally:
        term.close()
