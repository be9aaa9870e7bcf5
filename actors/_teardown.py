"""How an actor's cell ends: stop its children, run its stop hook, settle its exit.

Functions on an ``ActorCell`` (the cell's own lifecycle, kept apart from its
message loop in ``_cell.py``): ``terminate`` is the whole sequence, run once
by the cell's task; ``finalize`` settles everything synchronously (replies,
dead letters, monitors, links, parent) and ``release`` lets go of what an
exited actor no longer needs, so it is freed by reference counting.
"""

from __future__ import annotations

import enum
import logging
import math
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ._actor import Actor
from ._errors import ActorExited, StartFailed
from ._events import ActorExitedEvent, UnkillableFinished
from ._exits import ExitKind, ExitReason

if TYPE_CHECKING:
    from ._cell import ActorCell
    from ._envelope import Envelope
    from ._system import ActorSystem

log = logging.getLogger("actors")

KILL_MARGIN = 0.1
"""Fraction of the kill grace separating the cleanup deadlines of nested actors.

After a kill an actor has until its hard deadline (kill grace from the kill) to
finish cleaning up. The children it cancels get a hard deadline earlier by this
margin, so that a child that uses all of its time is never mistaken for an
unkillable one by its parent; whoever waits for the actor waits the margin
longer than its hard deadline before calling it unkillable.
"""

_LOUD_EXITS = frozenset({ExitKind.ERROR, ExitKind.KILLED, ExitKind.UNKILLABLE, ExitKind.STALE})
"""Exit kinds logged as warnings; deliberate stops and cancellations are debug-level."""


class State(enum.Enum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    EXITED = "exited"


def cleanup_deadline(cell: ActorCell) -> float:
    if cell._hard_deadline < math.inf:
        return cell._hard_deadline
    if cell._stop_deadline < math.inf:
        return cell._stop_deadline
    return trio.current_time() + cell.shutdown_budget


async def terminate(cell: ActorCell, reason: ExitReason) -> None:
    """End owned tasks, stop children, run the stop hook, then settle everything.
    Never raises."""
    cell.state = State.STOPPING
    try:
        actor = cell.actor
        hook = actor if actor is not None and type(actor).on_stop is not Actor.on_stop else None
        if cell._kill_reason is not None:
            if cell._tasks or cell.children or hook is not None:
                reason = await end_killed(cell, hook, reason)
        else:
            if cell._tasks:
                await stop_tasks(cell)
            if cell.children:
                await stop_children(cell)
            if hook is not None:
                reason = await run_stop_hook(cell, hook, reason)
        if cell._kill_reason is not None and not reason.is_abnormal:
            # Killed while stopping: the stop did not finish in its budget.
            reason = ExitReason.killed(
                f"killed while stopping ({cell._kill_reason.describe()})",
                by=cell._kill_reason.by,
            )
    finally:
        finalize(cell, reason)


class CleanupScope:
    """A shielded scope bounded by ``deadline`` that a kill cancels (``cell.kill``)
    and a tighter hard deadline moves (``tighten_hard_deadline``). A class, not a
    generator: every actor's teardown enters one or two."""

    __slots__ = ("cell", "scope")

    def __init__(self, cell: ActorCell, deadline: float) -> None:
        self.cell = cell
        self.scope = trio.CancelScope(shield=True, deadline=deadline)

    def __enter__(self) -> trio.CancelScope:
        self.scope.__enter__()
        self.cell._cleanup_scope = self.scope
        return self.scope

    def __exit__(self, *exc: Any) -> bool:
        self.cell._cleanup_scope = None
        return self.scope.__exit__(*exc)


async def end_killed(cell: ActorCell, hook: Actor | None, reason: ExitReason) -> ExitReason:
    """A killed actor's whole cleanup, in one scope bounded by its hard deadline.

    Its tasks are cancelled, then its children, and both are waited for
    together before the stop hook runs; what is still there at the deadline is
    left behind (tasks, logged) or reported unkillable (children), as in the
    graceful path. One cleanup scope instead of one per phase: a mass kill
    enters hundreds of them, and each costs trio a cancel status and a deadline.
    """
    tasks = cell._tasks
    if tasks:
        for task in tasks:
            task.cancel()
    if cell.children:
        kill_children(cell)
    started = done = False
    with CleanupScope(cell, cell._hard_deadline):
        while cell._tasks or cell.children:
            await cell.wait_emptied()
        if hook is not None:
            started = True
            reason = await _call_hook(cell, hook, reason)
            done = True
    if cell._tasks:
        leave_tasks_behind(cell)
    report_unkillable_children(cell)
    if hook is not None and not started:
        # Out of time before it ran: it still runs (its synchronous part, at least).
        return await run_stop_hook(cell, hook, reason)
    if started and not done:
        return _hook_overran(cell)
    return reason


async def run_stop_hook(cell: ActorCell, actor: Actor, reason: ExitReason) -> ExitReason:
    with CleanupScope(cell, cleanup_deadline(cell)) as scope:
        reason = await _call_hook(cell, actor, reason)
    if scope.cancelled_caught:
        return _hook_overran(cell)
    return reason


async def _call_hook(cell: ActorCell, actor: Actor, reason: ExitReason) -> ExitReason:
    """``on_stop(reason)``; a hook that raises turns the exit into its crash."""
    try:
        await actor.on_stop(reason)
    except Exception as exc:
        crash = ExitReason.from_caught(exc, where=f"{cell.path} in on_stop")
        return attrs.evolve(crash, cause=reason)
    return reason


def _hook_overran(cell: ActorCell) -> ExitReason:
    by = cell._kill_reason.by if cell._kill_reason is not None else None
    return ExitReason.killed("stop hook did not finish within its budget", by=by)


async def stop_tasks(cell: ActorCell) -> None:
    """Cancel the actor's owned tasks and wait for them within its cleanup deadline."""
    tasks = cell._tasks
    assert tasks is not None
    for task in tasks:
        task.cancel()
    deadline = cleanup_deadline(cell)
    while cell._tasks:
        with CleanupScope(cell, deadline) as scope:
            await cell.wait_taskless()
        hard = cell._hard_deadline
        if not scope.cancelled_caught or hard in (math.inf, deadline):
            break
        deadline = hard  # cut short by a kill: wait on, until its hard deadline
    if cell._tasks:
        leave_tasks_behind(cell)


def leave_tasks_behind(cell: ActorCell) -> None:
    """Owned tasks still running after the cleanup deadline: log them, stop waiting."""
    tasks = cell._tasks
    assert tasks is not None
    names = ", ".join(sorted(task.name for task in tasks))
    log.error("actor %s: task(s) %s did not end when cancelled; left behind", cell.path, names)
    cell._tasks = None


async def stop_children(cell: ActorCell) -> None:
    """Stop children in ``child_stop_order`` (default: reverse start order); cancel them all
    if killed or out of time."""
    graceful = cell._kill_reason is None
    if graceful and cell.children:
        children = [c for c in _stop_order(cell, cell.children) if not c.unkillable]
        with CleanupScope(cell, cleanup_deadline(cell)) as scope:
            actor = cell.actor
            if actor is not None and actor.stop_children_concurrently:
                async with trio.open_nursery() as nursery:
                    for child in children:
                        nursery.start_soon(child.stop, ExitReason.shutdown(), None)
            else:
                for child in children:
                    await child.stop(ExitReason.shutdown(), None)
        if scope.cancelled_caught:
            graceful = False
            if cell._kill_reason is None:
                # Out of budget before the children were stopped.
                cell._kill_reason = ExitReason.killed(
                    "did not stop its children within its shutdown budget"
                )
    if not graceful and cell.children:
        cell._enter_hard_mode()
        kill_children(cell)
        with CleanupScope(cell, cell._hard_deadline):
            await cell.wait_childless()
        report_unkillable_children(cell)


def _stop_order(cell: ActorCell, children: dict[str, ActorCell]) -> list[ActorCell]:
    """The children in the order the actor's ``child_stop_order`` names them."""
    actor = cell.actor
    if actor is None or type(actor).child_stop_order is Actor.child_stop_order:
        return list(reversed(children.values()))
    try:
        names = actor.child_stop_order(list(children))
    except Exception:
        log.exception(
            "actor %s: child_stop_order failed; stopping in reverse start order", cell.path
        )
        return list(reversed(children.values()))
    ordered = [children[n] for n in dict.fromkeys(names) if n in children]
    if len(ordered) < len(children):
        named = set(map(id, ordered))
        ordered += [c for c in reversed(children.values()) if id(c) not in named]
    return ordered


def kill_children(cell: ActorCell) -> None:
    """Cancel every child, each with a hard deadline a margin before the parent's."""
    assert cell.children
    deadline = max(cell._hard_deadline - KILL_MARGIN * cell.system.kill_grace, trio.current_time())
    stop = ExitReason.cancelled(by=cell.path, detail="parent is stopping")
    for child in list(cell.children.values()):
        child.tighten_hard_deadline(deadline)
        child.kill(stop)


def report_unkillable_children(cell: ActorCell) -> None:
    """Children still running after the parent's hard deadline are reported unkillable."""
    for child in list((cell.children or {}).values()):
        if child.state is not State.EXITED:
            child.report_unkillable("did not exit in time after its parent cancelled it")


def finalize(cell: ActorCell, reason: ExitReason) -> None:
    """Settle an exit synchronously: replies, dead letters, monitors, links, parent."""
    cell.state = State.EXITED
    cell.exit_reason = reason
    system = cell.system
    system.registry.release(cell)
    for envelope in cell.mailbox.close():
        cell._on_drop(envelope, "recipient exited")
    if cell._current is not None and cell._current.reply is not None:
        cell._current.reply.set_error(ActorExited(cell.path, reason, handled=True))
    cell._current = None
    if cell._deferred:
        for slot in cell._deferred:
            slot.set_error(ActorExited(cell.path, reason, handled=True))
        cell._deferred = None
    start_failed = cell._start_slot is not None
    if cell._start_slot is not None:
        slot, cell._start_slot = cell._start_slot, None
        slot.set_error(StartFailed(cell.path, reason))
    if cell._timers is not None:
        cell._timers.cancel_all()  # liveness ticks are closures over their timers
        cell._timers = None
    cell._liveness = None
    if cell._monitors:
        for mref, watcher in cell._monitors.items():
            if watcher is not None:
                watcher.notify_down(mref, cell.ref, reason)
        cell._monitors = None
    if cell._links:
        for peer in cell._links:
            if peer._links is not None:
                peer._links.discard(cell)
            peer.on_link_exit(cell, reason)
        cell._links = None
    parent = cell.parent
    if parent is not None:
        parent.on_child_exit(cell, reason, signal=cell.linked_to_parent and not start_failed)
    else:
        system.on_top_level_exit(cell)
    if cell.unkillable:
        system.events.publish(UnkillableFinished(cell.path, reason))
    if system.events.has_subscribers:
        system.events.publish(ActorExitedEvent(cell.path, cell.actor_class, reason))
    if reason.kind in _LOUD_EXITS:
        log.warning("actor %s exited: %s", cell.path, reason.describe())
    elif log.isEnabledFor(logging.DEBUG):
        log.debug("actor %s exited: %s", cell.path, reason.describe())
    release(cell)
    if cell._exited_event is not None:
        cell._exited_event.set()
        cell._exited_event = None


def release(cell: ActorCell) -> None:
    """Let go of everything an exited actor no longer needs.

    A finished actor must be freed by reference counting as soon as nobody
    holds its ref: the cell, its ref, mailbox, context, actor instance,
    timers and their closures used to form cycles that only the cyclic
    collector freed (~6 objects per clean exit, ~17 per crash, measured with
    ``gc.DEBUG_SAVEALL``; now 0). In the daemon every finished turn and
    tool worker added to the young collections behind 25-80 ms pauses.
    What stays (path, exit reason, closed mailbox, system) answers refs
    to the dead actor: ``is_alive``, ``exit_reason``, dead-letter sends and
    ``ActorExited`` calls.
    """
    cell.actor = None
    cell._tasks = None
    cell._emptied = None
    cell._scope = None
    cell._cleanup_scope = None
    cell._current = None
    cell._notice = None
    cell._kill_reason = None
    cell.children = None
    # The mailbox's drop handler is a bound method of this cell (a cycle);
    # a closed mailbox only ever drops "recipient exited" letters.
    cell.mailbox.on_drop = ExitedDrop(cell.system, cell.path, cell.exit_reason)
    cell._ref = None


class ExitedDrop:
    """The drop handler of an exited actor's mailbox: refuse, without holding the cell."""

    __slots__ = ("path", "reason", "system")

    def __init__(self, system: ActorSystem, path: str, reason: ExitReason | None) -> None:
        self.system = system
        self.path = path
        self.reason = reason

    def __call__(self, envelope: Envelope, why: str) -> None:
        reply = envelope.reply
        if reply is not None:
            reply.set_error(ActorExited(self.path, self.reason or ExitReason.noproc()))
        sender = envelope.sender.path if envelope.sender is not None else None
        self.system.dead_letters.record(self.path, envelope.message, why, sender)
