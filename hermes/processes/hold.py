"""``NoticeHold``: process notices wait while the emergency stop is on (seed #218).

A notice becomes input that starts a turn of its session, and no unattended
turn starts while the stop's file exists (``hermes pause``; whatever it
holds, and across restarts: the file is the state). The processes themselves
run on (running work is not stopped). The registry offers each notice here
after its breaker; while the file exists it is kept, in order (at most
``MAX_HELD``, later ones counted), and the registry looks again every
``HOLD_RECHECK`` seconds; once the file is gone the held notices go out in
order, plus one line counting any that were dropped. A ``HANDED_OVER``
notice is news for surfaces, not input: it is never held. The held notices are
kept in the data directory too (``held_file.py``): a registry that starts
again for the same session, after a daemon restart, holds them as before.
"""

from __future__ import annotations

from pathlib import Path

from .held_file import HeldFile
from .notices import NoticeKind, ProcessNotice, summary_notice

HOLD_RECHECK = 5.0
"""Seconds between two looks at the stop's file while notices are held."""
MAX_HELD = 64
"""Notices kept during a stop; the rest are counted in one line at the end."""


class NoticeHold:
    """One registry's notices held during an emergency stop."""

    def __init__(self, session_id: str, estop: Path | None) -> None:
        self.session_id = session_id
        self.estop = estop
        self.file = HeldFile(estop, session_id) if estop is not None else None
        self._held: list[ProcessNotice] = []
        self._dropped = 0
        if self.file is not None:  # what an earlier registry of the session held
            self._held, self._dropped = self.file.load()

    @property
    def holding(self) -> bool:
        return bool(self._held) or self._dropped > 0

    def stopped(self) -> bool:
        return self.estop is not None and self.estop.exists()

    def offer(self, notice: ProcessNotice) -> list[ProcessNotice]:
        """What to deliver now: nothing while stopped, else what was held and ``notice``."""
        if notice.kind is NoticeKind.HANDED_OVER:
            return [notice]
        if self.stopped():
            if len(self._held) < MAX_HELD:
                self._held.append(notice)
            else:
                self._dropped += 1
            if self.file is not None:
                self.file.save(self._held, self._dropped)
            return []
        return [*self.release(), notice]

    def release(self) -> list[ProcessNotice]:
        """The held notices, in order, once the stop is cleared (else nothing)."""
        if not self.holding or self.stopped():
            return []
        out, self._held = self._held, []
        if self.file is not None:
            self.file.clear()
        if self._dropped:
            line = f"{self._dropped} more notices arrived during the emergency stop (not shown)"
            out.append(summary_notice(self.session_id, self._dropped, [line]))
            self._dropped = 0
        return out
