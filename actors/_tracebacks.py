"""A caught crash's traceback, captured without its frames and formatted on first use.

A crash's traceback holds its frames, the frames hold the actor and its cell,
and the cell holds the exit reason that holds the exception: a cycle only the
cyclic collector frees. ``CapturedTraceback`` keeps, for the exception and
every exception chained to it (cause, context, group members), only each
frame's code object, instruction offset and line number, then detaches the
tracebacks. Formatting (source lines, caret anchors: ~100 us for a three-frame
crash, most of a restart) waits until someone reads the text, which is the
same text ``traceback.format_exception`` gives for the original exception.
"""

from __future__ import annotations

import itertools
import linecache
import sys
import traceback
from types import CodeType, TracebackType

_Entry = tuple[CodeType, int, int]
"""One traceback entry: the frame's code, its last instruction offset, its line."""


class CapturedTraceback:
    """The traceback of ``exc`` and of its chain, held without frames (see the module)."""

    __slots__ = ("_entries", "_exc")

    def __init__(self, exc: BaseException) -> None:
        """Capture, then detach, the tracebacks of ``exc``, its chain and group members."""
        self._exc = exc
        self._entries: dict[int, tuple[_Entry, ...]] = {}
        """Entries per exception, by ``id`` (``exc`` keeps its whole chain alive)."""
        limit = getattr(sys, "tracebacklimit", None)
        if limit is not None and limit < 0:
            limit = 0  # as the traceback module reads it
        stack: list[BaseException] = [exc]
        while stack:
            current = stack.pop()
            if id(current) in self._entries:
                continue
            self._entries[id(current)] = _capture(current.__traceback__, limit)
            current.__traceback__ = None
            if current.__cause__ is not None:
                stack.append(current.__cause__)
            if current.__context__ is not None:
                stack.append(current.__context__)
            if isinstance(current, BaseExceptionGroup):
                stack.extend(current.exceptions)

    def format(self) -> str:
        """The text ``traceback.format_exception`` would have given at capture time."""
        exc = self._exc
        root = traceback.TracebackException(type(exc), exc, None, compact=True)
        todo: list[tuple[traceback.TracebackException, BaseException]] = [(root, exc)]
        while todo:
            node, current = todo.pop()
            node.stack = _summary(self._entries.get(id(current), ()))
            if node.__cause__ is not None and current.__cause__ is not None:
                todo.append((node.__cause__, current.__cause__))
            if node.__context__ is not None and current.__context__ is not None:
                todo.append((node.__context__, current.__context__))
            if node.exceptions and isinstance(current, BaseExceptionGroup):
                todo.extend(zip(node.exceptions, current.exceptions, strict=False))
        return "".join(root.format())


def _capture(tb: TracebackType | None, limit: int | None) -> tuple[_Entry, ...]:
    entries: list[_Entry] = []
    while tb is not None and (limit is None or len(entries) < limit):
        frame = tb.tb_frame
        code = frame.f_code
        # Registers a loader-backed source (zip imports) while the globals are here.
        linecache.lazycache(code.co_filename, frame.f_globals)
        entries.append((code, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    return tuple(entries)


def _summary(entries: tuple[_Entry, ...]) -> traceback.StackSummary:
    """The ``StackSummary`` the traceback module builds from a live traceback."""
    frames = []
    for code, lasti, lineno in entries:
        start, end, col, end_col = _position(code, lasti)
        frames.append(
            traceback.FrameSummary(
                code.co_filename,
                start if start is not None else lineno,
                code.co_name,
                lookup_line=False,
                end_lineno=end,
                colno=col,
                end_colno=end_col,
            )
        )
    for filename in {frame.filename for frame in frames}:
        linecache.checkcache(filename)
    return traceback.StackSummary.from_list(frames)


def _position(code: CodeType, lasti: int) -> tuple[int | None, int | None, int | None, int | None]:
    """The source span of the instruction at ``lasti`` (as ``traceback`` computes it)."""
    if lasti < 0:
        return (None, None, None, None)
    return next(itertools.islice(code.co_positions(), lasti // 2, None))
