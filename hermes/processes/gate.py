"""``NoticeGate``: the registry-wide breaker in front of the session, and its summary.

Pure like ``limits.py`` (``now`` comes from the caller). ``offer`` returns
the notices to deliver now: the notice itself, nothing (held), or the
"paused" notice when this one tripped the breaker. While the breaker is open,
held notices are remembered as short summary lines (a bounded number of them,
plus a count), and ``release`` turns them into one summary notice. Nothing is
lost silently: a held completion is listed with its exit status.
"""

from __future__ import annotations

from collections import Counter

from .config import ProcessConfig
from .limits import Admission, Breaker
from .notices import NoticeKind, ProcessNotice, summary_notice, tripped_notice

MAX_SUMMARY_LINES = 64
"""Completions listed one by one in a summary; the rest are counted."""


class NoticeGate:
    """Breaker + summary for one registry."""

    def __init__(self, session_id: str, config: ProcessConfig) -> None:
        self.session_id = session_id
        self.config = config
        self.breaker = Breaker(config.breaker_limit, config.breaker_period, config.breaker_cooldown)
        self._patterns: Counter[str] = Counter()
        self._commands: dict[str, str] = {}
        self._completions: list[str] = []
        self._more_completions = 0

    @property
    def release_at(self) -> float | None:
        """When the open breaker may be released (None when closed)."""
        return self.breaker.open_until

    def offer(self, notice: ProcessNotice, now: float) -> list[ProcessNotice]:
        """The notices to deliver now for ``notice`` offered at ``now``."""
        out: list[ProcessNotice] = []
        if self.breaker.open_until is not None and now >= self.breaker.open_until:
            summary = self.release(now)
            if summary is not None:
                out.append(summary)
        admission = self.breaker.admit(now)
        if admission is Admission.PASS:
            out.append(notice)
            return out
        self._hold(notice)
        if admission is Admission.TRIP:
            c = self.config
            out.append(
                tripped_notice(
                    self.session_id, c.breaker_limit, c.breaker_period, c.breaker_cooldown
                )
            )
        return out

    def _hold(self, notice: ProcessNotice) -> None:
        pid = notice.process_id or "?"
        if notice.command is not None:
            self._commands[pid] = notice.command
        if notice.kind is NoticeKind.PATTERN:
            self._patterns[pid] += 1
        elif len(self._completions) < MAX_SUMMARY_LINES:
            code = f" with code {notice.exit_code}" if notice.exit_code is not None else ""
            self._completions.append(f"{pid} (`{notice.command}`) {notice.status}{code}")
        else:
            self._more_completions += 1

    def release(self, now: float) -> ProcessNotice | None:
        """Close the breaker if its cooldown is over, with the summary of what it held."""
        held = self.breaker.release(now)
        if held is None:
            return None
        lines = [
            f"{pid} (`{self._commands.get(pid, '?')}`): {n} pattern notice(s) held"
            for pid, n in self._patterns.items()
        ]
        lines.extend(self._completions)
        if self._more_completions:
            lines.append(f"{self._more_completions} more processes finished")
        self._patterns.clear()
        self._completions.clear()
        self._more_completions = 0
        return summary_notice(self.session_id, held, lines)
