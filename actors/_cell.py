"""The actor cell: one actor's task, cancel scopes, mailbox and lifecycle.

A cell runs its actor as one trio task in the system's root nursery: the
supervision tree is the cells' (``parent``, ``children``), not trio's task
tree, so a child that ignores cancellation can never keep its parent from
returning, and a parent's end costs no task of its own. Everything an actor
does to the world goes through its cell, and everything that happens to an
actor (stop, kill, link exits, monitors) is settled here, in one place,
without locks: the cell's bookkeeping runs synchronously on the trio thread.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from typing import TYPE_CHECKING, Any

import trio

from ._actor import Actor
from ._checks import is_number
from ._context import ActorContext
from ._current import current_cell
from ._envelope import Envelope, ReplySlot
from ._errors import ActorExited, MailboxFull, NotRunning
from ._events import UnkillableReported
from ._exits import ExitReason
from ._mailbox import DROPPED_NEWEST, DROPPED_OLDEST, Mailbox, MailboxConfig
from ._messages import PROBE, Down, Exit, MonitorRef, TaskEnded, _Probe, _Stop
from ._ref import ActorRef
from ._tasks import OwnedTask, TaskFunction, run_owned
from ._teardown import KILL_MARGIN, State, terminate
from ._timers import Timer, TimerQueue

if TYPE_CHECKING:
    from ._system import ActorSystem

log = logging.getLogger("actors")


THROUGHPUT = 64
"""Messages an actor handles back to back before it yields to other tasks."""

_TAKING_NOTICES = frozenset({State.STARTING, State.RUNNING})
"""States in which a notice put in the system lane will still be handled."""

RECENT_EXITS = 16
"""Exits of children remembered per actor for introspection."""


class ActorCell:
    """Runtime state of one actor incarnation. Internal: actor code uses ``ActorContext``.

    ``state`` moves one way, STARTING -> RUNNING -> STOPPING -> EXITED (a crash
    or kill in ``on_start`` goes from STARTING straight to STOPPING). A graceful
    stop (``request_stop``) queues ``_Stop`` in the system lane; a hard kill
    (``kill``) records ``_kill_reason``, starts the hard deadline (kill grace
    from now) and cancels whatever runs:

    ==========  ===============================  ======================================
    state       graceful stop                    hard kill
    ==========  ===============================  ======================================
    STARTING    ``_Stop`` waits; the loop reads  the task's scope is cancelled (as the
                it once ``on_start`` returned    task starts, if it has not run yet);
                                                 a ``spawn`` waiting for ``on_start``
                                                 raises ``StartFailed``
    RUNNING     ``_Stop`` is read after the      idle: the parked loop is woken and
                current message (after the       returns ``_kill_reason``; busy: the
                queue, with                      handler's scope is cancelled; the
                ``serve_queued_on_stop``)        exit reason is the kill's
    STOPPING    tasks cancelled, children        the running cleanup scope is
                stopped (``child_stop_order``),  cancelled; what is left of cleanup
                then ``on_stop``, each phase by  ends by the hard deadline; a graceful
                the stop deadline (else the      exit becomes ``killed``
                shutdown budget from its start);
                a new request only brings the
                deadline closer; a linked
                actor's exit no longer kills it
    EXITED      no effect; ``stop`` returns      no effect; ``exit_reason`` is final;
                ``exit_reason``                  replies, monitors, links and the
                                                 parent were settled once
                                                 (``finalize``)
    ==========  ===============================  ======================================

    After a kill, every cleanup phase (tasks, children, ``on_stop``) runs under
    the hard deadline. A killed actor that has not exited by its hard deadline
    plus the kill margin is reported unkillable (``report_unkillable``): it
    leaves its parent's children and the registry, ``unkillable`` is set, and
    it keeps its state until it does exit.
    """

    __slots__ = (
        "_cleanup_scope",
        "_current",
        "_current_deferred",
        "_deferred",
        "_emptied",
        "_exited_event",
        "_hard_deadline",
        "_kill_reason",
        "_links",
        "_liveness",
        "_monitors",
        "_notice",
        "_probe_pending",
        "_ref",
        "_scope",
        "_start_slot",
        "_stop_deadline",
        "_stop_requested",
        "_tasks",
        "_timers",
        "actor",
        "actor_class",
        "children",
        "exit_reason",
        "id",
        "last_activity",
        "last_beat",
        "linked_to_parent",
        "mailbox",
        "parent",
        "path",
        "recent_exits",
        "registered_name",
        "restarts",
        "shutdown_budget",
        "started_at",
        "state",
        "system",
        "trap_exits",
        "unkillable",
    )

    def __init__(
        self,
        system: ActorSystem,
        actor: Actor,
        parent: ActorCell | None,
        cell_id: int,
        path: str,
        mailbox: MailboxConfig,
        shutdown_budget: float,
        restarts: int,
    ) -> None:
        now = trio.current_time()
        # The system that spawned it; never changes.
        self.system = system
        # The actor instance; None once exited (``release``), so a dead actor is
        # freed by reference counting.
        self.actor: Actor | None = actor
        # The actor's class name, kept for snapshots and events after ``actor`` is gone.
        self.actor_class = type(actor).__qualname__
        # The cell that spawned it (None: top level); never changes, even after exit.
        self.parent = parent
        # Unique in the system, never reused; refs compare and hash by it.
        self.id = cell_id
        # "/parent/.../name"; a replacement (or an unkillable one's successor) reuses it.
        self.path = path
        # This incarnation's ref; None once exited (a ref holds its cell: no cycle).
        self._ref: ActorRef | None = ActorRef(self)
        # Ordinary and system lanes; closed (refusing, dropping) from ``finalize`` on.
        self.mailbox = Mailbox(path, mailbox, self._on_drop)
        # Default graceful-stop budget in seconds (``stop(timeout=None)``, cleanup).
        self.shutdown_budget = shutdown_budget
        # Restarts before this incarnation (the supervisor's count); never changes.
        self.restarts = restarts
        # STARTING -> RUNNING -> STOPPING -> EXITED, one way only (see the class).
        self.state = State.STARTING
        # Why it exited; None until ``finalize``, then final. Set iff state is EXITED.
        self.exit_reason: ExitReason | None = None
        # True: a linked actor's exit arrives as an ``Exit`` message instead of killing it.
        self.trap_exits = actor.trap_exits
        # False once the parent stopped or killed it: its exit is then no link signal.
        self.linked_to_parent = True
        # Its system-wide registered name, if any (the registry keeps it in step).
        self.registered_name: str | None = None
        # Set once, when reported unkillable; it is then detached from parent and registry.
        self.unkillable = False
        # trio time of the spawn.
        self.started_at = now
        # trio time of the last message taken or ``ctx.beat()`` (liveness reads it).
        self.last_beat = now
        # What the last ``ctx.beat(activity)`` said it was doing, for stale reports.
        self.last_activity: str | None = None
        # Live children by name, in start order; None until the first and after exit.
        # A child leaves on its exit or when reported unkillable.
        self.children: dict[str, ActorCell] | None = None
        # The last RECENT_EXITS children's (path, reason, time), for introspection.
        self.recent_exits: deque[tuple[str, ExitReason, float]] | None = None
        # Owned tasks still running (``start_task``); None or empty when there are none.
        self._tasks: set[OwnedTask] | None = None
        # Set (then dropped) when the last owned task or child is gone; one waiter.
        self._emptied: trio.Event | None = None
        # The scope around ``on_start`` and the loop; not None only while they run.
        self._scope: trio.CancelScope | None = None
        # The shielded scope of the cleanup phase running now (``CleanupScope``), if any.
        self._cleanup_scope: trio.CancelScope | None = None
        # Why it was killed; set once (first kill, outside cancellation, or children
        # outliving the budget), then cleanup runs under ``_hard_deadline``; None
        # if never killed, and after ``release``.
        self._kill_reason: ExitReason | None = None
        # Deadline of the graceful stop asked for; only ever moves closer; inf if none.
        self._stop_deadline = math.inf
        # All cleanup ends by this after a kill (kill grace from the kill, or a
        # parent's earlier one); inf until killed; only ever moves closer.
        self._hard_deadline = math.inf
        # True once a ``_Stop`` was queued, so a second stop request queues no other.
        self._stop_requested = False
        # Set at exit for ``wait_exited``; made on the first wait, None after exit.
        self._exited_event: trio.Event | None = None
        # The spawner's wait for ``on_start``; not None exactly while it is pending.
        self._start_slot: ReplySlot | None = None
        # The envelope being handled; None between messages.
        self._current: Envelope | None = None
        # True while the current call's reply was deferred (``ctx.defer_reply``).
        self._current_deferred = False
        # The notice (Down, Exit, Stale, TaskEnded) being handled; None between them.
        self._notice: Any = None
        # Deferred replies not yet answered; each fails with ``ActorExited`` at exit.
        self._deferred: set[ReplySlot] | None = None
        # Monitors on this actor: ref -> watching cell (None: no one to tell).
        # Each watcher gets one ``Down`` at exit; None after.
        self._monitors: dict[MonitorRef, ActorCell | None] | None = None
        # Linked peers (links are symmetric: each holds the other); None after exit.
        self._links: set[ActorCell] | None = None
        # Its timers (``send_after``, liveness ticks); all cancelled at exit.
        self._timers: TimerQueue | None = None
        # Liveness watches it holds on other cells: watched cell -> its tick timer.
        self._liveness: dict[ActorCell, Timer] | None = None
        # True while a liveness probe is queued, so at most one is.
        self._probe_pending = False
        actor.ctx = ActorContext(self)

    @property
    def ref(self) -> ActorRef:
        """This incarnation's ref.

        Once the actor has exited the cell keeps no ref (a ref holds its cell, so
        keeping one would be a reference cycle): a new ref is made on demand. Refs
        compare and hash by id, so it equals every earlier ref of this actor.
        """
        ref = self._ref
        return ref if ref is not None else ActorRef(self)

    # == the task ====================================================================

    async def run(self) -> None:
        """The actor's task: start hook, receive loop, then bounded cleanup."""
        current_cell.set(self)
        actor = self.actor
        assert actor is not None
        reason: ExitReason | None = None
        try:
            with trio.CancelScope() as scope:
                self._scope = scope
                if self._kill_reason is not None:
                    scope.cancel()
                try:
                    if self._start_slot is not None:
                        await actor.on_start()
                        slot, self._start_slot = self._start_slot, None
                        slot.set_value(None)
                    reason = await self._loop(actor)
                except Exception as exc:
                    reason = ExitReason.from_caught(exc, where=f"{self.path} {self._phase()}")
            if self._kill_reason is not None and (reason is None or not reason.is_abnormal):
                # Killed, even if the loop then read a stop request before a checkpoint.
                reason = self._kill_reason
            elif reason is None:
                reason = ExitReason.cancelled(by=None)
        except trio.Cancelled as exc:
            # Cancelled from outside: the system is closing its root nursery.
            # That is a hard stop, so cleanup gets the kill grace.
            if self._kill_reason is None:
                self._kill_reason = ExitReason.cancelled(
                    by=self.parent.path if self.parent is not None else self.system.name,
                    detail=exc.reason or "",
                )
            self._enter_hard_mode()
            reason = self._kill_reason
            raise
        except BaseException as exc:
            reason = ExitReason.from_exception(exc, where=f"{self.path} {self._phase()}")
            raise
        finally:
            self._scope = None
            await terminate(self, reason or ExitReason.cancelled(by=None))

    def _phase(self) -> str:
        if self._start_slot is not None:
            return "in on_start"
        if self._current is not None:
            return f"in receive({type(self._current.message).__name__})"
        if self._notice is not None:
            return f"in receive({type(self._notice).__name__})"
        return "in receive loop"

    async def _loop(self, actor: Actor) -> ExitReason:
        mailbox = self.mailbox
        budget = THROUGHPUT
        stopping: ExitReason | None = None  # a stop reached with messages still to serve
        queued = 0
        self.state = State.RUNNING
        while True:
            item = mailbox.get_nowait()
            if item is None:
                if stopping is not None:
                    return stopping
                timers = self._timers
                if timers:
                    if timers.fire_due(trio.current_time()):
                        # Timer messages count against the budget like any other,
                        # so a zero-delay timer loop still yields every THROUGHPUT.
                        continue
                    await mailbox.wait(timers.next_deadline())
                else:
                    await mailbox.wait()
                if self._kill_reason is not None:
                    return self._kill_reason  # killed while idle: woken, not cancelled
                budget = THROUGHPUT  # we just yielded
                continue
            self.last_beat = trio.current_time()
            if type(item) is Envelope:
                self._current = item
                result = await actor.receive(item.message)
                reply = item.reply
                if reply is not None and not self._current_deferred:
                    self.deliver_reply(reply, result)
                self._current = None
                self._current_deferred = False
                if stopping is not None:
                    queued -= 1
                    if not queued:
                        return stopping
            elif type(item) is _Stop:
                if actor.serve_queued_on_stop and mailbox.depth:
                    # Serve what was sent before the stop, then stop (OTP's order).
                    stopping, queued = item.reason, mailbox.depth
                    continue
                return item.reason
            elif type(item) is _Probe:
                self._probe_pending = False
            else:  # Down, Exit, Stale, TaskEnded: notices for the actor's own handler
                self._notice = item
                await actor.receive(item)
                self._notice = None
            budget -= 1
            if not budget:
                budget = THROUGHPUT
                if self._timers:
                    self._timers.fire_due(trio.current_time())
                await trio.lowlevel.checkpoint()

    def deliver_reply(self, reply: ReplySlot, value: Any) -> bool:
        """Answer a call; a reply the caller no longer waits for is a counted dead letter."""
        if reply.set_value(value):
            return True
        self.system.dead_letters.record(self.path, value, "late reply (caller gave up)", None)
        return False

    # == stopping ====================================================================

    def request_stop(self, reason: ExitReason, deadline: float = math.inf) -> None:
        """Queue a graceful stop, served after the current message.

        A later request can only bring the deadline closer.
        """
        if deadline < self._stop_deadline:
            self._stop_deadline = deadline
        if not self._stop_requested and self.state is not State.EXITED:
            self._stop_requested = True
            self.mailbox.put_system(_Stop(reason))
            actor = self.actor
            if actor is not None and type(actor).on_stop_requested is not Actor.on_stop_requested:
                actor.on_stop_requested(reason)

    def kill(self, reason: ExitReason) -> None:
        """Hard stop: cancel the actor's scope, and its cleanup scope if it is cleaning up."""
        if self.state is State.EXITED:
            return
        if self._kill_reason is None:
            self._kill_reason = reason
        self._enter_hard_mode()
        if self._scope is not None:
            if self.mailbox.receiver_parked:
                # Idle in its receive loop: waking it is enough (the loop returns the
                # kill reason), and much cheaper than cancelling a scope, which makes
                # trio walk the cancel-status tree. Mass kills stay close to raw trio.
                self.mailbox.wake_receiver()
            else:
                self._scope.cancel(reason=reason.describe())
        if self._cleanup_scope is not None:
            self._cleanup_scope.cancel(reason=reason.describe())

    def _enter_hard_mode(self) -> None:
        """From now on all cleanup must end by one hard deadline (kill grace from now)."""
        if self._hard_deadline == math.inf:
            self._hard_deadline = trio.current_time() + self.system.kill_grace

    def tighten_hard_deadline(self, deadline: float) -> None:
        """Bring the hard deadline (and a running cleanup scope) forward to ``deadline``."""
        if deadline < self._hard_deadline:
            self._hard_deadline = deadline
            scope = self._cleanup_scope
            if scope is not None and scope.deadline > deadline:
                scope.deadline = deadline

    async def stop(self, reason: ExitReason, timeout: float | None) -> ExitReason:
        """Graceful stop until a deadline, then kill, then report unkillable (``ActorRef.stop``)."""
        if self.state is State.EXITED:
            await trio.lowlevel.checkpoint()
            assert self.exit_reason is not None
            return self.exit_reason
        caller = current_cell.get()
        if caller is self:
            raise RuntimeError(f"actor {self.path} cannot wait for its own stop; use ctx.stop()")
        budget = self.shutdown_budget if timeout is None else timeout
        if not is_number(budget) or not budget >= 0:
            raise ValueError(f"stop timeout must be a number of seconds >= 0, got {timeout!r}")
        if caller is not None and caller is self.parent:
            # Like an OTP supervisor: unlink before stopping, so the exit we
            # caused does not come back to us as a link signal.
            self.linked_to_parent = False
        if budget == 0:
            # Brutal: no graceful phase at all (OTP's brutal_kill), so the result is
            # always 'killed', never a race with a stop request.
            return await self.kill_and_wait(
                ExitReason.killed("brutal shutdown (budget 0)", by=_path_of(caller))
            )
        deadline = trio.current_time() + budget
        self.request_stop(reason, deadline)
        try:
            if await self._wait_exit_until(deadline):
                assert self.exit_reason is not None
                return self.exit_reason
        except trio.Cancelled:
            self.kill(ExitReason.killed("its stopper was cancelled", by=_path_of(caller)))
            raise
        return await self.kill_and_wait(
            ExitReason.killed(f"did not stop within {budget:g}s", by=_path_of(caller))
        )

    async def kill_and_wait(self, reason: ExitReason) -> ExitReason:
        """Kill, wait up to the system's kill grace, report unkillable if it did not exit."""
        if self.state is State.EXITED:
            await trio.lowlevel.checkpoint()
            assert self.exit_reason is not None
            return self.exit_reason
        self.check_killable_by(current_cell.get())
        self.begin_kill(reason)
        return await self.wait_killed()

    def check_killable_by(self, caller: ActorCell | None) -> None:
        """An actor cannot kill itself and wait (it would wait for its own exit)."""
        if caller is self:
            raise RuntimeError(f"actor {self.path} cannot kill itself and wait; raise instead")

    def begin_kill(self, reason: ExitReason) -> None:
        """The first half of ``kill_and_wait``: cancel now, without waiting."""
        if self.state is State.EXITED:
            return
        caller = current_cell.get()
        if caller is not None and caller is self.parent:
            self.linked_to_parent = False  # the parent asked; the exit is its answer
        self.kill(reason)

    async def wait_killed(self) -> ExitReason:
        """The second half: the exit, or ``unkillable`` once the kill grace is over."""
        if self.state is not State.EXITED:
            grace = self.system.kill_grace
            if not await self._wait_exit_until(self._hard_deadline + KILL_MARGIN * grace):
                return self.report_unkillable(f"still running {grace:g}s after being cancelled")
        assert self.exit_reason is not None
        return self.exit_reason

    def report_unkillable(self, detail: str) -> ExitReason:
        """Record that this actor ignores cancellation; its owner will move on without it."""
        if not self.unkillable:
            self.unkillable = True
            # Detach it so that its owner can finish and a replacement can take
            # its name and path; it stays listed in ``system.unkillable()``.
            parent = self.parent
            if parent is None:
                self.system.detach_top_level(self)
            elif parent.children is not None:
                if parent.children.get(self.ref.name) is self:
                    del parent.children[self.ref.name]
                if not parent.children:
                    parent.note_childless()
            self.system.registry.release(self)
            self.system.note_unkillable(self)
            self.system.events.publish(UnkillableReported(self.path, detail))
            log.error("actor %s is unkillable: %s", self.path, detail)
        return ExitReason.unkillable(f"{self.path}: {detail}")

    async def _wait_exit_until(self, deadline: float) -> bool:
        if self.state is State.EXITED:
            return True
        event = self._exited_event
        if event is None:
            event = self._exited_event = trio.Event()
        with trio.move_on_at(deadline):
            await event.wait()
        return self.exit_reason is not None

    async def wait_exited(self) -> ExitReason:
        """Wait, without a bound, until the actor has exited."""
        await self._wait_exit_until(math.inf)
        assert self.exit_reason is not None
        return self.exit_reason

    # == notices from other cells =====================================================

    def _on_drop(self, envelope: Envelope, why: str) -> None:
        reply = envelope.reply
        if reply is not None:
            if why in (DROPPED_NEWEST, DROPPED_OLDEST):
                reply.set_error(MailboxFull(self.path, self.mailbox.capacity))
            else:
                reply.set_error(ActorExited(self.path, self.exit_reason or ExitReason.noproc()))
        sender = envelope.sender.path if envelope.sender is not None else None
        self.system.dead_letters.record(self.path, envelope.message, why, sender)

    def on_child_exit(self, child: ActorCell, reason: ExitReason, signal: bool) -> None:
        """Bookkeeping for a child's exit, then link semantics if it was still linked."""
        children = self.children
        if children is not None and children.get(child.ref.name) is child:
            del children[child.ref.name]
        if self.recent_exits is None:
            self.recent_exits = deque(maxlen=RECENT_EXITS)
        self.recent_exits.append((child.path, reason, trio.current_time()))
        if signal:
            self.on_link_exit(child, reason)
        if not children:
            self.note_childless()

    def on_link_exit(self, peer: ActorCell, reason: ExitReason) -> None:
        """A linked actor exited: trap it as a message, or die too unless it was normal."""
        if self.state is State.EXITED:
            return
        if self.trap_exits:
            self.mailbox.put_notice(Exit(peer.ref, reason), (peer.id,))
        elif not reason.is_normal and self.state is not State.STOPPING:
            self.kill(ExitReason.linked(peer.path, reason))

    def notify_down(self, mref: MonitorRef, target: ActorRef, reason: ExitReason) -> None:
        if self.state is not State.EXITED:
            self.mailbox.put_notice(Down(mref, target, reason), (target.id,))

    def notify(self, notice: Any, after: tuple[int, ...]) -> bool:
        """Queue a notice from a monitor built outside the runtime (``ActorRef.notify``)."""
        if self.state is State.EXITED:
            return False
        return self.mailbox.put_notice(notice, after)

    def probe(self) -> None:
        """Queue a liveness probe unless one is already pending."""
        if not self._probe_pending and self.state is not State.EXITED:
            self._probe_pending = True
            self.mailbox.put_system(PROBE)

    # == wiring used by ActorContext =================================================

    def add_monitor(self, mref: MonitorRef, watcher: ActorCell | None) -> bool:
        """Register a monitor; False if this actor has already exited."""
        if self.state is State.EXITED:
            return False
        if self._monitors is None:
            self._monitors = {}
        self._monitors[mref] = watcher
        return True

    def remove_monitor(self, mref: MonitorRef) -> None:
        if self._monitors is not None:
            self._monitors.pop(mref, None)

    def add_link(self, peer: ActorCell) -> None:
        if self._links is None:
            self._links = set()
        self._links.add(peer)

    def remove_link(self, peer: ActorCell) -> None:
        if self._links is not None:
            self._links.discard(peer)

    def timers(self) -> TimerQueue:
        if self._timers is None:
            self._timers = TimerQueue()
        return self._timers

    def wake_for_timer(self) -> None:
        """Make an idle receive loop recompute its next timer deadline."""
        self.mailbox.wake_receiver()

    def liveness_watches(self) -> dict[ActorCell, Timer]:
        if self._liveness is None:
            self._liveness = {}
        return self._liveness

    def defer_current_reply(self) -> ReplySlot:
        envelope = self._current
        if envelope is None or envelope.reply is None:
            raise RuntimeError(f"actor {self.path}: defer_reply() outside the handling of a call")
        self._current_deferred = True
        if self._deferred is None:
            self._deferred = set()
        self._deferred.add(envelope.reply)
        return envelope.reply

    def settle_deferred(self, slot: ReplySlot) -> None:
        if self._deferred is not None:
            self._deferred.discard(slot)

    @property
    def current_is_call(self) -> bool:
        return self._current is not None and self._current.reply is not None

    @property
    def current_sender(self) -> ActorRef | None:
        return self._current.sender if self._current is not None else None

    def start_task(self, fn: TaskFunction, name: str, notify: bool = False) -> OwnedTask:
        """Start an owned task (``ActorContext.start_task``)."""
        if self.state is not State.STARTING and self.state is not State.RUNNING:
            raise NotRunning(f"actor {self.path} is {self.state.value}; it cannot start a task")
        task = OwnedTask(name, notify)
        if self._tasks is None:
            self._tasks = set()
        self._tasks.add(task)
        self.system.start_owned_task(run_owned, self, task, fn, name=f"{self.path} task {name}")
        return task

    def task_ended(self, task: OwnedTask, crashed: bool = False) -> None:
        tasks = self._tasks
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                self._note_emptied()
        if task.notify and not crashed and self.state in _TAKING_NOTICES:
            # What the task sent its own actor comes first: it is sent as the actor.
            self.mailbox.put_notice(TaskEnded(task), (self.id,))

    async def wait_taskless(self) -> None:
        """Wait until every owned task has ended."""
        while self._tasks:
            await self._emptied_event().wait()

    def note_childless(self) -> None:
        """The last child has exited (or was detached): wake ``wait_childless``."""
        self._note_emptied()

    async def wait_childless(self) -> None:
        """Wait until this actor has no children left."""
        while self.children:
            await self._emptied_event().wait()

    async def wait_emptied(self) -> None:
        """Wait until the last owned task or the last child is gone (whichever comes)."""
        await self._emptied_event().wait()

    def _emptied_event(self) -> trio.Event:
        """Set when the last owned task or the last child is gone (one waiter: the cell's
        own teardown, which waits for its tasks, then for its children, or for both)."""
        if self._emptied is None:
            self._emptied = trio.Event()
        return self._emptied

    def _note_emptied(self) -> None:
        event, self._emptied = self._emptied, None
        if event is not None:
            event.set()


def _path_of(cell: ActorCell | None) -> str | None:
    return cell.path if cell is not None else None
