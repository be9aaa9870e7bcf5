"""``GoalKeeper``: a session's standing goal and loop, owned by the session actor.

The session hands it every goal command (``handle``), every turn's end
(``turn_ended``), the ``Down`` of its evaluation tasks (``on_down``) and its
timers (``signal``). After a turn that counts toward the goal (one that
started after the goal was set) it starts an evaluation (``evaluate.py``):
gates first, then the judge. What comes back decides (seeds #221, #223, #233):

- a failing gate: its output is the next continuation; past its retries, pause;
- ``done``: the goal is done; ``blocked``: paused with the judge's reason;
- ``wait``: no continuation now; a timer, or the end of the background process
  or pid the judge named (``barrier.py``), wakes it, and so does new input;
- ``continue``: the next turn starts with the judge's note, as machine input,
  until the turn budget is spent (then paused, naming /goal resume and clear);
- too many unreadable replies or failed judge calls in a row: paused.

A turn a person interrupted or cancelled pauses the goal (they stopped it); a
failed turn pauses it with the reason. A continuation is sent only when the
session is idle: if a person's prompt came meanwhile, the end of that turn is
judged instead. ``/loop`` is driven by ``looper.Looper``.
"""

from __future__ import annotations

from typing import TypeVar

import attrs

from actors import Down

from . import persist
from .barrier import WAIT_LIMIT, Barrier, BarrierSlot
from .commands import (
    Command,
    GateCommand,
    GoalAnswer,
    GoalVerb,
    LoopVerb,
    SetGoal,
    SetLoop,
    SubgoalCommand,
)
from .criteria import apply_gate, apply_subgoal
from .evaluate import Job, Outcome
from .events import GoalUpdated
from .host import ESTOP_RECHECK, GoalHost, Slot
from .judge import Judged, Verdict
from .looper import Looper, LoopTick
from .prompts import GATE_FAILED, PAUSE_HINT, continuation
from .record import (
    MAX_PARSE_FAILURES,
    MAX_TRANSPORT_FAILURES,
    Contract,
    Goal,
    GoalError,
    GoalStatus,
    parse_contract,
)

T = TypeVar("T")

STOPPED = ("interrupted", "cancelled")
BROKEN = ("failed", "halted", "unknown_tools")
JUDGED = ("completed", "max_iterations")


@attrs.frozen(slots=True)
class GoalWake:
    """A judge's ``wait`` is over (a timer message to the session)."""

    generation: int


class GoalKeeper:
    """See the module docstring."""

    def __init__(self, host: GoalHost) -> None:
        self.host = host
        self.goal: Goal | None = None
        self.looper = Looper(host, self._goal_blocks_loop)
        self._slot = Slot(host, "goal-judge")
        self._barrier = BarrierSlot(host.ctx, host.processes)
        self._pending: Job | None = None
        """A goal evaluation that waits for the contract's draft to finish."""
        self._generation = 0
        self._wait_timer: object | None = None
        self._saved: str | None = None

    # -- persistence ---------------------------------------------------------------------

    async def restore(self, text: str | None) -> None:
        """Take the state a previous incarnation saved (``persist.load``: a goal comes back
        paused, a loop as it was, its next wakeup armed)."""
        self.goal, loop = persist.load(text)
        self._saved = text
        if self.goal is not None and self.goal.paused_reason == persist.RESTARTED:
            self._update(f"goal paused: {persist.RESTARTED}. {PAUSE_HINT}")
        await self.looper.restore(loop)
        await self._persist()

    async def _persist(self) -> None:
        """Save the state when it changed since the last save."""
        save = self.host.save
        state = persist.dump(self.goal, self.looper.loop)
        if save is not None and state != self._saved:
            await save(state)
            self._saved = state

    # -- the session's calls -------------------------------------------------------------

    async def handle(self, command: Command) -> GoalAnswer:
        """Apply one command (``GoalError`` names what was wrong)."""
        try:
            return await self._handle(command)
        finally:
            await self._persist()

    async def _handle(self, command: Command) -> GoalAnswer:
        match command:
            case SetGoal():
                return await self._set(command)
            case GoalVerb(verb="status"):
                line = self.goal.status_line() if self.goal else "no goal set"
                if self._barrier.barrier is not None:
                    line += f" (waiting on {self._barrier.barrier.describe()})"
                return self._answer(line)
            case GoalVerb(verb="pause"):
                goal = self._require("pause")
                await self._cancel_work()
                self.goal = goal.paused("paused by the person")
                return self._answer(self._update(f"goal paused: {goal.text}. {PAUSE_HINT}"))
            case GoalVerb(verb="resume"):
                return await self._resume()
            case GoalVerb(verb="clear"):
                had = self.goal
                await self._cancel_work()
                self.goal = None
                if had is None:
                    return self._answer("no goal to clear")
                self.host.publish(
                    GoalUpdated(status="cleared", message="goal cleared", goal=had.text)
                )
                return self._answer("goal cleared")
            case GateCommand():
                return self._gate(command)
            case SubgoalCommand():
                return self._subgoal(command)
            case SetLoop() | LoopVerb():
                output, turn = await self.looper.handle(command)
                return self._answer(output, turn)
        raise GoalError(f"unknown goal command {type(command).__name__}")

    async def turn_ended(self, turn: int, reason: str, text: str) -> None:
        """A turn ended (``reason``: its ``TurnEnd`` value): judge it when it counts."""
        await self._turn_ended(turn, reason, text)
        await self._persist()

    async def _turn_ended(self, turn: int, reason: str, text: str) -> None:
        await self.looper.turn_ended(turn, reason, text)
        goal = self.goal
        if goal is None or goal.status is not GoalStatus.ACTIVE or turn <= goal.since_turn:
            return
        await self._barrier.stop()  # new input woke a parked goal: this turn is judged
        if reason in STOPPED:
            await self._pause(f"turn {turn} was {reason}")
        elif reason in BROKEN:
            await self._pause(f"turn {turn} ended {reason}")
        elif reason in JUDGED and text.strip():
            job = Job(kind="goal", goal=goal, reply=text, turn=turn)
            if self._slot.job is not None and self._slot.job.kind == "draft":
                self._pending = job
            else:
                await self._slot.start(job)

    def owns(self, down: Down) -> bool:
        return self._slot.owns(down) or self.looper.owns(down) or self._barrier.owns(down)

    async def on_down(self, down: Down) -> None:
        await self._on_down(down)
        await self._persist()

    async def _on_down(self, down: Down) -> None:
        if self.looper.owns(down):
            await self.looper.on_down()
            return
        if self._barrier.owns(down):
            await self._lifted(await self._barrier.lifted())
            return
        job, outcome = await self._slot.outcome()
        if job.kind == "draft":
            await self._drafted(outcome)
        elif isinstance(outcome, Outcome):
            await self._evaluated(outcome)
        elif self.goal is not None and self.goal.status is GoalStatus.ACTIVE:
            goal = self.goal
            self.goal = attrs.evolve(goal, turns_used=goal.turns_used + 1)
            why = outcome.describe()
            await self._judged(
                Judged(Verdict.CONTINUE, f"the evaluation crashed: {why}", transport_failed=True)
            )

    async def signal(self, message: object) -> None:
        """A timer of the keeper's fired."""
        await self._signal(message)
        await self._persist()

    async def _signal(self, message: object) -> None:
        match message:
            case GoalWake(generation=generation) if generation == self._generation:
                self._wait_timer = None
                goal = self.goal
                if goal is not None and goal.status is GoalStatus.ACTIVE:
                    await self._continue(goal, goal.last_reason or "the goal goes on")
            case LoopTick():
                await self.looper.tick(message)

    async def stop(self) -> None:
        await self._cancel_work()
        await self.looper.stop()

    # -- commands ------------------------------------------------------------------------

    def _answer(self, output: str, turn: int | None = None) -> GoalAnswer:
        loop = self.looper.loop
        return GoalAnswer(
            output=output,
            goal=self.goal.view() if self.goal is not None else None,
            loop=loop.view() if loop is not None else None,
            turn=turn,
        )

    def _require(self, verb: str) -> Goal:
        if self.goal is None or self.goal.status is GoalStatus.DONE:
            raise GoalError(f"/goal {verb}: there is no goal (set one with /goal TEXT)")
        return self.goal

    async def _set(self, command: SetGoal) -> GoalAnswer:
        host = self.host
        text, contract = (command.text, None) if command.draft else parse_contract(command.text)
        previous = self.goal
        await self._cancel_work()
        self.goal = Goal(
            text=text or command.text,
            max_turns=command.max_turns or host.settings.max_turns,
            since_turn=host.turn_number(),
            drafting=command.draft,
            contract=contract if contract is not None else Contract(),
        )
        goal = self.goal
        if command.draft:
            await self._slot.start(Job(kind="draft", goal=goal))
        lines = [f"goal set ({goal.max_turns}-turn budget): {goal.text}"]
        if previous is not None and previous.status is not GoalStatus.DONE:
            lines.append(f"(it replaces the goal: {previous.text})")
        if not goal.contract.empty:
            lines.append(f"completion contract:\n{goal.contract.render()}")
        if command.draft:
            lines.append("the judge model is drafting a completion contract; work starts now")
        lines.append(
            "after each turn a judge decides whether it is done; /goal status, "
            "/goal pause, /goal resume, /goal clear"
        )
        output = self._update("\n".join(lines))
        turn = await self._send(goal.text)
        return self._answer(output, turn)

    async def _resume(self) -> GoalAnswer:
        goal = self._require("resume")
        if goal.status is GoalStatus.ACTIVE:
            return self._answer(f"the goal is already active: {goal.text}")
        self.goal = attrs.evolve(
            goal,
            status=GoalStatus.ACTIVE,
            turns_used=0,
            paused_reason=None,
            parse_failures=0,
            transport_failures=0,
            since_turn=self.host.turn_number(),
        )
        output = self._update(f"goal resumed ({self.goal.max_turns}-turn budget): {goal.text}")
        turn = await self._send(continuation(self.goal, "the person resumed the goal"))
        return self._answer(output, turn)

    def _gate(self, command: GateCommand) -> GoalAnswer:
        goal = self._require("gate")
        self.goal, output = apply_gate(goal, command, self.host.settings, self.host.attended)
        return self._answer(output)

    def _subgoal(self, command: SubgoalCommand) -> GoalAnswer:
        self.goal, output = apply_subgoal(self._require("subgoal"), command)
        return self._answer(output)

    # -- evaluations ---------------------------------------------------------------------

    async def _drafted(self, outcome: object) -> None:
        goal = self.goal
        contract = outcome.contract if isinstance(outcome, Outcome) else None
        if goal is not None and goal.drafting:
            self.goal = attrs.evolve(goal, drafting=False, contract=contract or goal.contract)
            if contract is not None:
                self._update(
                    f"drafted completion contract:\n{contract.render()}\nTighten a "
                    "field by setting the goal again with lines like 'verify: make "
                    "test'; /goal status shows it"
                )
            else:
                self._update("no contract could be drafted: the goal runs free-form")
        pending, self._pending = self._pending, None
        if pending is not None and self.goal is not None:
            await self._slot.start(attrs.evolve(pending, goal=self.goal))

    async def _evaluated(self, outcome: Outcome) -> None:
        goal = self.goal
        if goal is None or goal.status is not GoalStatus.ACTIVE:
            return  # paused or cleared while it ran
        goal = self.goal = attrs.evolve(goal, turns_used=goal.turns_used + 1)
        check = outcome.gates
        if check.refusal is not None:
            await self._pause(f"quality gates not run: {check.refusal}")
            return
        gates = list(goal.gates)
        for run in check.runs:
            if run.index < len(gates):
                old = gates[run.index]
                gates[run.index] = attrs.evolve(
                    old, attempts=0 if run.passed else old.attempts + 1, last_exit=run.exit_code
                )
        goal = self.goal = attrs.evolve(goal, gates=tuple(gates))
        failed = check.failed
        if failed is not None and failed.index < len(gates):
            gate = gates[failed.index]
            if gate.attempts > gate.max_retries:
                await self._pause(
                    f"quality gate still failing after {gate.max_retries} "
                    f"retries: $ {gate.command} (exit {gate.last_exit})"
                )
            elif goal.turns_used >= goal.max_turns:
                await self._pause(
                    f"turn budget spent ({goal.turns_used}/{goal.max_turns}), a "
                    "quality gate still failing"
                )
            else:
                self._update(f"quality gate failed (exit {failed.exit_code}): $ {gate.command}")
                prompt = GATE_FAILED.format(
                    goal=goal.text,
                    attempt=gate.attempts,
                    retries=gate.max_retries,
                    command=gate.command,
                    code=failed.exit_code,
                    output=failed.tail or "(none)",
                )
                await self._send_if_idle(prompt)
            return
        if outcome.judged is not None:
            await self._judged(outcome.judged)

    async def _judged(self, judged: Judged) -> None:
        """Apply the judge's verdict on a turn already counted."""
        goal = self.goal
        if goal is None or goal.status is not GoalStatus.ACTIVE:
            return
        goal = self.goal = attrs.evolve(
            goal,
            last_verdict=judged.verdict.value,
            last_reason=judged.reason,
            parse_failures=goal.parse_failures + 1 if judged.parse_failed else 0,
            transport_failures=goal.transport_failures + 1 if judged.transport_failed else 0,
        )
        verdict, reason = judged.verdict, judged.reason
        if verdict is Verdict.DONE:
            self.goal = attrs.evolve(goal, status=GoalStatus.DONE)
            self._update(f"goal achieved: {reason}", verdict="done", reason=reason)
        elif verdict is Verdict.BLOCKED:
            await self._pause(f"the judge ruled it blocked: {reason}", verdict="blocked")
        elif goal.transport_failures >= MAX_TRANSPORT_FAILURES:
            await self._pause(
                f"the judge could not be reached {goal.transport_failures} turns "
                f"in a row ({reason}); check [goals] judge_model"
            )
        elif goal.parse_failures >= MAX_PARSE_FAILURES:
            await self._pause(
                f"the judge gave no verdict {goal.parse_failures} turns in a row; "
                "route it to a stricter model with [goals] judge_model"
            )
        elif goal.turns_used >= goal.max_turns:
            await self._pause(
                f"turn budget spent ({goal.turns_used}/{goal.max_turns})", verdict=verdict.value
            )
        elif verdict is Verdict.WAIT and (judged.wait_on_session or judged.wait_on_pid):
            barrier = Barrier(judged.wait_on_session, judged.wait_on_pid)
            await self._barrier.park(barrier)
            what = barrier.describe()
            self._update(f"goal waiting on {what}: {reason}", verdict="wait", reason=reason)
        elif verdict is Verdict.WAIT:
            seconds = min(judged.wait_seconds or WAIT_LIMIT, WAIT_LIMIT)
            self._generation += 1
            self._wait_timer = self.host.ctx.send_after(seconds, GoalWake(self._generation))
            self._update(f"goal waiting {seconds:g} s: {reason}", verdict="wait", reason=reason)
        else:
            self._update(
                f"continuing toward the goal ({goal.turns_used}/{goal.max_turns}): {reason}",
                verdict="continue",
                reason=reason,
            )
            await self._continue(goal, reason)

    # -- helpers -------------------------------------------------------------------------

    async def _lifted(self, news: str) -> None:
        """A judge's wait on a process or pid is over: the goal goes on with the news."""
        goal = self.goal
        if goal is None or goal.status is not GoalStatus.ACTIVE:
            return
        self._update(f"goal wait over: {news.splitlines()[0]}", verdict="continue")
        said = goal.last_reason or "wait"
        await self._continue(goal, f"{said}\nThe wait is over: {news}")

    async def _continue(self, goal: Goal, note: str) -> None:
        await self._send_if_idle(continuation(goal, note))

    async def _send_if_idle(self, text: str) -> None:
        """A continuation, unless a turn runs or input waits (its end is judged instead);
        while the emergency stop is on it waits (a ``GoalWake`` looks again)."""
        if self.host.busy():
            return
        if self.host.stopped():
            self._generation += 1
            self._wait_timer = self.host.ctx.send_after(ESTOP_RECHECK, GoalWake(self._generation))
            self._update("goal continuation held: the emergency stop is on (hermes resume)")
            return
        await self._send(text)

    async def _send(self, text: str) -> int | None:
        """Hand ``text`` to the session; the turn that took it, if one did at once."""
        started: list[int] = []

        async def delivered() -> None:
            started.append(self.host.turn_number())

        await self.host.send("goal", text, delivered)
        return started[0] if started else None

    async def _pause(self, reason: str, verdict: str | None = None) -> None:
        goal = self.goal
        if goal is None:
            return
        await self._cancel_work()
        self.goal = goal.paused(reason)
        self._update(f"goal paused: {reason}. {PAUSE_HINT}", verdict=verdict, reason=reason)

    async def _cancel_work(self) -> None:
        self._pending = None
        self._generation += 1  # a pending GoalWake is stale now
        await self._slot.stop()
        await self._barrier.stop()

    def _update(self, message: str, verdict: str | None = None, reason: str | None = None) -> str:
        goal = self.goal
        self.host.publish(
            GoalUpdated(
                status=goal.status.value if goal else "cleared",
                message=message,
                verdict=verdict,
                reason=reason,
                turns_used=goal.turns_used if goal else 0,
                max_turns=goal.max_turns if goal else 0,
                goal=goal.text if goal else "",
            )
        )
        return message

    def _goal_blocks_loop(self) -> bool:
        """An active goal defers the loop's wakeups (both would start turns)."""
        return self.goal is not None and self.goal.status is GoalStatus.ACTIVE
