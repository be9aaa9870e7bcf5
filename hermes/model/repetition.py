"""The runaway-repetition detector (Hermes' ``repetition_guard``, seed #61).

Text is *repetition-dominated* when units repeated at least ``MIN_REPEATS``
times cover at least half of it: whole lines repeated exactly, or windows of
``WINDOW`` characters (a longer repeated unit repeats its windows too). The
stricter *runaway* test also needs at most half of its non-empty lines to be
distinct (a text of a single line passes that part). Only text of
``MIN_CHARS`` or more is judged: a short answer that repeats is not a loop.
``RunawayWatch`` applies the runaway test to a growing stream, at most once
per ``STEP`` new characters. Text that compresses poorly (``GATE``) is passed
without the exact test, which is the costly part.
"""

from __future__ import annotations

import zlib
from collections import Counter

MIN_CHARS = 16_000
"""Text shorter than this is never judged a loop."""
MIN_REPEATS = 5
WINDOW = 60
STEP = 2_000
"""A watched stream is judged again after this many new characters."""
GATE = 0.33
"""Text that deflate (level 1) cannot shrink below this share of its size is not judged
further: half of it repeated five times over would compress far better (prose compresses
to 0.4-0.6, code to about 0.35, a loop to 0.01). The exact test costs tens of
milliseconds on 32,000 characters; this one well under one."""


def _line_coverage(lines: list[str]) -> int:
    """Characters covered by lines repeated at least ``MIN_REPEATS`` times."""
    counts = Counter(line for line in lines if line.strip())
    return sum((len(line) + 1) * n for line, n in counts.items() if n >= MIN_REPEATS)


def _window_coverage(text: str) -> int:
    """Characters covered by ``WINDOW``-character windows seen at least ``MIN_REPEATS``
    times without overlapping themselves."""
    starts: dict[str, list[int]] = {}
    for i in range(len(text) - WINDOW + 1):
        starts.setdefault(text[i : i + WINDOW], []).append(i)
    marks = [0] * (len(text) + 1)
    for positions in starts.values():
        if len(positions) < MIN_REPEATS:
            continue
        kept, last = [], -WINDOW
        for p in positions:
            if p >= last + WINDOW:
                kept.append(p)
                last = p
        if len(kept) < MIN_REPEATS:
            continue
        for p in positions:
            marks[p] += 1
            marks[p + WINDOW] -= 1
    covered, depth = 0, 0
    for i in range(len(text)):
        depth += marks[i]
        if depth > 0:
            covered += 1
    return covered


def is_repetition_dominated(text: str, *, min_chars: int = MIN_CHARS) -> bool:
    """Whether repeated lines or windows cover at least half of ``text``."""
    if len(text) < min_chars:
        return False
    data = text.encode("utf-8", "surrogatepass")
    if len(zlib.compress(data, 1)) > GATE * len(data):
        return False
    half = len(text) / 2
    if _line_coverage(text.splitlines()) >= half:
        return True
    return _window_coverage(text) >= half


def is_runaway(text: str, *, min_chars: int = MIN_CHARS) -> bool:
    """The stricter test: repetition-dominated and at most half of its lines distinct."""
    if len(text) < min_chars:
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and len(set(lines)) > len(lines) / 2:
        return False
    return is_repetition_dominated(text, min_chars=min_chars)


class RunawayWatch:
    """Feeds of a growing stream; ``feed`` says True once the stream is a runaway."""

    def __init__(self, min_chars: int = MIN_CHARS, step: int = STEP) -> None:
        self.min_chars = min_chars
        self.step = step
        self._parts: list[str] = []
        self._size = 0
        self._checked = 0

    def feed(self, text: str) -> bool:
        self._parts.append(text)
        self._size += len(text)
        if self._size < self.min_chars or self._size - self._checked < self.step:
            return False
        self._checked = self._size
        # Only the tail is kept and judged: a loop is what the stream does now, and the
        # cost of a check stays flat however long the reply grows.
        tail = "".join(self._parts)[-2 * self.min_chars :]
        self._parts = [tail]
        return is_runaway(tail, min_chars=self.min_chars)

    def reset(self) -> None:
        self._parts, self._size, self._checked = [], 0, 0
