"""``ActorContext``: what an actor can do, reached as ``self.ctx``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple

import trio

from ._checks import is_number
from ._envelope import Envelope
from ._errors import MailboxFull
from ._exits import ExitReason
from ._liveness import LivenessSpec
from ._messages import MonitorRef, Stale
from ._oneshot import Task, TaskRef, as_task, spawn_task_in
from ._ref import ActorRef
from ._timers import Timer
from ._watchable import Watchable

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import ActorCell
    from ._mailbox import MailboxConfig
    from ._system import ActorSystem
    from ._tasks import OwnedTask, TaskFunction

_monitor_ids = itertools.count(1)

R = TypeVar("R")
Ts = TypeVarTuple("Ts")


class Reply:
    """A deferred reply to one call: answer it once with ``send`` or ``fail``."""

    __slots__ = ("_cell", "_slot")

    def __init__(self, cell: ActorCell, slot: Any) -> None:
        self._cell = cell
        self._slot = slot

    @property
    def caller_gave_up(self) -> bool:
        """True once the caller timed out or was cancelled (a reply would be discarded)."""
        abandoned: bool = self._slot.abandoned
        return abandoned

    def send(self, value: Any) -> bool:
        """Deliver the reply; False if the caller already gave up (it is then a dead letter)."""
        self._cell.settle_deferred(self._slot)
        return self._cell.deliver_reply(self._slot, value)

    def fail(self, error: BaseException) -> bool:
        """Raise ``error`` in the caller instead of replying."""
        self._cell.settle_deferred(self._slot)
        failed: bool = self._slot.set_error(error)
        return failed


class ActorContext:
    """The actor's handle on the runtime: identity, children, monitors, links, timers."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    # -- identity ------------------------------------------------------------------

    @property
    def self(self) -> ActorRef:
        """This actor's ref."""
        return self._cell.ref

    @property
    def path(self) -> str:
        return self._cell.path

    @property
    def system(self) -> ActorSystem:
        return self._cell.system

    @property
    def parent(self) -> ActorRef | None:
        """The owner's ref (None for a top-level actor, owned by the system)."""
        parent = self._cell.parent
        return parent.ref if parent is not None else None

    @property
    def sender(self) -> ActorRef | None:
        """Sender of the message being handled, if it was sent from an actor."""
        return self._cell.current_sender

    @property
    def handling_call(self) -> bool:
        """True while the message being handled is a ``call`` (a reply is expected)."""
        return self._cell.current_is_call

    @property
    def restarts(self) -> int:
        """How many times this actor's owner restarted it (as told at spawn)."""
        return self._cell.restarts

    # -- lifecycle -----------------------------------------------------------------

    def stop(self, reason: ExitReason | None = None) -> None:
        """Stop after the current message (default reason: normal)."""
        self._cell.request_stop(reason or ExitReason.normal())

    @property
    def kill_reason(self) -> ExitReason | None:
        """The reason this actor is being killed with (``ActorRef.kill``), None if it is not.

        For work that settles in a shielded step after a kill and wants to say why
        (a one-shot task: the owner passes its words as the reason's ``detail``).
        """
        return self._cell._kill_reason

    @property
    def trap_exits(self) -> bool:
        return self._cell.trap_exits

    @trap_exits.setter
    def trap_exits(self, value: bool) -> None:
        self._cell.trap_exits = bool(value)

    @property
    def mailbox_depth(self) -> int:
        """Ordinary messages waiting in this actor's mailbox (not counting the one in hand)."""
        return self._cell.mailbox.depth

    def beat(self, activity: str | None = None) -> None:
        """Refresh the heartbeat during long work, optionally saying what it is doing."""
        cell = self._cell
        cell.last_beat = trio.current_time()
        if activity is not None:
            cell.last_activity = activity

    def defer_reply(self) -> Reply:
        """Answer the call being handled later; ``receive``'s return value is then ignored."""
        cell = self._cell
        return Reply(cell, cell.defer_current_reply())

    # -- children ------------------------------------------------------------------

    async def spawn(
        self,
        actor: Actor,
        *,
        name: str | None = None,
        register: str | None = None,
        mailbox: MailboxConfig | None = None,
        shutdown: float | None = None,
        start_timeout: float | None = None,
        restarts: int = 0,
    ) -> ActorRef:
        """Start a child actor linked to this one; see ``ActorSystem.spawn``."""
        return await self._cell.system.spawn_in(
            self._cell,
            actor,
            name=name,
            register=register,
            mailbox=mailbox,
            shutdown=shutdown,
            start_timeout=start_timeout,
            restarts=restarts,
        )

    async def spawn_task(
        self,
        body: Task[R] | Callable[[*Ts], Awaitable[R]],
        /,
        *args: *Ts,
        name: str | None = None,
        register: str | None = None,
        mailbox: MailboxConfig | None = None,
        shutdown: float | None = None,
        link: bool = True,
    ) -> TaskRef[R]:
        """Run ``body`` (a ``Task``, or an async function with ``args``) as a one-shot child.

        Its return value or exception is its exit; ``await ref.result()`` gives the
        value (see ``actors/_oneshot.py``). Linked like any child unless ``link`` is
        False; the other arguments are ``spawn``'s.
        """
        return await spawn_task_in(
            self._cell.system,
            self._cell,
            as_task(body, args),
            name=name,
            register=register,
            mailbox=mailbox,
            shutdown=shutdown,
            link=link,
        )

    def start_task(self, fn: TaskFunction, *, name: str, notify: bool = False) -> OwnedTask:
        """Run ``fn()`` as a task of this actor, in parallel with its receive loop.

        It runs as the actor, ends with it (cancelled before its children stop and
        before ``on_stop``), and crashes it if it raises; see ``actors/_tasks.py``.
        With ``notify``, its end (returned or cancelled) arrives as ``TaskEnded``.
        Raises ``NotRunning`` once the actor is stopping.
        """
        return self._cell.start_task(fn, name, notify)

    def children(self) -> list[ActorRef]:
        """Live children in start order."""
        return [c.ref for c in (self._cell.children or {}).values()]

    def child(self, name: str) -> ActorRef | None:
        """The live child called ``name``, or None."""
        cell = (self._cell.children or {}).get(name)
        return cell.ref if cell is not None else None

    # -- monitors and links --------------------------------------------------------

    def monitor(self, target: ActorRef | Watchable) -> MonitorRef:
        """Get exactly one ``Down`` when ``target`` exits (at once, ``noproc``, if it is dead).

        ``target`` may also be a ``Watchable`` that is not an actor (a supervisor's
        ``ChildHandle``): it then sends its own notices, each carrying the monitor.
        """
        mref = MonitorRef(next(_monitor_ids), target)
        if isinstance(target, ActorRef):
            if not target._cell.add_monitor(mref, self._cell):
                self._cell.notify_down(
                    mref, target, ExitReason.noproc(f"{target.path} was already dead")
                )
        elif isinstance(target, Watchable):
            target.add_monitor(mref, self._cell.ref)
        else:
            raise TypeError(
                f"monitor target must be an ActorRef or a Watchable (such as a ChildHandle), "
                f"got {target!r}"
            )
        return mref

    def demonitor(self, mref: MonitorRef, flush: bool = True) -> None:
        """Remove a monitor; with ``flush``, also drop its notices if already queued."""
        target = mref.target
        mailbox = self._cell.mailbox
        if isinstance(target, ActorRef):
            target._cell.remove_monitor(mref)
            if flush and not target.is_alive:  # a Down is only ever queued for a dead target
                # A monitor delivers at most one Down: stop at the first match.
                mailbox.remove_first_system(lambda m: getattr(m, "monitor", None) is mref)
            return
        target.remove_monitor(mref)
        if flush:  # a Watchable may have queued several
            mailbox.remove_system(lambda m: getattr(m, "monitor", None) is mref)

    def link(self, target: ActorRef) -> None:
        """Link both ways: an abnormal exit of either stops the other (or is trapped)."""
        me, peer = self._cell, target._cell
        if peer is me:
            return
        if peer.exit_reason is not None:
            me.on_link_exit(peer, ExitReason.noproc(f"{peer.path} was already dead"))
            return
        me.add_link(peer)
        peer.add_link(me)

    def unlink(self, target: ActorRef) -> None:
        """Remove a link in both directions."""
        self._cell.remove_link(target._cell)
        target._cell.remove_link(self._cell)

    # -- timers --------------------------------------------------------------------

    def send_after(self, delay: float, message: Any) -> Timer:
        """Deliver ``message`` to this actor after ``delay`` seconds (dies with the actor)."""
        return self._add_timer(delay, None, message)

    def send_interval(self, period: float, message: Any) -> Timer:
        """Deliver ``message`` every ``period`` seconds until cancelled or the actor exits."""
        if not is_number(period) or not period > 0:
            raise ValueError(f"timer period must be > 0 seconds, got {period!r}")
        return self._add_timer(period, period, message)

    def _add_timer(self, delay: float, period: float | None, message: Any) -> Timer:
        if not is_number(delay) or not (0 <= delay < math.inf):
            raise ValueError(f"timer delay must be a finite number >= 0, got {delay!r}")
        cell = self._cell

        def fire() -> None:
            # A timer never blocks: if the mailbox is full the message is a dead letter.
            try:
                cell.mailbox.put_nowait(Envelope(message, cell.ref), block_raises=False)
            except MailboxFull:
                cell.system.dead_letters.record(
                    cell.path, message, "timer message refused (mailbox full)", cell.path
                )

        return self._schedule(delay, period, fire)

    def _schedule(self, delay: float, period: float | None, action: Any) -> Timer:
        cell = self._cell
        timer = cell.timers().add(Timer(trio.current_time() + delay, period, action))
        cell.wake_for_timer()
        return timer

    # -- liveness ------------------------------------------------------------------

    def watch_liveness(self, target: ActorRef, spec: LivenessSpec) -> None:
        """Probe ``target`` every ``spec.interval``; get one ``Stale`` when it goes stale."""
        me, peer = self._cell, target._cell
        watches = me.liveness_watches()
        old = watches.pop(peer, None)
        if old is not None:
            old.cancel()

        def tick() -> None:
            if peer.exit_reason is not None:
                watches.pop(peer, None)
                timer.cancel()
                return
            age = trio.current_time() - peer.last_beat
            if spec.is_stale(age):
                watches.pop(peer, None)
                timer.cancel()
                me.mailbox.put_system(Stale(peer.ref, age, peer.last_activity))
            else:
                peer.probe()

        peer.probe()
        timer = self._schedule(spec.interval, spec.interval, tick)
        watches[peer] = timer

    def unwatch_liveness(self, target: ActorRef) -> None:
        """Stop watching ``target``'s heartbeat."""
        timer = self._cell.liveness_watches().pop(target._cell, None)
        if timer is not None:
            timer.cancel()
