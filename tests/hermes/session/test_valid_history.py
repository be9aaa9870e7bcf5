"""Valid history, always (issue item 13), proven with random interleavings.

After any sequence of prompts (with scripted replies, provider errors and
stream faults), busy modes, verbs, caller and tool timeouts, waits and actor
crashes, the persisted transcript must be one the Messages API accepts: the
first message is the user's, roles alternate, every tool_use has exactly one
tool_result in the next message, and none is left open once the session is idle.

**Design.** Each hypothesis example is ``@given(st.lists(actions))`` run as a
fresh ``trio.run``: its own actor system, fake provider (real HTTP on
loopback), model client, SQLite store in a new directory, and both the store
and the session under real ``Supervisor``s (the session's ``ChildSpec`` builds
a ``SessionActor`` with a fixed session id, so a restart resumes the same
transcript; we talk to it through the ``ChildHandle`` and re-fetch the hub
after each restart). The actions (``history_model.py``) are applied in order
by a driver that knows the live system (``GetState``'s ``turn_path``, the
tree's tool workers), so an action that does not apply right now (kill a
worker when none runs) is a no-op. This is chosen over a
``RuleBasedStateMachine`` driving a trio loop in a helper thread or a guest run
because each example then owns and tears down every task, socket, subprocess
and file it made with plain structured concurrency (nothing leaks from one
example into the next, and a hang is a ``trio.fail_after`` failure of that
example), while a list of actions shrinks as well as a rule sequence does.
The kill grace is 0.1 s (``KILL_GRACE``) so that a command ignoring SIGTERM
makes its turn outlive its stop, deterministically.

Invariants, checked after every step and after a final settle (cancel until
every waiting prompt is answered and the session is idle):

- the stored transcript passes ``check_history`` (our own checker, written
  from the API's rules, not the store's validator); once idle, no tool_use is
  open, the store's ``open_tool_uses`` is empty, and the session's in-memory
  conversation equals the stored one (and is not dirty);
- every prompt submitted got a ``TurnResult`` or a recorded refusal/failure
  (no waiter left hanging), and a prompt whose own turn ran is still stored;
- the store refused no write (``RecordingStore`` sees every request on its way
  to the real store actor: an ``InvalidTranscript`` or ``SeqConflict`` is
  history corruption attempted, even when the writer swallows it); no turn
  result or event reports a store failure an injected store crash does not
  explain; no actor exited with an error we did not inject.

Deterministic by default (``derandomize=True``); ``HERMES_HYPOTHESIS_RANDOM=1``
for fresh random examples, ``HERMES_HISTORY_EXAMPLES=N`` for more of them, and
``--hypothesis-show-statistics`` for what the examples exercised.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import attrs
import trio
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from actors import (
    ActorExited,
    ActorExitedEvent,
    CallTimeout,
    ExitKind,
    ExitReason,
    UnkillableReported,
)
from hermes.model import (
    TextBlock,
)
from hermes.session import (
    SessionError,
    TurnEnd,
    TurnResult,
)
from hermes.session import events as ev
from hermes.session.messages import GetHub

from .history_model import (
    REPLIES,
    Action,
    Cancel,
    CrashSession,
    CrashStore,
    CrashTurn,
    Interrupt,
    KillWorker,
    Pause,
    Prompt,
    Redirect,
    Steer,
    WaitIdle,
    actions,
    check_history,
)
from .history_world import SESSION_ID, InjectedCrash, World, open_world

EXAMPLE_LIMIT = 20.0
"""Seconds one example may take before it counts as a hang."""
SETTLE_LIMIT = 8.0
"""Seconds the final settle may take (every waiter answered, the session idle)."""

KILL_GRACE = 0.1
"""The runtime's kill grace in the examples: below a cancelled terminal's 0.2 s SIGTERM
grace, so a command that ignores SIGTERM makes its turn outlive its stop, every time (at
the defaults, 1 s against 0.2 s, it never does)."""

_STORE_FAILURE = re.compile(r"store \w+ \(session '[^']*'\) failed|could not be (settled|repaired)")
_STORE_OUTAGE = re.compile(
    r"the store actor is not running|no answer within|stopped waiting for this request"
)
"""What a store crash (a ``CrashStore`` action) may make a write fail with."""


def _note(text: str) -> None:
    """A hypothesis statistics event (``--hypothesis-show-statistics``), if in a test."""
    if currently_in_test_context():
        event(text)


_RAN = {
    TurnEnd.COMPLETED,
    TurnEnd.INTERRUPTED,
    TurnEnd.MAX_ITERATIONS,
    TurnEnd.HALTED,
    TurnEnd.UNKNOWN_TOOLS,
}
"""Turn ends after which the turn's prompt is certainly in the transcript."""


def _injected(reason: ExitReason | None) -> bool:
    while reason is not None:
        if isinstance(reason.error, InjectedCrash):
            return True
        reason = reason.cause
    return False


def _only_cancelled(error: BaseException | None) -> bool:
    """A group of nothing but ``trio.Cancelled`` (an actor cut short while unkillable)."""
    if isinstance(error, trio.Cancelled):
        return True
    if isinstance(error, BaseExceptionGroup):
        return all(_only_cancelled(e) for e in error.exceptions)
    return False


@attrs.define
class Waiter:
    """One submitted prompt and how it was answered."""

    label: str
    mode: str | None = None
    done: bool = False
    result: TurnResult | None = None
    error: BaseException | None = None


def _tool_workers(node: dict[str, Any]) -> Iterator[str]:
    for child in node.get("children", ()):
        path = child.get("path", "")
        if path.rsplit("/", 1)[-1].startswith("tool-"):
            yield path
        yield from _tool_workers(child)


class Driver:
    """Applies actions to a live world and checks the invariants."""

    def __init__(self, world: World, nursery: trio.Nursery, events: Any) -> None:
        self.w = world
        self.nursery = nursery
        self.system_events = events
        self.hub_subs = ExitStack()
        self.subs: list[Any] = []
        self.waiters: list[Waiter] = []
        self.problems: list[str] = []
        self.trace: list[str] = []
        self.prompts = 0
        self.store_crashes = 0
        self._subscribe()

    def _subscribe(self) -> None:
        self.subs.append(self.hub_subs.enter_context(self.w.handle.subscribe(10_000)))

    def problem(self, text: str) -> None:
        self.problems.append(f"{text}  [trace: {' | '.join(self.trace[-12:])}]")

    # -- actions -----------------------------------------------------------------------

    async def apply(self, action: Action) -> None:
        self.trace.append(repr(action))
        handle = self.w.handle
        if isinstance(action, Prompt):
            # The newest prompt's replies are what the provider serves next.
            self.w.fake.script.clear()
            self.w.fake.enqueue(*REPLIES[action.reply]())
            self.prompts += 1
            label = f"<prompt {self.prompts}>"
            await self.nursery.start(self._run, label, action.mode, action.patient)
        elif isinstance(action, Steer):
            await self._verb(handle.steer("steer: keep it short"))
        elif isinstance(action, Redirect):
            await self._verb(handle.redirect("redirect: do it differently"))
        elif isinstance(action, Interrupt):
            await self._verb(handle.interrupt())
        elif isinstance(action, Cancel):
            await self._wait_until(action.when)
            answer = await self._verb(handle.cancel())
            if answer is not None and answer.result is not None:
                self._check_result(answer.result, "cancel")
        elif isinstance(action, Pause):
            await trio.sleep(action.seconds)
        elif isinstance(action, WaitIdle):
            if await self.wait_idle(SETTLE_LIMIT):
                await self.check_idle("wait idle")
            else:
                self.problem("the session did not become idle")
        elif isinstance(action, CrashTurn):
            await self._wait_until(action.when)
            state = await handle.state()
            ref = self.w.system.lookup(state.turn_path) if state.turn_path else None
            _note(f"crash turn: {'hit' if ref is not None else 'no turn'}")
            if ref is not None:
                self.trace.append(f"crash {ref.path}")
                await ref.kill(ExitReason.from_exception(InjectedCrash("turn crash")))
        elif isinstance(action, KillWorker):
            path = await self._wait_for_worker()
            ref = self.w.system.lookup(path) if path else None
            _note(f"kill worker: {'hit' if ref is not None else 'no worker'}")
            if ref is not None:
                self.trace.append(f"kill {ref.path}")
                await ref.kill(ExitReason.from_exception(InjectedCrash("worker crash")))
        elif isinstance(action, CrashStore):
            await self._wait_until(action.when)
            ref = self.w.store_child.ref
            busy = (await handle.state()).busy
            _note(f"crash store: {'busy' if busy else 'idle'}")
            if ref is not None:
                self.store_crashes += 1
                self.trace.append(f"crash {ref.path}")
                await ref.kill(ExitReason.from_exception(InjectedCrash("store crash")))
        elif isinstance(action, CrashSession):
            at_tool = await self._wait_until(action.when)
            state = await handle.state()
            _note(f"crash session: {'mid-batch' if at_tool else 'busy' if state.busy else 'idle'}")
            await self.crash_session()
        else:  # pragma: no cover
            raise AssertionError(action)

    async def _run(self, label: str, mode: str | None, patient: bool, *, task_status: Any) -> None:
        waiter = Waiter(label, mode)
        self.waiters.append(waiter)
        # The prompt is in the session's mailbox before the driver's next action:
        # ``call`` queues it without a checkpoint.
        task_status.started()
        try:
            waiter.result = await self.w.handle.run(
                label, mode=mode, timeout=60 if patient else 0.05
            )
            self._check_result(waiter.result, label)
            _note(f"prompt answered: {waiter.result.reason.value}")
        except (SessionError, ActorExited) as error:
            waiter.error = error  # refused (busy, queue full), dropped by a cancel, crashed
            _note(f"prompt answered: {type(error).__name__}")
        except CallTimeout as error:
            waiter.error = error
            if patient:
                self.problem(f"{label}: no answer within 60 s")
            _note("prompt answered: CallTimeout (caller gave up)")
        except Exception as error:
            waiter.error = error
            self.problem(f"{label} failed unexpectedly: {error!r}")
        finally:
            waiter.done = True

    async def _verb(self, call: Any) -> Any:
        try:
            return await call
        except SessionError:  # NoTurnRunning, QueueFull...: a refusal, not a failure
            return None
        except CallTimeout as error:
            self.problem(f"a verb got no answer: {error}")
            return None

    async def _wait_until(self, when: str) -> str | None:
        """Wait (a moment at most) for a running turn or tool worker, per ``when``."""
        if when == "tool":
            return await self._wait_for_worker()
        if when == "busy":
            with trio.move_on_after(0.3):
                while True:
                    if (await self.w.handle.state()).busy:
                        break
                    await trio.sleep(0.01)
        return None

    async def _wait_for_worker(self, limit: float = 0.6) -> str | None:
        with trio.move_on_after(limit):
            while True:
                workers = list(_tool_workers(self.w.system.snapshot()))
                if workers:
                    return workers[0]
                state = await self.w.handle.state()
                if not state.busy:
                    return None
                await trio.sleep(0.01)
        return None

    async def crash_session(self) -> None:
        ref = self.w.child.ref
        if ref is None:
            return
        self.trace.append(f"crash {ref.path}")
        await ref.kill(ExitReason.from_exception(InjectedCrash("session crash")))
        # The restarted session has a new hub: re-fetch it and subscribe again.
        hub = await self.w.child.call(GetHub(), timeout=10)
        self.w.handle.hub = hub
        self._subscribe()

    # -- checks ------------------------------------------------------------------------

    def _store_trouble(self, text: str) -> bool:
        """A store failure in ``text`` that no injected store crash explains."""
        if not _STORE_FAILURE.search(text):
            return False
        return not (self.store_crashes and _STORE_OUTAGE.search(text))

    def _check_result(self, result: TurnResult, label: str) -> None:
        if self._store_trouble(result.detail):
            self.problem(f"{label}: turn {result.turn} hit the store: {result.detail}")

    def drain_events(self) -> None:
        for sub in self.subs:
            for item in sub.drain():
                payload = item.payload
                if isinstance(payload, ev.ErrorOccurred) and payload.reason == "store":
                    if self._store_trouble(payload.message):
                        self.problem(f"store error event: {payload.message}")
                elif isinstance(payload, ev.TurnCompleted) and self._store_trouble(payload.detail):
                    self.problem(f"turn {payload.turn} completed with: {payload.detail}")
                elif isinstance(payload, ev.EventsLost):
                    self.problem(f"{payload} (the checks may have missed events)")
        refused, self.w.recorder.refused[:] = list(self.w.recorder.refused), []
        for text in refused:
            self.problem(f"the store refused a write: {text}")
        for notice in self.system_events.drain():
            if isinstance(notice, UnkillableReported):
                _note("an actor was reported unkillable")
            if (
                isinstance(notice, ActorExitedEvent)
                and notice.reason.kind is ExitKind.ERROR
                and not _injected(notice.reason)
                and not _only_cancelled(notice.reason.error)
            ):
                self.problem(f"{notice.path} crashed: {notice.reason.describe()}")

    async def check(self, label: str) -> None:
        """The stored transcript is valid (a batch may be in flight)."""
        self.drain_events()
        transcript = await self.w.store.load(SESSION_ID)
        for text in check_history(transcript.messages, settled=False):
            self.problem(f"{label}: {text}")

    async def wait_idle(self, limit: float) -> bool:
        with trio.move_on_after(limit):
            while True:
                state = await self.w.handle.state()
                if not state.busy and not state.queued:
                    return True
                await trio.sleep(0.02)
        return False

    async def check_idle(self, label: str) -> bool:
        """Idle: nothing open, and memory equals the store. False if a turn got in between."""
        before = await self.w.handle.state()
        actor = self.w.incarnations[-1]
        memory = list(actor.conversation.messages)
        dirty = actor.conversation.dirty
        transcript = await self.w.store.load(SESSION_ID)
        after = await self.w.handle.state()
        if before.busy or after.busy or before.turn != after.turn:
            return False
        if actor is not self.w.incarnations[-1]:
            return False
        for text in check_history(transcript.messages, settled=True):
            self.problem(f"{label} (idle): {text}")
        if transcript.open_tool_uses:
            self.problem(f"{label}: the store reports open tool uses {transcript.open_tool_uses}")
        if dirty or memory != list(transcript.messages):
            self.problem(
                f"{label}: the idle session's memory ({len(memory)} messages, dirty={dirty}) "
                f"differs from the store ({transcript.next_seq} messages)"
            )
        if after.messages != transcript.next_seq:
            self.problem(f"{label}: state says {after.messages} messages, the store has more")
        return True

    async def settle(self) -> None:
        """Cancel until every waiter is answered and the session is idle, then check."""
        settled = False
        with trio.move_on_after(SETTLE_LIMIT):
            while not settled:
                await self._verb(self.w.handle.cancel(timeout=5))
                await trio.sleep(0.02)
                settled = (
                    all(w.done for w in self.waiters)
                    and await self.wait_idle(0.5)
                    and await self.check_idle("final")
                )
        hanging = [w.label for w in self.waiters if not w.done]
        if hanging:
            self.problem(f"waiters left hanging: {hanging}")
        elif not settled:
            self.problem(f"the session did not settle (idle, checked) in {SETTLE_LIMIT:g} s")
        else:
            for waiter in self.waiters:
                if waiter.result is None and waiter.error is None:
                    self.problem(f"{waiter.label}: neither a result nor an error")
        await self.check_prompts_kept()
        self.drain_events()
        self.hub_subs.close()

    async def check_prompts_kept(self) -> None:
        """A prompt whose own turn ran (not cancelled, rolled back or crashed) is in the
        stored transcript: no later write may have replaced it."""
        transcript = await self.w.store.load(SESSION_ID)
        texts = "\n".join(
            b.text
            for m in transcript.messages
            if m.role == "user"
            for b in m.content
            if isinstance(b, TextBlock)
        )
        for waiter in self.waiters:
            result = waiter.result
            # A prompt in steer mode may have joined another turn as a steer.
            if result is None or waiter.mode == "steer" or result.reason not in _RAN:
                continue
            if waiter.label not in texts:
                self.problem(f"{waiter.label} ran ({result.reason.value}) but is not stored")


async def scenario(steps: list[Action], directory: Path) -> list[str]:
    """Apply ``steps`` to a fresh world; returns the problems found."""
    async with open_world(directory, kill_grace=KILL_GRACE) as world:
        with world.system.events.subscribe(10_000) as system_events:
            async with trio.open_nursery() as nursery:
                driver = Driver(world, nursery, system_events)
                try:
                    with trio.fail_after(EXAMPLE_LIMIT):
                        for index, action in enumerate(steps):
                            await driver.apply(action)
                            await driver.check(f"after step {index} {action!r}")
                        await driver.settle()
                except trio.TooSlowError:
                    driver.problem(f"the example did not finish in {EXAMPLE_LIMIT:g} s (a hang)")
                nursery.cancel_scope.cancel()
    return driver.problems


def _run_scenario(steps: list[Action]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="valid-history-") as tmp:
        return trio.run(scenario, steps, Path(tmp))


_RANDOM = os.environ.get("HERMES_HYPOTHESIS_RANDOM") == "1"


@settings(
    max_examples=int(os.environ.get("HERMES_HISTORY_EXAMPLES", "40")),
    deadline=None,
    derandomize=not _RANDOM,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=st.lists(actions, min_size=3, max_size=12))
def test_history_stays_valid(steps: list[Action]) -> None:
    problems = _run_scenario(steps)
    assert not problems, "\n".join(problems)
