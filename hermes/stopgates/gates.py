"""``StopGates``: what a turn's final answer passes through before the turn may end.

In order: late checker verdicts (``late.py``; the configured checker commands
run first, ``checkers.py``), the stall guard (``stall.py``),
verify-on-stop (``verify.py``). The first that objects answers with the nudge
the turn sends as its next user message (the answer stays in the transcript as
an interim reply); each has its own budget per turn, after which it lets the
answer through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from hermes.model import Message

from . import late, stall, verify
from .checkers import Checkers
from .settings import LATE_NUDGES, STALL_NUDGES, VERIFY_NUDGES, StopSettings


@attrs.frozen(slots=True)
class StopNudged:
    """A stop gate sent the turn's final answer back (an event: ``stop.nudged``)."""

    turn: int
    gate: str
    """``late_checks``, ``stall_guard`` or ``verify_on_stop``."""
    text: str


@attrs.frozen(slots=True)
class Nudge:
    gate: str
    text: str


class StopGates:
    """One turn's stop gates and what each has spent."""

    def __init__(
        self,
        settings: StopSettings,
        checks: late.LateChecks | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.checks = checks
        self.checkers: Checkers | None = None
        """The configured checker commands (``late_checks``), given a working directory."""
        if settings.late_checks and checks is not None and cwd is not None:
            timeout = settings.late_check_timeout
            self.checkers = Checkers(settings.late_checks, cwd, env or {}, timeout)
        self.spent = {"late_checks": 0, "stall_guard": 0, "verify_on_stop": 0}

    async def check(
        self, answer: str, turn_messages: Sequence[Message], tools_offered: bool
    ) -> Nudge | None:
        """The nudge for ``answer``, or None: the turn may end."""
        spent = self.spent
        if self.checks is not None and spent["late_checks"] < LATE_NUDGES:
            if self.checkers is not None:
                await self.checkers.run(turn_messages, self.checks)
            found = await self.checks.collect(self.settings.late_wait)
            if found:
                return self._spend("late_checks", late.nudge(found))
        guard = self.settings.stall_guard and tools_offered
        if guard and spent["stall_guard"] < STALL_NUDGES and stall.announces_next_step(answer):
            return self._spend("stall_guard", stall.NUDGE)
        if self.settings.verify_on_stop and spent["verify_on_stop"] < VERIFY_NUDGES:
            paths = verify.unverified_edits(turn_messages)
            if paths:
                return self._spend("verify_on_stop", verify.nudge(paths))
        return None

    def _spend(self, gate: str, text: str) -> Nudge:
        self.spent[gate] += 1
        return Nudge(gate, text)
