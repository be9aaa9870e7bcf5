"""The actor system: root nursery, registry, dead letters, events, spawning."""

from __future__ import annotations

import itertools
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, TypeVarTuple

import trio

from ._actor import Actor
from ._cell import ActorCell
from ._checks import is_number
from ._deadletters import DeadLetters
from ._envelope import ReplySlot
from ._errors import NameTaken, NotRunning, StartFailed
from ._events import ActorStarted, EventBus
from ._exits import ExitReason
from ._introspect import recent_exits, snapshot
from ._mailbox import MailboxConfig
from ._oneshot import Task, TaskRef, as_task, prime, spawn_task_in
from ._ref import ActorRef
from ._registry import Registry
from ._teardown import State

log = logging.getLogger("actors")

R = TypeVar("R")
Ts = TypeVarTuple("Ts")


def _check_budget(field: str, value: float | None, *, positive: bool = False) -> None:
    if value is None:
        return
    bound = "> 0" if positive else ">= 0"
    if not is_number(value) or not (value > 0 if positive else value >= 0):
        raise ValueError(f"{field} must be a number of seconds {bound} or math.inf, got {value!r}")


class ActorSystem:
    """Owns every actor of one process: use ``open_system()`` to get one.

    ``kill_grace`` is how long a cancelled actor may take to exit before it is
    reported unkillable; ``call_timeout`` is the default ``call`` timeout.
    """

    def __init__(
        self, name: str, nursery: trio.Nursery, *, kill_grace: float, call_timeout: float
    ) -> None:
        _check_budget("kill_grace", kill_grace)
        _check_budget("call_timeout", call_timeout, positive=True)
        self.name = name
        self.kill_grace = kill_grace
        self.call_timeout = call_timeout
        self.events = EventBus()
        self.dead_letters = DeadLetters(self.events)
        self.registry = Registry()
        self.started_at = trio.current_time()
        self.running = True
        self._nursery = nursery
        self._top: dict[str, ActorCell] = {}
        self._ids = itertools.count(1)
        self._unkillable: dict[int, ActorCell] = {}
        self._recent_exits: deque[tuple[str, ExitReason, float]] = deque(maxlen=64)
        self._top_exit: trio.Event | None = None

    # -- spawning ------------------------------------------------------------------

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
        """Start a top-level actor (owned by the system) and return its ref.

        ``name`` is its path segment (unique among siblings; default
        ``<class>-<id>``), ``register`` a system-wide unique name, ``mailbox``
        and ``shutdown`` override the class defaults, ``start_timeout`` bounds
        ``on_start`` (default: the call timeout). Returns once ``on_start`` has
        finished; raises ``StartFailed`` if it raised or timed out.
        """
        return await self.spawn_in(
            None,
            actor,
            name=name,
            register=register,
            mailbox=mailbox,
            shutdown=shutdown,
            start_timeout=start_timeout,
            restarts=restarts,
        )

    async def spawn_in(
        self,
        parent: ActorCell | None,
        actor: Actor,
        *,
        name: str | None,
        register: str | None,
        mailbox: MailboxConfig | None,
        shutdown: float | None,
        start_timeout: float | None,
        restarts: int,
    ) -> ActorRef:
        """Spawn under ``parent`` (None: top level). Used by ``ActorContext.spawn``."""
        if not isinstance(actor, Actor):
            raise TypeError(f"spawn needs an Actor instance, got {type(actor).__name__}")
        if getattr(actor, "ctx", None) is not None:
            raise ValueError(f"{type(actor).__name__} instance was already spawned; make a new one")
        if not self.running:
            raise NotRunning(f"actor system {self.name} is shutting down")
        if parent is not None and parent.state not in (State.STARTING, State.RUNNING):
            raise NotRunning(f"actor {parent.path} is {parent.state.value}; it cannot spawn")
        _check_budget("shutdown", shutdown)
        _check_budget("start_timeout", start_timeout)
        # Nothing below checkpoints until the name is taken, so two spawns cannot
        # race for it.
        cell_id = next(self._ids)
        segment = name if name is not None else f"{type(actor).__name__.lower()}-{cell_id}"
        if not isinstance(segment, str) or not segment or "/" in segment:
            raise ValueError(f"actor name must be a non-empty str without '/', got {segment!r}")
        if parent is None:
            siblings = self._top
        else:
            if parent.children is None:
                parent.children = {}
            siblings = parent.children
        if segment in siblings:
            raise NameTaken(segment, siblings[segment].path)
        path = f"{parent.path if parent is not None else ''}/{segment}"
        if register is not None:
            self.registry.check_free(register)  # before the actor instance is used up
        cell = ActorCell(
            self,
            actor,
            parent,
            cell_id,
            path,
            mailbox if mailbox is not None else type(actor).mailbox,
            shutdown if shutdown is not None else type(actor).shutdown_budget,
            restarts,
        )
        if register is not None:
            self.registry.register(register, cell)
        self.registry.add_path(cell)
        siblings[segment] = cell
        if isinstance(actor, Task):
            prime(actor, cell)  # its body is the first message it handles
        has_start = type(actor).on_start is not Actor.on_start
        if has_start:
            cell._start_slot = slot = ReplySlot()
        # Every actor's task runs in the root nursery; the tree is the cells' (see
        # "How an actor maps onto trio" in docs/architecture.md).
        self._nursery.start_soon(cell.run, name=path)
        if self.events.has_subscribers:
            self.events.publish(ActorStarted(path, cell.actor_class, restarts))
        if not has_start:
            await trio.lowlevel.checkpoint()
            return cell.ref
        timeout = self.call_timeout if start_timeout is None else start_timeout
        try:
            started, _ = await slot.wait(trio.current_time() + timeout)
        except trio.Cancelled:
            cell.kill(
                ExitReason.cancelled(by=parent.path if parent else None, detail="spawner cancelled")
            )
            raise
        if not started:
            reason = await cell.kill_and_wait(
                ExitReason.killed(f"on_start did not finish within {timeout:g}s")
            )
            raise StartFailed(path, reason)
        return cell.ref

    async def spawn_task(
        self,
        body: Task[R] | Callable[[*Ts], Awaitable[R]],
        /,
        *args: *Ts,
        name: str | None = None,
        register: str | None = None,
        mailbox: MailboxConfig | None = None,
        shutdown: float | None = None,
    ) -> TaskRef[R]:
        """Run ``body`` (a ``Task``, or an async function with ``args``) as a top-level
        one-shot task; see ``ActorContext.spawn_task``."""
        return await spawn_task_in(
            self,
            None,
            as_task(body, args),
            name=name,
            register=register,
            mailbox=mailbox,
            shutdown=shutdown,
            link=True,
        )

    def start_owned_task(self, fn: Any, *args: Any, name: str) -> None:
        """Start an actor's owned task in the root nursery (for ``ActorCell.start_task``)."""
        self._nursery.start_soon(fn, *args, name=name)

    # -- look-up -------------------------------------------------------------------

    def whereis(self, name: str) -> ActorRef | None:
        """The live actor registered as ``name``."""
        return self.registry.whereis(name)

    def lookup(self, path: str) -> ActorRef | None:
        """The live actor at ``path``."""
        return self.registry.lookup(path)

    def top_level(self) -> list[ActorRef]:
        """Live top-level actors in start order."""
        return [c.ref for c in self._top.values()]

    # -- bookkeeping ---------------------------------------------------------------

    def detach_top_level(self, cell: ActorCell) -> None:
        """Free a top-level name (the actor exited, or was reported unkillable)."""
        if self._top.get(cell.ref.name) is cell:
            del self._top[cell.ref.name]
        if self._top_exit is not None:
            self._top_exit.set()
            self._top_exit = None

    def on_top_level_exit(self, cell: ActorCell) -> None:
        self.detach_top_level(cell)
        assert cell.exit_reason is not None
        self._recent_exits.append((cell.path, cell.exit_reason, trio.current_time()))

    def note_unkillable(self, cell: ActorCell) -> None:
        self._unkillable[cell.id] = cell

    def unkillable(self) -> list[ActorRef]:
        """Actors reported unkillable that have still not exited."""
        for key in [k for k, c in self._unkillable.items() if c.exit_reason is not None]:
            del self._unkillable[key]
        return [c.ref for c in self._unkillable.values()]

    # -- introspection -------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole tree as plain data (what ``hermes tree`` shows)."""
        now = trio.current_time()
        return {
            "system": self.name,
            "uptime": now - self.started_at,
            "actors": len(self.registry),
            "names": self.registry.names(),
            "dead_letters": {
                "total": self.dead_letters.total,
                "by_reason": dict(self.dead_letters.by_reason),
            },
            "unkillable": [snapshot(r._cell, now) for r in self.unkillable()],
            "children": [snapshot(c, now) for c in self._top.values()],
            "recent_exits": recent_exits(self._recent_exits, now),
        }

    # -- shutdown ------------------------------------------------------------------

    async def shutdown(self, timeout: float = math.inf) -> None:
        """Stop every top-level actor gracefully in reverse start order, within ``timeout``.

        Whatever is left at the deadline is cancelled; actors that ignore the
        cancellation are reported unkillable.
        """
        self.running = False
        with trio.move_on_after(timeout):
            for cell in reversed(list(self._top.values())):
                if cell.state is not State.EXITED and not cell.unkillable:
                    await cell.stop(ExitReason.shutdown(f"system {self.name} shutting down"), None)
        for cell in list(self._top.values()):
            if cell.state is not State.EXITED and not cell.unkillable:
                cell.kill(ExitReason.cancelled(by=self.name, detail="system shutdown deadline"))
        grace = self.kill_grace
        while self._top and any(not c.unkillable for c in self._top.values()):
            before = len(self._top)
            self._top_exit = event = trio.Event()
            with trio.move_on_after(grace):
                await event.wait()
            if len(self._top) == before:
                break
        for cell in list(self._top.values()):
            if cell.state is not State.EXITED:
                cell.report_unkillable(f"did not exit {grace:g}s after system shutdown")


@asynccontextmanager
async def open_system(
    name: str = "system",
    *,
    kill_grace: float = 1.0,
    call_timeout: float = 5.0,
    shutdown_timeout: float = 30.0,
) -> AsyncIterator[ActorSystem]:
    """Run an actor system for the duration of the block.

    On exit every actor is stopped gracefully in reverse start order (bounded by
    ``shutdown_timeout``, then cancelled). An error raised by the block comes out
    as itself, not wrapped in an exception group. Note that trio cannot abandon
    a task: an actor reported unkillable still delays the block's exit until it
    finally returns.
    """
    body_error: BaseException | None = None
    async with trio.open_nursery() as nursery:
        system = ActorSystem(name, nursery, kill_grace=kill_grace, call_timeout=call_timeout)
        try:
            yield system
        except BaseException as exc:
            body_error = exc
        finally:
            with trio.CancelScope(shield=True):
                await system.shutdown(shutdown_timeout)
            nursery.cancel_scope.cancel(reason=f"actor system {name} closed")
    if body_error is not None:
        raise body_error
