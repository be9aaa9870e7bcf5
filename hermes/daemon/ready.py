"""The ready pipe: how ``hermes daemon start`` learns, without polling, that its daemon serves.

``start_background`` hands the daemon it starts the write end of a pipe and
names it in ``HERMES_READY_FD``. The daemon announces that it serves with one
line on its ``out`` stream (``hermes daemon: listening on ...``, printed once
the tree has started and the endpoint file is written); ``ReadyOut`` copies
that line into the pipe and closes it. The starter blocks on the read end
(``wait_ready``): a line means the daemon serves; end of file without one
means the daemon exited, or closed the pipe, first.
"""

from __future__ import annotations

import io
import os
import select
import time
from collections.abc import MutableMapping
from typing import TextIO

READY_FD = "HERMES_READY_FD"


def take_ready_fd(env: MutableMapping[str, str]) -> int | None:
    """The ready pipe ``env`` names, if any (taken out of ``env``: no child inherits it)."""
    text = env.pop(READY_FD, None)
    if not text:
        return None
    try:
        fd = int(text)
        os.set_inheritable(fd, False)
    except (ValueError, OSError):
        return None  # not a descriptor this process holds: nobody to tell
    return fd


class ReadyOut(io.StringIO):
    """The daemon's ``out``: writes through to ``stream``; its first whole line also
    goes to the ready pipe, which is then closed."""

    def __init__(self, stream: TextIO, fd: int) -> None:
        super().__init__()
        self._stream = stream
        self._fd: int | None = fd
        self._pending = ""

    def write(self, text: str) -> int:
        self._stream.write(text)
        if self._fd is not None:
            self._pending += text
            line, newline, _ = self._pending.partition("\n")
            if newline:
                self._signal(line + "\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        """Closes the pipe if no line was written (the starter sees end of file)."""
        self._close_fd()
        super().close()

    def _signal(self, line: str) -> None:
        try:
            assert self._fd is not None
            os.write(self._fd, line.encode(errors="replace"))
        except OSError:
            pass  # the starter is gone: nothing to tell
        finally:
            self._close_fd()

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def wait_ready(fd: int, timeout: float) -> str | None:
    """The daemon's ready line from the pipe's read end ``fd``; None at end of file.

    Raises ``TimeoutError`` after ``timeout`` seconds with neither.
    """
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no ready line within {timeout:g}s")
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
    return data.decode(errors="replace").partition("\n")[0]
