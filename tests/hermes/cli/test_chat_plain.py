"""``hermes chat`` for scripts: plain, escape-free output when stdout is not a terminal
or ``--plain`` is given, against a real daemon with the offline demo model."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hermes.cli.chat_pty import PtyChat
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("chat-plain")) as d:
        yield d


def hermes(daemon: Daemon, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes", *args],
        env=daemon.env,
        cwd=daemon.root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CLI_BOUND,
    )


def test_one_shot_output_is_plain_and_byte_stable(daemon: Daemon) -> None:
    (daemon.root / "a-file.txt").write_text("x")
    runs = [hermes(daemon, "chat", "list the files here") for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "\x1b" not in run.stdout and "\x1b" not in run.stderr
        assert "[tool terminal toolu_" in run.stderr and "[tool terminal: ok]" in run.stderr
        assert "[session " in run.stderr
    assert runs[0].stdout == runs[1].stdout  # two sessions, the same bytes for a script
    assert runs[0].stdout.startswith("I'll list the files.\n")
    assert "- terminal (ok): " in runs[0].stdout


def test_piped_lines_run_commands_and_prompts_then_wait_for_the_reply(daemon: Daemon) -> None:
    run = hermes(daemon, "chat", stdin="/help\n/hepl\nhello there\n")
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\x1b" not in run.stderr
    assert "/help         list these commands" in run.stdout  # padded to /checkpoints
    assert "/quit         leave" in run.stdout
    assert "[unknown command /hepl: did you mean /help? (/help lists them)]" in run.stderr
    assert 'You said: "hello there"' in run.stdout  # stdin ended: the turn was waited for


def test_plain_flag_on_a_terminal_writes_no_escapes(daemon: Daemon, tmp_path: Path) -> None:
    term = PtyChat(["chat", "--plain", "hello plainly"], daemon.env, daemon.root)
    try:
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    shown = term.raw.decode()
    assert 'You said: "hello plainly"' in shown
    assert "\x1b" not in shown, repr(shown[:400])


def test_one_shot_on_a_terminal_renders_with_rich(daemon: Daemon) -> None:
    term = PtyChat(["chat", "list the files here"], daemon.env, daemon.root)
    try:
        term.expect(r"✓ terminal ls\b.*\s+[0-9.]+s\s+ok")  # with its arguments in short
        term.expect(r"turn 1 completed in")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    assert "\x1b[" in term.raw.decode()
    assert "[tool terminal" not in term.text  # the plain lines are not used


def test_busy_sets_the_mode_of_the_lines_typed_next(daemon: Daemon) -> None:
    run = hermes(daemon, "chat", stdin="/busy\n/busy sometimes\n/busy queue\n/busy\nhello\n")
    assert run.returncode == 0, run.stderr
    notes = run.stderr
    assert "[busy mode: the session default]" in notes
    assert (
        "[busy mode 'sometimes': expected one of interrupt, queue, steer, reject, rollback]"
        in notes
    )
    assert notes.count("[busy mode: queue]") == 2
    assert 'You said: "hello"' in run.stdout  # the prompt went with mode queue, and ran
