"""The input side of ``hermes chat``: a prompt_toolkit line editor run beside trio.

``PromptInput.read`` runs one ``PromptSession.prompt`` in a worker thread (its own
asyncio loop there), so the trio loop keeps streaming events meanwhile; output goes
through a ``StdoutProxy`` that prints above the prompt. Keys that act on the session
(Ctrl+C during a turn, one-key approval answers) are handed to trio through
``post``. Cancelling ``read`` exits the prompt and waits for the thread to let go of
the terminal. ``LineInput`` reads plain lines when stdin is not a terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import trio

from .chat_commands import COMMANDS
from .chat_state import ChatState

EXIT = object()
"""What ``read`` returns when the user leaves (Ctrl+D, Ctrl+C twice at an empty line)."""

APPROVAL_KEYS = {"o": "once", "s": "session", "a": "always", "d": "deny"}


def raw_terminal() -> Any:
    """A context that keeps the terminal in prompt_toolkit's raw mode between prompts
    too, so keys typed while no prompt runs (Enter, Ctrl+C, Ctrl+D) reach the next
    prompt as keys instead of being cooked by the line discipline (which would turn
    Enter into Ctrl+J and Ctrl+C into SIGINT). Output processing is left alone."""
    from prompt_toolkit.input.vt100 import raw_mode

    return raw_mode(sys.stdin.fileno())


def _raw_input() -> Any:
    """stdin as prompt_toolkit input that stays raw while output is printed above the
    prompt (``run_in_terminal`` would switch to cooked mode for that, and a key typed
    meanwhile would be cooked: Ctrl+D lost, Ctrl+C a signal)."""
    from prompt_toolkit.input.vt100 import Vt100Input

    class RawInput(Vt100Input):
        def cooked_mode(self) -> Any:
            return contextlib.nullcontext()

    return RawInput(sys.stdin)


def history_path(data_dir: Path) -> Path:
    """The per-user prompt history file (created 0600 in a 0700 directory)."""
    path = data_dir / "chat_history"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return path


class LineInput:
    """Lines from a stdin that is not a terminal (pipes, scripts)."""

    async def read(self, default: str = "") -> str | object:
        line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        return line.rstrip("\n") if line else EXIT

    def close(self) -> None:
        """Nothing to release."""


def _completer(sessions: Callable[[], list[tuple[str, str]]]) -> Any:
    from prompt_toolkit.completion import Completer, Completion, PathCompleter
    from prompt_toolkit.document import Document

    paths = PathCompleter(expanduser=True)

    class ChatCompleter(Completer):
        """Slash commands, session ids after ``/resume``, file paths after ``@``."""

        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
            text = document.text_before_cursor
            if text.startswith("/") and " " not in text:
                for name, line in COMMANDS.items():
                    if name.startswith(text):
                        yield Completion(name, -len(text), display_meta=line)
                return
            if text.startswith("/resume ") and text.count(" ") == 1:
                word = text.partition(" ")[2]
                for sid, title in sessions():
                    if sid.startswith(word):
                        yield Completion(sid, -len(word), display_meta=title[:40])
                return
            word = document.get_word_before_cursor(WORD=True)
            if word.startswith("@"):
                inner = Document(word[1:], len(word) - 1)
                yield from paths.get_completions(inner, complete_event)

    return ChatCompleter()


class PromptInput:
    """A prompt_toolkit prompt with history, completion, multi-line input and live status."""

    def __init__(
        self,
        state: ChatState,
        history_file: Path,
        post: Callable[[tuple[Any, ...]], None],
        sessions: Callable[[], list[tuple[str, str]]],
    ) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.patch_stdout import StdoutProxy

        self.state = state
        self.post = post
        self.flash = ("", 0.0)
        self._idle_ctrl_c = 0.0
        self._answered: set[int] = set()
        self._stopping = False
        self.stdout = StdoutProxy(raw=True, sleep_between_writes=0.05)
        """Where output goes so it appears above the prompt."""
        self.session: Any = PromptSession(
            input=_raw_input(),
            history=FileHistory(str(history_file)),
            completer=_completer(sessions),
            complete_while_typing=True,
            key_bindings=self._bindings(),
            bottom_toolbar=self._toolbar,
            reserve_space_for_menu=6,
            enable_suspend=True,
        )

    def _pending_approval(self) -> dict[str, Any] | None:
        for request in self.state.approvals:
            if request["request_id"] not in self._answered:
                return request
        return None

    def _bindings(self) -> Any:
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add("enter")
        @kb.add("c-j")
        def _enter(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.document.text_before_cursor.endswith("\\"):
                buffer.delete_before_cursor(1)  # a line ending in \ goes on
                buffer.insert_text("\n")
                return
            buffer.validate_and_handle()

        @kb.add("escape")
        def _clear(event: Any) -> None:
            event.current_buffer.reset()

        @kb.add("c-c")
        def _ctrl_c(event: Any) -> None:
            buffer = event.current_buffer
            if self.state.turn is not None or self.state.pressed_lately():
                # counted at the press, sent by trio
                self.post(("ctrl-c", self.state.ctrl_c()))
                return
            if buffer.text:
                buffer.reset()
                return
            now = time.monotonic()
            if now - self._idle_ctrl_c < 2.0:
                event.app.exit(result=EXIT)
                return
            self._idle_ctrl_c = now
            self.say("Ctrl+C again to leave (or Ctrl+D)", 2.0)

        approval = Condition(
            lambda: self._pending_approval() is not None and not self.session.default_buffer.text
        )
        for key, choice in APPROVAL_KEYS.items():

            @kb.add(key, filter=approval)
            def _answer(event: Any, choice: str = choice) -> None:
                request = self._pending_approval()
                if request is not None:
                    self._answered.add(request["request_id"])
                    self.post(("approve", request["request_id"], choice))

        return kb

    def say(self, text: str, seconds: float = 3.0) -> None:
        """Show ``text`` in the toolbar for a while."""
        self.flash = (text, time.monotonic() + seconds)

    def invalidate(self) -> None:
        """Redraw the prompt and its toolbar soon (safe from any thread)."""
        self.session.app.invalidate()

    @property
    def animated(self) -> bool:
        """Whether the toolbar changes by itself (a spinner runs, a notice times out)."""
        return self.state.turn is not None or time.monotonic() < self.flash[1] + 0.5

    def _message(self) -> Any:
        from prompt_toolkit.formatted_text import FormattedText

        parts = [("class:prompt.session", f"{self.state.session[-8:]}")]
        if self.state.turn is not None:
            parts.append(("fg:ansiyellow", f" ● turn {self.state.turn}"))
        if self._pending_approval() is not None and not self.session.default_buffer.text:
            parts.append(("fg:ansiyellow bold", " approve? o/s/a/d"))
        parts.append(("bold", " > "))
        return FormattedText(parts)

    def _toolbar(self) -> Any:
        from prompt_toolkit.formatted_text import FormattedText

        flash, until = self.flash
        lines = [self.state.live_line() or "idle", self.state.status_line()]
        if flash and time.monotonic() < until:
            lines.append(flash)
        if self._pending_approval() is not None and self.session.default_buffer.text:
            lines.append("an approval waits: Esc clears the line, then o/s/a/d answers")
        text = " " + "  |  ".join(line for line in lines if line)
        return FormattedText([("", "\n".join([text, *self.state.subagent_lines()]))])

    def _prompt(self, default: str, done: threading.Event) -> str | object:
        try:
            if self._stopping:
                return EXIT
            text: str = self.session.prompt(
                self._message, default=default, pre_run=self._exit_if_stopping
            )
            return text
        except (EOFError, KeyboardInterrupt):
            return EXIT
        finally:
            done.set()

    def _exit_if_stopping(self) -> None:
        future = self.session.app.future
        if self._stopping and future is not None and not future.done():
            self.session.app.exit(result=EXIT)

    async def read(self, default: str = "") -> str | object:
        """The next line typed (or ``EXIT``); cancelling it exits the prompt."""
        done = threading.Event()
        try:
            return await trio.to_thread.run_sync(
                self._prompt, default, done, abandon_on_cancel=True
            )
        except trio.Cancelled:
            self.stop()
            with trio.CancelScope(shield=True), trio.move_on_after(3):
                await trio.to_thread.run_sync(done.wait)
            raise

    def stop(self) -> None:
        """Make a running (or starting) prompt return ``EXIT``; safe from any thread."""
        self._stopping = True
        app = self.session.app
        loop = getattr(app, "loop", None)
        if app.is_running and loop is not None:
            loop.call_soon_threadsafe(self._exit_if_stopping)

    def close(self) -> None:
        """Flush what is left for the terminal."""
        self.stdout.close()
