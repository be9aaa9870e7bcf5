"""Late checker verdicts (seed #239): a hook point a checking tool can fill.

A tool that starts a check it cannot finish within its own call (a language
server, a linter, a type checker after ``write_file``) takes a ticket from the
session's ``LateChecks`` (a service in its ``ToolContext``: ``ctx.service(
LateChecks)``), returns at once, and later ``deliver``s the problems it found
(an empty list: none). At the turn's final answer the stop gate waits up to
``late_wait`` seconds (5) for this session's tickets still open, then takes
every delivered verdict with problems: the answer is kept as an interim
message and the model is told to fix them first, at most 3 times per turn.
Verdicts left undelivered after the wait are dropped when they come. The
built-in filler, the configured checker commands, is ``checkers.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import trio

MAX_PENDING = 64
"""Open tickets a session holds; a check past it is refused (``LateChecksFull``)."""


class LateChecksFull(Exception):
    pass


@attrs.frozen(slots=True)
class Verdict:
    checker: str
    """Who checked (``ruff``, ``pyright``...)."""
    subject: str
    """What was checked (a path)."""
    problems: tuple[str, ...]


class Ticket:
    """One check under way; ``deliver`` its problems once (later calls are ignored)."""

    def __init__(self, box: LateChecks, checker: str, subject: str) -> None:
        self._box = box
        self.checker = checker
        self.subject = subject
        self.done = False

    def deliver(self, problems: Sequence[str]) -> None:
        if self.done:
            return
        self.done = True
        self._box._delivered(self, Verdict(self.checker, self.subject, tuple(problems)))


class LateChecks:
    """A session's open checks and the verdicts delivered since the last final answer."""

    def __init__(self) -> None:
        self._open: set[Ticket] = set()
        self._verdicts: list[Verdict] = []
        self._changed = trio.Event()

    def expect(self, checker: str, subject: str) -> Ticket:
        if len(self._open) >= MAX_PENDING:
            raise LateChecksFull(f"{MAX_PENDING} late checks are already open in this session")
        ticket = Ticket(self, checker, subject)
        self._open.add(ticket)
        return ticket

    @property
    def pending(self) -> int:
        return len(self._open)

    def _delivered(self, ticket: Ticket, verdict: Verdict) -> None:
        if ticket not in self._open:
            return  # given up on at a final answer: too late
        self._open.discard(ticket)
        self._verdicts.append(verdict)
        self._changed.set()
        self._changed = trio.Event()

    async def collect(self, wait: float) -> list[Verdict]:
        """At a final answer: wait (up to ``wait`` s) for open checks, then take the verdicts
        with problems; checks still open are given up on."""
        with trio.move_on_after(wait):
            while self._open:
                await self._changed.wait()
        self._open.clear()
        found = [v for v in self._verdicts if v.problems]
        self._verdicts.clear()
        return found


def nudge(verdicts: Sequence[Verdict]) -> str:
    lines = [f"- {v.checker} on {v.subject}: {p}" for v in verdicts for p in v.problems[:20]]
    return (
        "[System: checks that finished after your edits found problems. Fix them before "
        "you finish, then say what you changed:\n" + "\n".join(lines[:60]) + "]"
    )
