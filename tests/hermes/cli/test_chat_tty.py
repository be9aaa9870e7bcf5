"""``hermes chat`` in a real pseudo-terminal against a real daemon and a scripted fake.

Each test starts ``python -m hermes chat`` on a pty (prompt_toolkit and rich see a
terminal), types keys and asserts what the screen shows, and, through a WebSocket
client of its own, what the daemon recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from hermes.fake import FakeProvider, Reply, Text, ToolUse
from hermes.gateway.client import connect
from tests.hermes.cli.chat_pty import PtyChat
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.fake_thread import ThreadedFake

MARKDOWN = "show me some markdown"
MARKDOWN_REPLY = (
    "# Big Title\n\nSome **bold words** here.\n\n```python\ndef greet():\n    return 'hi'\n```\n"
)
DANGER = "delete the scratch dir"
STORY = "tell me a long streaming story"
"""Answered with 600 deltas 50 ms apart: a turn that streams for half a minute."""
SESSION = re.compile(r"session (\d{8}-\d{6}-[0-9a-f]{8})")


def _provider() -> FakeProvider:
    fake = FakeProvider(demo_event_delay=0.03)
    fake.when(Reply.of(MARKDOWN_REPLY), last_user_text=MARKDOWN)
    story = Text(deltas=("once upon a time ",) * 600)
    only_story = re.compile(rf"\A{STORY}\Z")  # not the next prompt, sent after it
    fake.when(Reply.of(story, event_delay=0.05), last_user_text=only_story)
    fake.when(
        Reply.of("Deleting.", ToolUse("terminal", {"command": "rm -r ./no-such-scratch-dir"})),
        last_user_text=DANGER,
    )
    return fake


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("chat-tty")
    with ThreadedFake(_provider()) as fake:
        config = f'[model]\nbase_url = "{fake.base_url}"\n'
        with running_daemon(root, config, ANTHROPIC_API_KEY="test-key", NO_PROXY="*") as d:
            yield d


def chat(daemon: Daemon, *args: str) -> PtyChat:
    return PtyChat(["chat", *args], daemon.env, daemon.root)


def started(term: PtyChat) -> str:
    """The session id shown above the prompt (keys typed from now on reach the prompt:
    the chat holds the terminal in raw mode between prompts too)."""
    return term.expect(SESSION.pattern).group(1)


def session_events(daemon: Daemon, session: str) -> list[dict[str, Any]]:
    """Every stored event of ``session`` (replayed from seq 0)."""

    async def go() -> list[dict[str, Any]]:
        with trio.fail_after(CLI_BOUND):
            async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                answer = await client.call("events.subscribe", session=session, since=0)
                return [await client.events.receive() for _ in range(answer["replayed"])]

    return trio.run(go)


def test_history_is_kept_across_two_runs(daemon: Daemon) -> None:
    line = "remember the blue heron"
    first = chat(daemon)
    try:
        started(first)
        first.send(line + "\r")
        first.expect(r"You said")
        first.expect(r"turn 1 completed in")
        first.send("\x04")
        assert first.wait(CLI_BOUND) == 0
    finally:
        first.close()
    history = (daemon.paths.data_dir / "chat_history").read_text()
    assert f"+{line}" in history
    second = chat(daemon)
    try:
        started(second)
        second.send("\x1b[A")  # Up: the last line typed in the first run
        second.expect(re.escape(line))
        second.send("\x15\x04")  # Ctrl+U empties the line, Ctrl+D leaves
        assert second.wait(CLI_BOUND) == 0
    finally:
        second.close()


def test_slash_completion_offers_help_and_help_lists_commands(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        started(term)
        term.send("/he")
        term.expect(r"/help\s+list these commands")  # the completion menu
        term.send("\t\r")
        for command in ("/new", "/resume", "/steer", "/cancel", "/approve", "/quit"):
            term.expect(re.escape(command))
        term.expect(r"Ctrl\+D leaves")
        term.send("/hepl\r")
        term.expect(r"unknown command /hepl: did you mean /help\?")
        term.send("/quit\r")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()


def test_a_pasted_block_is_one_prompt_and_alt_enter_adds_a_line(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        session = started(term)
        term.send("\x1b[200~first pasted line\nsecond pasted line\x1b[201~")
        term.send("\x1b\r")  # Alt+Enter: a newline, not a submit
        term.send("typed third line\r")
        term.expect(r"You said")
        term.expect(r"turn 1 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    prompts = [
        e["payload"]["prompt"]
        for e in session_events(daemon, session)
        if e["type"] == "turn.started"
    ]
    assert prompts == ["first pasted line\nsecond pasted line\ntyped third line"]


def test_ctrl_c_interrupts_a_streaming_turn_and_the_session_goes_on(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        session = started(term)
        term.send(STORY + "\r")
        term.expect(r"● turn 1")  # the prompt shows the running turn
        term.send("\x03")
        term.expect(r"\^C: interrupting the turn")
        term.expect(r"turn 1 interrupted in")
        term.send("and now say hello\r")
        term.expect(r"You said")
        term.expect(r"turn 2 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    ends = [e["payload"] for e in session_events(daemon, session) if e["type"] == "turn.completed"]
    assert [(end["turn"], end["reason"]) for end in ends] == [(1, "interrupted"), (2, "completed")]


def test_markdown_is_rendered_with_highlighted_code(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        started(term)
        term.send(MARKDOWN + "\r")
        term.expect(r"Big Title")
        term.expect(r"bold words")
        term.expect(r"def greet\(\):")
        term.expect(r"turn 1 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    shown = term.text
    assert "# Big Title" not in shown and "**bold words**" not in shown and "```" not in shown
    raw = term.raw.decode()
    assert re.search(r"\x1b\[[0-9;]*1m[^\x1b]*bold words", raw)  # bold, not asterisks
    greet = raw.index("greet")
    assert re.search(r"\x1b\[[0-9;]*38;[25];", raw[greet - 200 : greet])  # a syntax colour


def test_an_approval_is_answered_with_one_key(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        session = started(term)
        term.send(DANGER + "\r")
        term.expect(r"approval \d+: run this command\?")
        term.expect(r"rm -r \./no-such-scratch-dir")
        term.expect(r"\[o\]nce\s+\[s\]ession\s+\[a\]lways\s+\[d\]eny")
        term.expect(r"approve\? o/s/a/d")
        term.send("d")
        term.expect(r"approval \d+: deny")
        term.expect(r"✗ terminal rm -r \./no-such-scratch-dir\s+[0-9.]+s\s+error")  # refused
        term.expect(r"turn 1 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    resolved = [
        e["payload"] for e in session_events(daemon, session) if e["type"] == "approval.resolved"
    ]
    assert [r["choice"] for r in resolved] == ["deny"]


def test_ctrl_c_twice_at_an_empty_prompt_leaves(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        started(term)
        term.send("some text")
        term.send("\x03")  # clears the line
        term.send("\x03")
        term.expect(r"Ctrl\+C again to leave")
        term.send("\x03")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()


def test_ctrl_c_twice_quickly_cancels_and_the_session_goes_on(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        session = started(term)
        term.send(STORY + "\r")
        term.expect(r"● turn 1")
        term.send("\x03\x03")
        term.expect(r"turn 1 (interrupted|cancelled) in")  # the first may have stopped it
        term.send("and now say hello\r")
        term.expect(r"turn 2 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    assert "^C: interrupting the turn; again within 1 s to cancel" in term.text
    assert "^C: cancelling the turn; again to leave" in term.text
    ends = [e["payload"] for e in session_events(daemon, session) if e["type"] == "turn.completed"]
    assert [end["turn"] for end in ends] == [1, 2]
    assert ends[0]["reason"] in ("interrupted", "cancelled") and ends[1]["reason"] == "completed"


def test_a_line_typed_during_a_turn_follows_the_busy_mode(daemon: Daemon) -> None:
    term = chat(daemon)
    try:
        session = started(term)
        term.send(STORY + "\r")
        term.expect(r"● turn 1")
        term.send("a follow-up question\r")  # the default busy mode: interrupt, a redirect
        term.expect(r"redirected turn 1 with your message")
        term.expect(r"turn 1 completed in")
        term.send("\x04")
        assert term.wait(CLI_BOUND) == 0
    finally:
        term.close()
    events = session_events(daemon, session)
    prompts = [e["payload"]["prompt"] for e in events if e["type"] == "turn.started"]
    assert prompts == [STORY]  # the follow-up went into turn 1
    steers = [e["payload"]["text"] for e in events if e["type"] == "steer.delivered"]
    assert steers == ["a follow-up question"]
    ends = [e["payload"]["reason"] for e in events if e["type"] == "turn.completed"]
    assert ends == ["completed"]
