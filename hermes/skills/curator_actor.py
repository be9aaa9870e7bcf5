"""``Curator``: the daemon's scheduled curator, one supervised actor (seed #268).

It runs a pass (``curator.curate``, in a worker thread under the skills lock)
when the latest one is ``interval_hours`` old. The very first check, with no
pass recorded, only records the time and defers one interval. ``last_run``
lives in ``.curator.json``, so ``hermes curator run`` from the CLI pushes the
daemon's next pass out too, and a restart keeps the schedule. One actor timer
(``ctx.send_after``) waits for the next pass, never longer than ``REANCHOR``
trio seconds, after which the wall clock and the file are read again. A pass
that fails is logged and retried one interval later; it never crashes the
actor. ``CuratorStatus`` and ``RunCurator`` are its calls.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from actors import Actor, Call, Timer

from .curator import CuratorPolicy, CuratorReport, curate
from .curator_state import read_state, write_state
from .usage import skills_lock

log = logging.getLogger(__name__)

REANCHOR = 3600.0
"""Longest single wait (trio seconds) before the wall clock is read again."""


@attrs.frozen(slots=True)
class CuratorStatus(Call[dict[str, Any]]):
    """The curator's schedule and its latest report."""


@attrs.frozen(slots=True)
class RunCurator(Call[dict[str, Any]]):
    """Run a pass now (its report, plain data)."""


@attrs.frozen(slots=True)
class _Tick:
    pass


class Curator(Actor):
    """See the module docstring. ``clock`` is wall time (tests pass one on trio's clock)."""

    def __init__(
        self, user_dir: Path, policy: CuratorPolicy, clock: Callable[[], float] = time.time
    ) -> None:
        self.user_dir = user_dir
        self.policy = policy
        self.clock = clock
        self.timer: Timer | None = None
        self.passes = 0
        self.last_report: CuratorReport | None = None

    async def on_start(self) -> None:
        if self.policy.enabled:
            await self._check()

    async def receive(self, message: object) -> object:
        match message:
            case _Tick():
                self.timer = None
                await self._check()
            case RunCurator():
                report = await self._pass()
                self._arm(self.clock())
                return report.plain() if report is not None else {"error": "the pass failed"}
            case CuratorStatus():
                last = await trio.to_thread.run_sync(self._last_run)
                return {
                    "enabled": self.policy.enabled,
                    "last_run": last,
                    "next_run": None if last is None else last + self.policy.interval,
                    "passes": self.passes,
                    "last_report": None if self.last_report is None else self.last_report.plain(),
                }
        return None

    def _last_run(self) -> float | None:
        value = read_state(self.user_dir).get("last_run")
        return float(value) if isinstance(value, int | float) else None

    def _first_check(self, now: float) -> float:
        """No pass yet: record now, so the first pass is one interval away (seed #268)."""
        with skills_lock(self.user_dir):
            state = read_state(self.user_dir)
            if not isinstance(state.get("last_run"), int | float):
                state["last_run"] = now
                write_state(self.user_dir, state)
            return float(state["last_run"])

    async def _check(self) -> None:
        last = await trio.to_thread.run_sync(self._last_run)
        if last is None:
            last = await trio.to_thread.run_sync(self._first_check, self.clock())
        elif self.clock() >= last + self.policy.interval:
            await self._pass()
            last = self.clock()
        self._arm(last)

    async def _pass(self) -> CuratorReport | None:
        try:
            report = await trio.to_thread.run_sync(curate, self.user_dir, self.policy, self.clock())
        except Exception:  # a pass that fails is retried next interval, never a crash
            log.exception("curator pass failed")
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._note_failure, self.clock())
            return None
        self.passes += 1
        self.last_report = report
        return report

    def _note_failure(self, now: float) -> None:
        try:
            with skills_lock(self.user_dir):
                state = read_state(self.user_dir)
                state["last_run"] = now
                write_state(self.user_dir, state)
        except OSError as exc:
            log.warning("curator: the failed pass is not recorded: %s", exc)

    def _arm(self, last: float) -> None:
        """One timer: for the pass due one interval after ``last`` (at most ``REANCHOR``)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.policy.enabled:
            return
        delay = min(REANCHOR, max(0.0, last + self.policy.interval - self.clock()))
        self.timer = self.ctx.send_after(delay, _Tick())
