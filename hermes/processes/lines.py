"""Lines out of a stream of text, for pattern watching, with a bound on line length.

Output arrives in chunks that split lines anywhere. ``LineSplitter`` keeps the
unfinished line between chunks, but never more than ``max_line`` characters of
it: a longer line is cut, its first ``max_line`` characters are matched and the
rest up to the next newline is skipped. Megabytes without a newline therefore
cost the same as short lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class LineSplitter:
    """Complete lines from chunks of text (``\\r\\n`` and ``\\n``)."""

    __slots__ = ("_carry", "_skipping", "max_line")

    def __init__(self, max_line: int = 4096) -> None:
        self.max_line = max_line
        self._carry = ""
        self._skipping = False
        """Inside a line that was already cut: drop text until the next newline."""

    def feed(self, text: str) -> list[str]:
        parts = text.split("\n")
        rest = parts.pop()  # the unfinished line (maybe empty)
        lines: list[str] = []
        for part in parts:
            if self._skipping:
                self._skipping = False
                continue
            line = self._carry + part if self._carry else part
            self._carry = ""
            lines.append(line[: self.max_line].removesuffix("\r"))
        if self._skipping:
            return lines
        carry = self._carry + rest if self._carry else rest
        if len(carry) > self.max_line:
            lines.append(carry[: self.max_line])
            self._carry = ""
            self._skipping = True
        else:
            self._carry = carry
        return lines

    def flush(self) -> list[str]:
        """The unfinished last line, if any (at the end of the stream)."""
        carry, self._carry, self._skipping = self._carry, "", False
        return [carry.removesuffix("\r")] if carry else []


def matching(lines: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """Lines containing any of ``patterns`` (plain substrings, as Hermes)."""
    return [line for line in lines if any(p in line for p in patterns)]


def clip(lines: Sequence[str], max_lines: int, max_chars: int) -> tuple[tuple[str, ...], int]:
    """At most ``max_lines`` lines and ``max_chars`` characters; returns (kept, left out)."""
    kept: list[str] = []
    used = 0
    for line in lines[:max_lines]:
        room = max_chars - used
        if room <= 0:
            break
        piece = line if len(line) <= room else line[: max(room - 1, 0)] + "…"
        kept.append(piece)
        used += len(piece) + 1
    return tuple(kept), len(lines) - len(kept)
