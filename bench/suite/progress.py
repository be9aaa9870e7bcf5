"""Plain-text progress bars on stderr (only when stderr is a terminal and not ``--json``)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
_REDRAW = 0.1


class Bar:
    """One bar: ``label [#####-----] done/total unit  elapsed``; ``advance`` redraws it."""

    def __init__(self, out: TextIO | None, label: str, total: int, unit: str) -> None:
        self.out = out
        self.label = label
        self.total = max(total, 1)
        self.unit = unit
        self.done = 0
        self.note = ""
        self.started = time.monotonic()
        self._drawn = 0.0
        self._draw(force=True)

    def advance(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if note is not None:
            self.note = note
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if self.out is None:
            return
        now = time.monotonic()
        if not force and now - self._drawn < _REDRAW:
            return
        self._drawn = now
        filled = min(WIDTH, WIDTH * self.done // self.total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        text = (
            f"\r{self.label:<12} [{bar}] {self.done}/{self.total} {self.unit}"
            f"  {now - self.started:5.1f}s {self.note}"
        )
        self.out.write(text[:200].ljust(80) if len(text) < 80 else text[:200])
        self.out.flush()

    def close(self) -> None:
        if self.out is not None:
            self._draw(force=True)
            self.out.write("\n")
            self.out.flush()


class Progress:
    """Makes bars; all of them are silent when disabled."""

    def __init__(self, enabled: bool, out: TextIO | None = None) -> None:
        stream = out or sys.stderr
        self.out: TextIO | None = stream if enabled and stream.isatty() else None

    def bar(self, label: str, total: int, unit: str) -> Bar:
        return Bar(self.out, label, total, unit)

    def say(self, text: str) -> None:
        if self.out is not None:
            self.out.write(text + "\n")
            self.out.flush()
