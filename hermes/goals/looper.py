"""``Looper``: a session's ``/loop`` as it runs (see ``loop.py`` for the rules).

A wakeup is machine input: it starts a turn when the session is idle, else
waits its turn; the turn that took it is the one judged. The next wakeup is
armed only once that turn was judged, so wakeups never pile up. While a goal
is active its turns come first: a due wakeup is put off by one interval.
Timers are trio time (``ctx.send_after``), so the autojump clock drives them.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors import Down, Timer

from .commands import LoopVerb, SetLoop
from .evaluate import Job, Outcome
from .events import LoopUpdated
from .host import ESTOP_RECHECK, GoalHost, Slot
from .judge import Verdict
from .loop import SELF_PACED_FLOOR, Loop, format_interval, signals_complete
from .record import Goal, GoalError

JUDGED = ("completed", "max_iterations")


@attrs.frozen(slots=True)
class LoopTick:
    """A wakeup is due (a timer message to the session)."""

    generation: int


class Looper:
    def __init__(self, host: GoalHost, goal_active: Callable[[], bool]) -> None:
        self.host = host
        self.goal_active = goal_active
        self.loop: Loop | None = None
        self._slot = Slot(host, "loop-judge")
        self._timer: Timer | None = None
        self._generation = 0
        self._in_flight = False
        """A wakeup was sent and its turn not yet judged."""

    async def handle(self, command: SetLoop | LoopVerb) -> tuple[str, int | None]:
        """Apply a loop command: what to tell the person, the turn it started."""
        if isinstance(command, SetLoop):
            return await self._set(command)
        loop = self.loop
        if command.verb == "status":
            return (loop.status_line() if loop is not None else "no loop set"), None
        if loop is None or loop.status == "done":
            raise GoalError(f"/loop {command.verb}: there is no loop (start one with /loop ...)")
        if command.verb == "stop":
            await self.stop()
            self.loop = None
            self._publish("stopped", "loop stopped", loop)
            return "loop stopped", None
        if command.verb == "pause":
            await self._disarm()
            self.loop = attrs.evolve(loop, status="paused", reason="paused by the person")
            return self._publish("paused", f"loop paused: {loop.spec.prompt}"), None
        if loop.status == "active":
            return f"the loop is already active: {loop.spec.prompt}", None
        self.loop = attrs.evolve(loop, status="active", reason=None, awaiting_turn=None)
        self._publish("active", f"loop resumed ({self.loop.cadence}): {loop.spec.prompt}")
        return "loop resumed", await self._fire()

    async def _set(self, command: SetLoop) -> tuple[str, int | None]:
        spec, settings = command.spec, self.host.settings
        await self.stop()
        replaced = self.loop is not None and self.loop.status != "done"
        interval = (
            SELF_PACED_FLOOR
            if spec.interval is None
            else max(spec.interval, settings.loop_min_interval)
        )
        loop = self.loop = Loop(spec=spec, interval=interval, max_ticks=settings.loop_max_ticks)
        lines = [f"loop set ({loop.cadence}): {spec.prompt}"]
        if replaced:
            lines.append("(it replaces the previous loop)")
        if spec.interval is not None and spec.interval < interval:
            lines.append(f"(the interval was raised to the minimum, {format_interval(interval)})")
        if spec.times:
            lines.append(f"runs {spec.times} time(s), then stops")
        if spec.until:
            lines.append(f"stops when: {spec.until}")
        lines.append(
            "the first wakeup runs now; the agent stops the loop by replying "
            "LOOP_COMPLETE; /loop status, /loop pause, /loop resume, /loop stop"
        )
        output = self._publish("active", "\n".join(lines))
        return output, await self._fire()

    async def turn_ended(self, turn: int, reason: str, text: str) -> None:
        loop = self.loop
        if loop is None or loop.awaiting_turn != turn:
            return
        loop = self.loop = attrs.evolve(loop, awaiting_turn=None)
        if loop.status != "active":
            self._in_flight = False
            return
        if reason not in JUDGED:
            self._in_flight = False
            self.loop = attrs.evolve(loop, status="paused", reason=f"wakeup turn {turn} {reason}")
            self._publish("paused", f"loop paused: wakeup turn {turn} {reason}; /loop resume")
        elif signals_complete(text):
            self._done("the agent replied LOOP_COMPLETE")
        elif loop.spec.until and text.strip():
            until = Goal(text=loop.spec.until)
            await self._slot.start(Job(kind="until", goal=until, reply=text, turn=turn))
        else:
            self._next(text)

    def owns(self, down: Down) -> bool:
        return self._slot.owns(down)

    async def restore(self, loop: Loop | None) -> None:
        """A loop a previous incarnation ran: an active one wakes again after its interval."""
        self.loop = loop
        if loop is not None and loop.status == "active":
            self._arm(loop.interval)

    async def on_down(self) -> None:
        job, outcome = await self._slot.outcome()
        loop = self.loop
        if loop is None or loop.status != "active":
            self._in_flight = False
            return
        judged = outcome.judged if isinstance(outcome, Outcome) else None
        if judged is not None and judged.verdict is Verdict.DONE:
            self._done(f"the stop condition is met: {judged.reason}")
        elif judged is not None and judged.verdict is Verdict.BLOCKED:
            self._in_flight = False
            why = f"the stop condition was judged unreachable: {judged.reason}"
            self.loop = attrs.evolve(loop, status="paused", reason=why)
            self._publish("paused", f"loop paused: {why}; /loop resume or /loop stop")
        else:  # continue, wait, or a judge that failed: loop on
            self._next(job.reply)

    async def tick(self, tick: LoopTick) -> None:
        if tick.generation != self._generation:
            return  # stopped, paused or replaced since it was armed
        self._timer = None
        await self._fire()

    async def stop(self) -> None:
        await self._disarm()
        await self._slot.stop()

    # -- helpers -------------------------------------------------------------------------

    async def _fire(self) -> int | None:
        """Send the next wakeup (or put it off while a goal is active)."""
        loop = self.loop
        if loop is None or loop.status != "active" or self._in_flight:
            return None
        if self.goal_active():
            self._arm(loop.interval)
            return None
        if self.host.stopped():
            self._arm(min(loop.interval, ESTOP_RECHECK))
            self._publish("active", "loop wakeup put off: the emergency stop is on")
            return None
        loop = self.loop = attrs.evolve(loop, ticks=loop.ticks + 1)
        self._in_flight = True
        started: list[int] = []

        async def delivered() -> None:
            number = self.host.turn_number()
            started.append(number)
            if self.loop is not None:
                self.loop = attrs.evolve(self.loop, awaiting_turn=number)

        self._publish("active", f"loop wakeup #{loop.ticks}")
        await self.host.send("loop", loop.wakeup(), delivered)
        return started[0] if started else None

    def _next(self, reply: str) -> None:
        self._in_flight = False
        loop = self.loop
        if loop is None:
            return
        if loop.spec.times and loop.ticks >= loop.spec.times:
            self._done(f"it ran the {loop.spec.times} time(s) asked for")
        elif loop.max_ticks and loop.ticks >= loop.max_ticks:
            why = f"wakeup budget spent ({loop.ticks}/{loop.max_ticks}, [loops] max_ticks)"
            self.loop = attrs.evolve(loop, status="paused", reason=why)
            self._publish("paused", f"loop paused: {why}; /loop resume or /loop stop")
        else:
            self.loop = loop.paced(reply)
            self._arm(self.loop.interval)

    def _done(self, why: str) -> None:
        self._in_flight = False
        loop = self.loop
        if loop is not None:
            self.loop = attrs.evolve(loop, status="done", reason=why)
            self._publish("done", f"loop finished after {loop.ticks} wakeup(s): {why}")

    def _arm(self, delay: float) -> None:
        self._generation += 1
        self._timer = self.host.ctx.send_after(delay, LoopTick(self._generation))

    async def _disarm(self) -> None:
        self._generation += 1
        self._in_flight = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _publish(self, status: str, message: str, loop: Loop | None = None) -> str:
        loop = loop or self.loop
        self.host.publish(
            LoopUpdated(
                status=status,
                message=message,
                ticks=loop.ticks if loop else 0,
                prompt=loop.spec.prompt if loop else "",
            )
        )
        return message
