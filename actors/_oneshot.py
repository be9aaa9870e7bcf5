"""One-shot tasks: a function run as an actor whose return value or exception is its exit.

Elixir's ``Task`` and tractor's ``run_in_actor`` + ``wait_for_result``: the
work runs in an actor of its own (a path in the tree, killable by it,
monitorable, linkable), and its owner gets the result as a value::

    task = await ctx.spawn_task(fetch, url, name="fetch")
    page = await task.result()  # typed as fetch's return type

or, for work that needs its own context (children, trapped exits, beats),
as a ``Task[R]`` subclass whose ``run()`` is the body::

    class Review(Task[ReviewOutcome]):
        async def run(self) -> ReviewOutcome: ...

    outcome = await (await ctx.spawn_task(Review(job), name="reviewer")).result()

- The body runs in the actor's own scope, as the handler of the one message
  queued for it when it is spawned (its first: after ``on_start``, if it has
  one): a kill cancels it, and one that ignores the cancellation makes the
  actor unkillable, as any handler would.
- Returning a value stops the actor ``normal``; raising crashes it (``error``,
  the exception in the reason); a stop (at once, not after the shutdown
  budget: a task has nothing to finish) or a kill cancels the body, and the
  exit is then the stop's or the kill's (``shutdown``, ``cancelled``...).
- ``await task.result()`` waits for the actor's exit (its children are gone
  by then) and returns the value, raises ``TaskFailed`` carrying the
  exception when it crashed, or ``TaskCancelled`` when it was stopped or
  killed before the body returned. A body that had returned keeps its value
  even if a kill came before the actor finished exiting (the reply was
  already sent, as an Erlang task's reply message would be). A body that
  settles after a kill (in a shielded step) may read why from
  ``ctx.kill_reason`` and return a value all the same: a kill is
  level-triggered, so the actor still exits with the kill's reason, and
  ``result()`` gives the value.
- Spawned from an actor it is a child linked to its owner (``link=False``
  leaves the owner alive when it crashes: it learns it from ``result()``);
  its owner stopping stops it. ``task_spec`` in ``supervisors`` makes it a
  supervised child.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, TypeVarTuple, cast

import trio

from ._actor import Actor
from ._envelope import Envelope
from ._errors import TaskCancelled, TaskFailed
from ._exits import ExitKind, ExitReason
from ._ref import ActorRef

if TYPE_CHECKING:
    from ._cell import ActorCell
    from ._mailbox import MailboxConfig
    from ._system import ActorSystem

R = TypeVar("R")
V = TypeVar("V")
Ts = TypeVarTuple("Ts")


class _Outcome:
    """What the body gave: set once, read by ``TaskRef.result`` (holds no actor)."""

    __slots__ = ("error", "returned", "unlinked", "value")

    def __init__(self, unlinked: bool = False) -> None:
        self.unlinked = unlinked
        """Spawned with ``link=False``: its exit is no link signal to its owner."""
        self.returned = False
        self.value: Any = None
        self.error: BaseException | None = None


class RunTask:
    """A task's first message, queued when it is spawned: run the body."""

    __slots__ = ()


_RUN = RunTask()


class Task(Actor, Generic[R]):
    """A one-shot actor: override ``run``; what it returns or raises is the exit.

    ``self.ctx`` is set as for any actor; class attributes (``trap_exits``,
    ``mailbox``, ``shutdown_budget``) mean what they mean on ``Actor``. The body
    runs as the actor's handler of the one message queued for it at its spawn,
    so it is the actor's own work: cancelled by a kill, and an actor that does not end
    when cancelled is reported unkillable, as any handler would be. A task
    handles no other message: notices that reach it while it runs (``Exit``
    of its children when it traps exits) are dropped after it. Spawn it with
    ``ctx.spawn_task(task, name=...)`` (or ``system.spawn_task``); its
    ``on_start``, if it has one, runs before the body.
    """

    _outcome: _Outcome
    _scope: trio.CancelScope | None = None

    @staticmethod
    def of(fn: Callable[[*Ts], Awaitable[V]], *args: *Ts) -> Task[V]:
        """A ``Task`` that runs ``fn(*args)`` (a new one per call: an actor instance runs once)."""
        return as_task(fn, args)

    async def run(self) -> R:
        """The task's body."""
        raise NotImplementedError(f"{type(self).__qualname__} must override run()")

    def on_stop_requested(self, reason: ExitReason) -> None:
        """A graceful stop cancels the body now (an Erlang task, not trapping exits, dies
        of the ``shutdown`` signal at once); the exit is then the stop's reason."""
        if self._scope is not None:
            self._scope.cancel(reason=reason.describe())

    async def receive(self, message: object) -> None:
        if message is not _RUN or self._scope is not None:
            return  # a notice after the body: nothing is listening
        outcome = self._outcome
        with trio.CancelScope() as self._scope:
            try:
                value = await self.run()
            except Exception as exc:
                outcome.error = exc  # and the actor crashes with it
                raise
            outcome.value, outcome.returned = value, True
        self.ctx.stop(ExitReason.normal())


def prime(task: Task[Any], cell: ActorCell) -> None:
    """Queue a task's body as the first message of its new cell (``ActorSystem.spawn_in``)."""
    if not hasattr(task, "_outcome"):  # spawned by a supervisor: no one reads the value
        task._outcome = _Outcome()
    if task._outcome.unlinked:
        cell.linked_to_parent = False
    cell.mailbox.put_nowait(Envelope(_RUN, cell.ref))


class _FunctionTask(Task[Any]):
    """``fn(*args)`` as a task."""

    def __init__(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args

    async def run(self) -> Any:
        return await self.fn(*self.args)


class TaskRef(ActorRef, Generic[R]):
    """The ref of a one-shot task: an ``ActorRef`` (monitor, link, stop, kill it) whose
    ``result()`` gives the body's value."""

    __slots__ = ("_outcome",)

    def __init__(self, cell: ActorCell, outcome: _Outcome) -> None:
        super().__init__(cell)
        self._outcome = outcome

    @property
    def done(self) -> bool:
        """True once the task's actor has exited."""
        return not self.is_alive

    async def result(self) -> R:
        """Wait for the task's exit; its value, or ``TaskFailed`` / ``TaskCancelled``.

        Waits as long as the task runs (bound it with ``trio.fail_after``, or kill
        the task); a task reported unkillable is waited for until it ends.
        """
        reason = await self.wait_exited()
        outcome = self._outcome
        if outcome.returned:
            return cast("R", outcome.value)
        if outcome.error is not None or reason.kind is ExitKind.ERROR:
            error = outcome.error if outcome.error is not None else reason.error
            raise TaskFailed(self.path, reason, error) from error
        raise TaskCancelled(self.path, reason)

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "dead"
        return f"<TaskRef {self.path} #{self.id} {state}>"


def as_task(body: Task[R] | Callable[..., Awaitable[R]], args: tuple[Any, ...]) -> Task[R]:
    """The ``Task`` actor for a ``spawn_task`` body (a ``Task``, or a function and its args)."""
    if isinstance(body, Task):
        if args:
            raise TypeError(
                f"spawn_task of a Task instance takes no arguments, got {len(args)}; "
                "pass them to its constructor"
            )
        return body
    if isinstance(body, Actor) or not callable(body):
        raise TypeError(
            "spawn_task needs a Task instance or an async function, "
            f"got {type(body).__name__}: {body!r}"
        )
    return cast("Task[R]", _FunctionTask(body, args))


async def spawn_task_in(
    system: ActorSystem,
    parent: ActorCell | None,
    task: Task[R],
    *,
    name: str | None,
    register: str | None,
    mailbox: MailboxConfig | None,
    shutdown: float | None,
    link: bool,
) -> TaskRef[R]:
    """Spawn ``task`` under ``parent`` (None: top level) and start its body."""
    if hasattr(task, "_outcome"):  # checked before its first spawn's outcome is replaced
        raise ValueError(f"{type(task).__name__} instance was already spawned; make a new one")
    outcome = _Outcome(unlinked=not link)
    task._outcome = outcome
    ref = await system.spawn_in(
        parent,
        task,
        name=name,
        register=register,
        mailbox=mailbox,
        shutdown=shutdown,
        start_timeout=None,
        restarts=0,
    )
    return TaskRef(ref._cell, outcome)
