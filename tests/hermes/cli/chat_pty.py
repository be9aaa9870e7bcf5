"""``hermes chat`` in a real pseudo-terminal: send keys, wait for screen text.

A tiny expect: the child's output is read in a thread into one growing transcript;
``expect`` waits (on a condition variable, no fixed sleeps) until a pattern shows up
in the transcript with ANSI escapes removed, after the last match.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

ANSI = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[()][0-9A-Za-z]|\x1b[=>78cM]"
)
"""CSI, OSC and the short escapes prompt_toolkit and rich write."""
CPR = b"\x1b[6n"
"""A cursor position request: a terminal answers with ESC [ row ; col R."""


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text).replace("\r", "")


class PtyChat:
    """A ``hermes`` subprocess whose stdin, stdout and stderr are one pty."""

    def __init__(
        self, args: list[str], env: dict[str, str], cwd: Path, rows: int = 40, cols: int = 120
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        full = {**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "PYTHONFAULTHANDLER": "1"}
        self.rows = rows
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hermes", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=full,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.raw = b""
        self.mark = 0
        """Where the next ``expect`` starts looking (in the stripped transcript)."""
        self._cond = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                chunk = b""
            with self._cond:
                if not chunk:
                    self._eof = True
                    self._cond.notify_all()
                    return
                self.raw += chunk
                self._cond.notify_all()
            for _ in range(chunk.count(CPR)):  # answer prompt_toolkit's cursor queries
                self.send(f"\x1b[{self.rows - 12};1R")

    @property
    def text(self) -> str:
        """Everything shown so far, escapes removed."""
        return strip_ansi(self.raw.decode("utf-8", "replace"))

    def send(self, data: str | bytes) -> None:
        os.write(self.master, data.encode() if isinstance(data, str) else data)

    def expect(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Wait until ``pattern`` (a regex) appears after the previous match."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        with self._cond:
            while True:
                found = regex.search(self.text, self.mark)
                if found is not None:
                    self.mark = found.end()
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    tail = self.text[-3000:]
                    raise AssertionError(f"{pattern!r} not shown; the screen ended with:\n{tail}")
                self._cond.wait(left)

    def wait(self, timeout: float = 60.0) -> int:
        """The exit code; a child still running after ``timeout`` is aborted and its
        threads' stacks (``PYTHONFAULTHANDLER``) end the assertion's message."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGABRT)
            self.proc.wait(30)
            self._reader.join(10)
            raise AssertionError(f"still running after {timeout} s:\n{self.text[-6000:]}") from None
        self._reader.join(timeout)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._reader.join(10)
        os.close(self.master)
