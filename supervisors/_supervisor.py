"""``Supervisor``: an actor that starts, watches and restarts children (OTP semantics).

The supervisor traps exits: a child's exit arrives as an ``Exit`` message and
the child's restart type, the strategy and the restart intensity decide what
happens. Children start one by one in spec order and stop in reverse spec
order, each per its ``shutdown``; a restarted child keeps its place. A group
restart (one_for_all, rest_for_one) is one generation: if a member fails to
start, the members already restarted are stopped again and the whole group is
started again. Exceeding the intensity makes the supervisor give up (OTP): it
publishes ``Escalated`` with the failure that tripped it, stops its children
in reverse order and exits ``shutdown``; its own parent's policy applies next.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import attrs
import trio

from actors import (
    Actor,
    ActorRef,
    Exit,
    ExitKind,
    ExitReason,
    MailboxConfig,
    NotRunning,
    Stale,
    StartFailed,
)

from . import _admin as admin
from ._admin import ChildCounts, ChildInfo, Failure
from ._errors import (
    AlreadyPresent,
    AlreadyStarted,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    ChildStartFailed,
    RestartIntensityExceeded,
    SpecError,
)
from ._events import (
    AutoShutdownTriggered,
    ChildExited,
    ChildStarted,
    Escalated,
    RestartFailed,
    StaleDetected,
    publish,
)
from ._events import (
    ChildRestarting as ChildRestartingEvent,
)
from ._handle import ChildHandle, ChildState
from ._intensity import GAVE_UP, RestartWindow
from ._spec import IGNORE, AutoShutdown, ChildSpec, ChildType, Restart, Strategy, SupervisorFlags

log = logging.getLogger("supervisors")

GONE_IDS = 10_000
"""Ids of forgotten children remembered, so that ``terminate_child`` of one is ``ok``."""


@attrs.define(slots=True, eq=False)
class _Child:
    spec: ChildSpec
    handle: ChildHandle
    ref: ActorRef | None = None
    restarts: int = 0
    attempt: int = 0
    """Consecutive restarts, for backoff; reset once an incarnation runs quietly."""
    running_since: float | None = None
    generation: int = 0
    """Which scheduled restart this child waits for (stale retries are ignored)."""


@attrs.frozen(slots=True)
class _Retry:
    """Self-message: try again to start these children (in order)."""

    ids: tuple[str, ...]
    generation: int


class Supervisor(Actor):
    """Supervises a list of child specs with a strategy and a restart intensity.

    ``Supervisor(children, flags)`` or ``Supervisor(children, strategy=...,
    intensity=..., period=...)``. Invalid specs or flags raise ``SpecError``
    here, before anything starts.
    """

    trap_exits = True
    shutdown_budget = math.inf
    mailbox = MailboxConfig(capacity=10_000)

    def __init__(
        self,
        children: Sequence[ChildSpec] = (),
        flags: SupervisorFlags | None = None,
        **flag_fields: Any,
    ) -> None:
        if flags is not None and flag_fields:
            raise SpecError(f"pass flags or flag fields, not both (got {sorted(flag_fields)})")
        if flags is not None and not isinstance(flags, SupervisorFlags):
            raise SpecError(f"invalid supervisor flags: {flags!r} (expected SupervisorFlags)")
        if isinstance(children, ChildSpec) or not isinstance(children, Sequence):
            raise SpecError(f"invalid children: {children!r} (expected a sequence of ChildSpec)")
        try:
            self.flags = flags if flags is not None else SupervisorFlags(**flag_fields)
        except TypeError as exc:
            raise SpecError(f"invalid supervisor flags: {exc}") from None
        self._generation = 0
        seen: set[str] = set()
        for spec in children:
            if not isinstance(spec, ChildSpec):
                raise SpecError(f"invalid child spec: {spec!r} (expected a ChildSpec)")
            if spec.id in seen:
                raise SpecError(f"invalid child spec id: {spec.id!r} (duplicate)")
            seen.add(spec.id)
            self._check_significant(spec)
        self._initial = list(children)
        self._children: dict[str, _Child] = {}
        """The children in spec order (a restart keeps a child's place)."""
        self._by_ref: dict[ActorRef, _Child] = {}
        self._gone: OrderedDict[str, None] = OrderedDict()
        """Ids of children forgotten lately (at most ``GONE_IDS``)."""
        self._window = RestartWindow(self.flags.intensity, self.flags.period)
        self._giving_up = False

    def _check_significant(self, spec: ChildSpec) -> None:
        if spec.significant and self.flags.auto_shutdown is AutoShutdown.NEVER:
            raise SpecError(
                f"invalid child spec significant: True for {spec.id!r} "
                "(expected False when auto_shutdown is never)"
            )

    # -- lifecycle -------------------------------------------------------------------

    async def on_start(self) -> None:
        for spec in self._initial:
            child = self._add(spec)
            try:
                started = await self._start(child)
            except StartFailed as exc:
                # The runtime stops the children already started, in reverse spec order.
                raise ChildStartFailed(spec.id, exc.reason) from None
            if not started and spec.restart is Restart.TEMPORARY:
                self._forget(child)

    def child_stop_order(self, names: list[str]) -> list[str]:
        """Reverse spec order, whatever restarted when (OTP)."""
        return [c.spec.id for c in reversed(self._children.values()) if c.ref is not None]

    async def on_stop(self, reason: ExitReason) -> None:
        # The runtime has stopped the children (reverse spec order, each per its shutdown).
        for child in reversed(list(self._children.values())):  # the order they stopped in
            ref = self._detach(child)
            if ref is not None and ref.exit_reason is not None:
                exited = ChildExited(self.ctx.path, child.spec.id, ref.path, ref.exit_reason)
                publish(self.ctx, exited)
            child.handle.stopped()

    # -- messages --------------------------------------------------------------------

    async def receive(self, message: Any) -> Any:
        kind = type(message)
        if self._giving_up:
            # Only notices queued before the stop reach here: nothing is restarted now.
            if kind in _ADMIN:
                return Failure(NotRunning(f"supervisor {self.ctx.path} is giving up"))
            return None
        try:
            if kind is Exit:
                await self._on_exit(message.actor, message.reason)
            elif kind is Stale:
                await self._on_stale(message)
            elif kind is _Retry:
                await self._start_group(message.ids, message.generation)
            elif kind in _ADMIN:
                return await getattr(self, _ADMIN[kind])(message)
            else:
                self.ctx.system.dead_letters.record(
                    self.ctx.path, message, "supervisor does not handle this message", None
                )
        except RestartIntensityExceeded as exc:
            self._give_up(exc)
        return None

    def _give_up(self, error: RestartIntensityExceeded) -> None:
        """Stop (children in reverse spec order, by the runtime) and exit ``shutdown``."""
        self._giving_up = True
        self.ctx.stop(
            ExitReason.shutdown(
                f"{GAVE_UP}: more than {error.intensity} restart(s) in {error.period:g}s"
            )
        )

    # -- starting --------------------------------------------------------------------

    def _add(self, spec: ChildSpec) -> _Child:
        handle = ChildHandle(
            spec.id,
            f"{self.ctx.path}/{spec.id}",
            spec.stash_capacity,
            self.ctx.system.dead_letters,
            self.ctx.system.call_timeout,
        )
        child = _Child(spec, handle)
        self._children[spec.id] = child
        self._gone.pop(spec.id, None)
        return child

    def _forget(self, child: _Child) -> None:
        if self._children.get(child.spec.id) is child:
            del self._children[child.spec.id]
            self._gone[child.spec.id] = None
            if len(self._gone) > GONE_IDS:
                self._gone.popitem(last=False)

    async def _start(self, child: _Child) -> bool:
        """Start one child; False if its factory returned IGNORE. Raises ``StartFailed``."""
        spec = child.spec
        path = child.handle.path
        try:
            actor = spec.make()
        except Exception as exc:
            reason = ExitReason.from_exception(exc, f"{path} start factory")
            raise StartFailed(path, reason) from None
        if actor is IGNORE:
            child.handle.stopped()
            return False
        if not isinstance(actor, Actor):
            raise StartFailed(
                path,
                ExitReason(ExitKind.ERROR, f"start factory returned {actor!r}, not an Actor"),
            )
        ref = await self.ctx.spawn(
            actor,
            name=spec.id,
            mailbox=spec.mailbox,
            shutdown=spec.shutdown,
            restarts=child.restarts,
        )
        child.ref = ref
        child.running_since = trio.current_time()
        self._by_ref[ref] = child
        child.handle.bind(ref)
        if spec.liveness is not None:
            self.ctx.watch_liveness(ref, spec.liveness)
        publish(self.ctx, ChildStarted(self.ctx.path, spec.id, ref.path, child.restarts))
        return True

    # -- exits and restarts ----------------------------------------------------------

    def _detach(self, child: _Child) -> ActorRef | None:
        ref, child.ref = child.ref, None
        if child.running_since is not None:
            backoff = self.flags.backoff
            ran_for = trio.current_time() - child.running_since
            if backoff is not None and ran_for > backoff.quiet_period:
                child.attempt = 0  # it ran quietly: the next failure starts over
            child.running_since = None
        if ref is not None:
            self._by_ref.pop(ref, None)
            self.ctx.unwatch_liveness(ref)
        return ref

    async def _stop_child(self, child: _Child) -> None:
        """Stop a running child per its shutdown spec (unlinked: no Exit comes back)."""
        ref = self._detach(child)
        if ref is not None:
            reason = await ref.stop(timeout=child.spec.shutdown)
            publish(self.ctx, ChildExited(self.ctx.path, child.spec.id, ref.path, reason))

    async def _on_exit(self, ref: ActorRef, reason: ExitReason) -> None:
        child = self._by_ref.get(ref)
        if child is None:
            return  # an old incarnation, or not a child of ours
        self._detach(child)
        level = logging.WARNING if reason.is_abnormal else logging.INFO
        publish(self.ctx, ChildExited(self.ctx.path, child.spec.id, ref.path, reason), level)
        await self._after_exit(child, reason)

    async def _on_stale(self, stale: Stale) -> None:
        child = self._by_ref.get(stale.actor)
        if child is None:
            return
        publish(
            self.ctx,
            StaleDetected(
                self.ctx.path,
                child.spec.id,
                stale.actor.path,
                stale.heartbeat_age,
                stale.last_activity,
            ),
            logging.WARNING,
        )
        reason = ExitReason.stale(stale.heartbeat_age, by=self.ctx.path)
        self._detach(child)
        await stale.actor.kill(reason)  # unkillable children are reported by the runtime
        publish(self.ctx, ChildExited(self.ctx.path, child.spec.id, stale.actor.path, reason))
        await self._after_exit(child, reason)

    async def _after_exit(self, child: _Child, reason: ExitReason) -> None:
        spec = child.spec
        if _restarted_after(spec, reason):
            await self._restart(child, reason)
            return
        child.handle.stopped()
        if spec.restart is Restart.TEMPORARY:
            self._forget(child)
        self._after_not_restarted(child)

    def _after_not_restarted(self, child: _Child) -> None:
        """Auto-shutdown: only exits the child made on its own, never admin or strategy stops."""
        if not child.spec.significant:
            return
        mode = self.flags.auto_shutdown
        if mode is AutoShutdown.ALL_SIGNIFICANT and any(
            c.spec.significant and c.handle.state is not ChildState.STOPPED
            for c in self._children.values()
        ):
            return
        publish(self.ctx, AutoShutdownTriggered(self.ctx.path, child.spec.id))
        self.ctx.stop(ExitReason.shutdown(f"auto_shutdown: significant child {child.spec.id!r}"))

    def _count_restart(self, child_id: str, reason: ExitReason) -> None:
        """Count one restart (or attempt); over the intensity, publish ``Escalated`` and
        raise ``RestartIntensityExceeded`` (``receive`` then gives up)."""
        if self._window.record(trio.current_time(), child_id, reason):
            history = list(self._window.history)
            flags = self.flags
            error = RestartIntensityExceeded(self.ctx.path, flags.intensity, flags.period, history)
            event = Escalated(
                self.ctx.path,
                str(error),
                tuple(history),
                child_id,
                reason,
                flags.intensity,
                flags.period,
            )
            publish(self.ctx, event, logging.ERROR)
            raise error

    def _group(self, child: _Child) -> list[_Child]:
        """The children to restart with ``child``, in spec order."""
        strategy = self.flags.strategy
        if strategy is Strategy.ONE_FOR_ONE:
            return [child]
        order = list(self._children.values())
        if strategy is Strategy.ONE_FOR_ALL:
            return order
        return order[order.index(child) :]

    async def _restart(self, child: _Child, reason: ExitReason) -> None:
        self._count_restart(child.spec.id, reason)
        group = self._group(child)
        for other in reversed(group):
            if other is not child:
                await self._stop_child(other)
        restart: list[_Child] = []
        for member in group:
            if member is not child and member.spec.restart is Restart.TEMPORARY:
                member.handle.stopped()  # temporary bystanders are never restarted
                self._forget(member)
            else:
                restart.append(member)
        delay = self._backoff_delay(child)
        publish(self.ctx, ChildRestartingEvent(self.ctx.path, child.spec.id, child.attempt, delay))
        await self._schedule(restart, delay)

    async def _schedule(self, members: list[_Child], delay: float, defer: bool = False) -> None:
        """Make ``members`` one new generation, started in order now or after ``delay``
        (always through a self-message with ``defer``)."""
        self._generation += 1
        generation = self._generation
        for member in members:
            member.handle.restarting()
            member.generation = generation
        ids = tuple(m.spec.id for m in members)
        if delay > 0 or defer:
            self.ctx.send_after(delay, _Retry(ids, generation))
        else:
            await self._start_group(ids, generation)

    def _backoff_delay(self, child: _Child) -> float:
        """Delay before the next restart of ``child``; counts the attempt."""
        backoff = self.flags.backoff
        if backoff is None:
            return 0.0
        delay = backoff.delay(child.attempt)
        child.attempt += 1
        return delay

    async def _start_group(self, ids: tuple[str, ...], generation: int) -> None:
        """Start, in order, the children of ``ids`` still waiting for this generation.

        A start that fails is counted as a restart; the members this generation
        already started are stopped again in reverse order and the whole group
        is retried as a new generation through a self-message (after the failed
        child's backoff), so the supervisor stays responsive in between. A
        member that exited while later ones were starting counts the same way.
        """
        started: list[_Child] = []
        for child_id in ids:
            child = self._children.get(child_id)
            if (
                child is None
                or child.handle.state is not ChildState.RESTARTING
                or child.generation != generation
            ):
                continue  # deleted, terminated, or rescheduled by a newer restart
            child.restarts += 1
            try:
                ok = await self._start(child)
            except StartFailed as exc:
                publish(
                    self.ctx,
                    RestartFailed(self.ctx.path, child_id, exc.reason, child.restarts),
                    logging.WARNING,
                )
                self._count_restart(child_id, exc.reason)
                await self._retry_generation(ids, generation, child)
                return
            if ok:
                started.append(child)
            else:
                self._after_ignored(child)
        if len(started) > 1:
            for child in started[:-1]:
                ref = child.ref
                reason = ref.exit_reason if ref is not None else None
                if reason is not None and _restarted_after(child.spec, reason):
                    # It exited while its group was being restarted: one generation.
                    self._count_restart(child.spec.id, reason)
                    await self._retry_generation(ids, generation, child)
                    return

    async def _retry_generation(
        self, ids: tuple[str, ...], generation: int, failed: _Child
    ) -> None:
        members = [
            c
            for c in map(self._children.get, ids)
            if c is not None
            and c.generation == generation
            and c.handle.state is not ChildState.STOPPED
        ]
        for member in reversed(members):
            if member.ref is not None:
                await self._stop_child(member)  # started in this generation: stop again
        await self._schedule(members, self._backoff_delay(failed), defer=True)

    def _after_ignored(self, child: _Child) -> None:
        """A restart's factory returned IGNORE: the child stays stopped (its spec is kept)."""

    # -- administration --------------------------------------------------------------

    def _find(self, key: str | ActorRef | ChildHandle) -> _Child | None:
        if isinstance(key, ActorRef):
            return self._by_ref.get(key)
        if isinstance(key, ChildHandle):
            child = self._children.get(key.id)
            return child if child is not None and child.handle is key else None
        return self._children.get(key)

    def _was_child(self, key: str | ActorRef | ChildHandle) -> bool:
        """True if ``key`` names a child of this supervisor that is gone."""
        if isinstance(key, ActorRef):
            return not key.is_alive and key.path.rpartition("/")[0] == self.ctx.path
        if isinstance(key, ChildHandle):
            return key.path.rpartition("/")[0] == self.ctx.path
        return key in self._gone

    async def _admin_start(self, request: admin.StartChild) -> Any:
        spec = request.spec
        if spec is None:
            return Failure(SpecError("start_child needs a ChildSpec for a static supervisor"))
        existing = self._children.get(spec.id)
        if existing is not None:
            if existing.ref is not None:
                return Failure(AlreadyStarted(spec.id, existing.ref))
            return Failure(AlreadyPresent(spec.id))
        try:
            self._check_significant(spec)
        except SpecError as exc:
            return Failure(exc)
        return await self._start_new(spec)

    async def _start_new(self, spec: ChildSpec) -> Any:
        child = self._add(spec)
        try:
            started = await self._start(child)
        except StartFailed as exc:
            self._forget(child)
            return Failure(exc)
        if not started:
            if spec.restart is Restart.TEMPORARY:
                self._forget(child)
            return None
        return child.handle

    async def _admin_terminate(self, request: admin.TerminateChild) -> Any:
        child = self._find(request.child)
        if child is None:
            if self._was_child(request.child):
                return None  # already gone: terminate_child is idempotent
            return Failure(ChildNotFound(request.child))
        await self._stop_child(child)
        child.handle.stopped()  # also ends a pending restart loop
        if child.spec.restart is Restart.TEMPORARY:
            self._forget(child)
        self._after_terminate(child)
        return None

    def _after_terminate(self, child: _Child) -> None:
        """Hook for subclasses (the dynamic supervisor admits queued starts)."""

    def _stopped_child(self, child_id: str) -> _Child | Failure:
        """The child ``child_id`` if it is stopped, else the error restart/delete return."""
        child = self._children.get(child_id)
        if child is None:
            return Failure(ChildNotFound(child_id))
        if child.handle.state is ChildState.RUNNING:
            return Failure(ChildRunning(child_id))
        if child.handle.state is ChildState.RESTARTING:
            return Failure(ChildRestarting(child_id))
        return child

    async def _admin_restart(self, request: admin.RestartChild) -> Any:
        child = self._stopped_child(request.child_id)
        if isinstance(child, Failure):
            return child
        try:
            started = await self._start(child)
        except StartFailed as exc:
            return Failure(exc)
        return child.handle if started else None

    async def _admin_delete(self, request: admin.DeleteChild) -> Any:
        child = self._stopped_child(request.child_id)
        if isinstance(child, Failure):
            return child
        self._forget(child)
        return None

    async def _admin_which(self, _: admin.WhichChildren) -> list[ChildInfo]:
        return [
            ChildInfo(c.spec.id, c.ref, c.handle.state.value, c.spec.type, c.restarts)
            for c in self._children.values()
        ]

    async def _admin_count(self, _: admin.CountChildren) -> ChildCounts:
        children = list(self._children.values())
        supervisors = sum(1 for c in children if c.spec.type is ChildType.SUPERVISOR)
        return ChildCounts(
            specs=self._spec_count(),
            active=sum(1 for c in children if c.ref is not None),
            supervisors=supervisors,
            workers=len(children) - supervisors,
        )

    def _spec_count(self) -> int:
        return len(self._children)

    async def _admin_get_spec(self, request: admin.GetChildSpec) -> Any:
        child = self._find(request.child)
        return child.spec if child is not None else Failure(ChildNotFound(request.child))

    async def _admin_get_child(self, request: admin.GetChild) -> Any:
        child = self._children.get(request.child_id)
        return child.handle if child is not None else Failure(ChildNotFound(request.child_id))


def _restarted_after(spec: ChildSpec, reason: ExitReason) -> bool:
    """OTP's restart types: permanent always, transient after an abnormal exit."""
    return spec.restart is Restart.PERMANENT or (
        spec.restart is Restart.TRANSIENT and reason.is_abnormal
    )


_ADMIN: dict[type, str] = {
    admin.StartChild: "_admin_start",
    admin.TerminateChild: "_admin_terminate",
    admin.RestartChild: "_admin_restart",
    admin.DeleteChild: "_admin_delete",
    admin.WhichChildren: "_admin_which",
    admin.CountChildren: "_admin_count",
    admin.GetChildSpec: "_admin_get_spec",
    admin.GetChild: "_admin_get_child",
}
