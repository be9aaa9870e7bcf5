"""Run a whole supervision tree as an application, with OTP-style signal handling.

- First SIGINT or SIGTERM: the phased shutdown (``_shutdown.py``): the
  application's own phases in order, each within its timeout, then
  ``stop-runtime``, which stops the whole tree (children in reverse spec order,
  each per its shutdown spec) within ``shutdown_timeout``. The report of what
  ran over is logged and handed to ``on_report``.
- Another SIGTERM while stopping: ignored (OTP's ``init:stop`` runs once); the
  phases' timeouts bound the shutdown.
- Another SIGINT while stopping (Ctrl-C again): forced; the root is killed at once.
- SIGHUP: the ``on_reload`` hook runs; nothing is restarted.

The exit code tells how it ended (``ExitCode``): a root supervisor that gave
up after too many restarts exits ``shutdown`` (OTP) but the application failed.
"""

from __future__ import annotations

import enum
import inspect
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio

from actors import Actor, ActorRef, ActorSystem, ExitKind, ExitReason, StartFailed, open_system

from ._intensity import gave_up
from ._shutdown import Phase, PhaseOutcome, RanOver, ShutdownReport, Step, run_phases

log = logging.getLogger("supervisors.application")

Hook = Callable[[ActorSystem, ActorRef], Awaitable[None] | None]
PhasesHook = Callable[[ActorSystem, ActorRef], Sequence[Phase]]
"""Called when the shutdown starts: the application's phases, before ``stop-runtime``."""
ReportHook = Callable[[ShutdownReport], None]

RUNTIME_PHASE = "stop-runtime"
"""The last phase, added by ``run_application``: the tree stops in reverse spec order."""


class ExitCode(enum.IntEnum):
    OK = 0
    """The root stopped normally, or gracefully after a signal."""
    FAILED = 1
    """The root failed to start, exited abnormally, or gave up after too many restarts."""
    FORCED = 2
    """A second SIGINT, or the shutdown deadline, cut the graceful shutdown short."""


async def _call_hook(hook: Hook | None, system: ActorSystem, root: ActorRef, what: str) -> None:
    if hook is None:
        return
    try:
        with trio.fail_after(system.call_timeout):
            result = hook(system, root)
            if inspect.isawaitable(result):
                await result
    except Exception:
        log.exception("%s hook failed", what)


def _code_for(reason: ExitReason) -> ExitCode:
    if gave_up(reason):
        return ExitCode.FAILED
    if reason.kind in (ExitKind.NORMAL, ExitKind.SHUTDOWN):
        return ExitCode.OK
    if reason.kind in (ExitKind.KILLED, ExitKind.UNKILLABLE):
        return ExitCode.FORCED
    return ExitCode.FAILED


async def run_application(
    root: Callable[[], Actor],
    *,
    name: str = "app",
    shutdown_timeout: float = 30.0,
    kill_grace: float = 1.0,
    on_started: Hook | None = None,
    on_reload: Hook | None = None,
    phases: PhasesHook | None = None,
    on_report: ReportHook | None = None,
) -> ExitCode:
    """Start ``root()`` as the top of the tree and run until it exits or a signal stops it.

    ``phases`` declares the application's shutdown phases (called at the first
    signal, so it can look up the actors running then); ``on_report`` gets the
    ``ShutdownReport``. Must run in the main thread (signal handling).
    """
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    with trio.open_signal_receiver(*sigs) as signals:
        async with open_system(
            name, kill_grace=kill_grace, shutdown_timeout=shutdown_timeout
        ) as system:
            try:
                root_ref = await system.spawn(root(), name=name, shutdown=shutdown_timeout)
            except StartFailed as exc:
                log.error("application %s failed to start: %s", name, exc)
                return ExitCode.FAILED
            await _call_hook(on_started, system, root_ref, "on_started")
            app = _Shutdown(system, root_ref, shutdown_timeout, kill_grace, phases, on_report)
            return await _serve(app, signals, on_reload)
    raise AssertionError("unreachable")  # pragma: no cover


class _Shutdown:
    """The phased shutdown of one application: runs once, whatever signals arrive."""

    def __init__(
        self,
        system: ActorSystem,
        root: ActorRef,
        timeout: float,
        grace: float,
        phases: PhasesHook | None,
        on_report: ReportHook | None,
    ) -> None:
        self.system = system
        self.root = root
        self.timeout = timeout
        self.grace = grace
        self.phases = phases
        self.on_report = on_report
        self.killed = False
        """The tree had to be killed (``stop-runtime`` ran past its timeout)."""

    def declared(self) -> list[Phase]:
        phases: list[Phase] = []
        if self.phases is not None:
            try:
                phases = list(self.phases(self.system, self.root))
            except Exception:
                log.exception("the shutdown phases could not be declared; stopping the tree only")
        runtime = Step(self.root.name, self._stop_root)
        # The root's stop is bounded by its own timeout, then a kill within the grace.
        phases.append(Phase(RUNTIME_PHASE, [runtime], self.timeout + 2 * self.grace + 1.0))
        return phases

    async def _stop_root(self) -> None:
        reason = await self.root.stop(
            ExitReason.shutdown("signal: graceful shutdown"), timeout=self.timeout
        )
        if reason.kind in (ExitKind.KILLED, ExitKind.UNKILLABLE):
            self.killed = True
            raise RanOver(f"the tree did not stop within {self.timeout:g}s: {reason.describe()}")

    async def run(self, nursery: trio.Nursery) -> None:
        report = await run_phases(self.declared(), nursery, grace=self.grace, progress=_progress)
        if report.clean:
            log.info("%s", report.summary())
        else:
            log.warning("%s", report.summary())
        if self.on_report is not None:
            try:
                self.on_report(report)
            except Exception:
                log.exception("on_report hook failed")


def _progress(phase: PhaseOutcome) -> None:
    log.info("shutdown phase %s done in %.2fs", phase.name, phase.elapsed)


async def _serve(app: _Shutdown, signals: Any, on_reload: Hook | None) -> ExitCode:
    root = app.root
    forced = False
    stopping = False
    async with trio.open_nursery() as nursery:

        async def watch_root() -> None:
            await root.wait_exited()
            if not stopping:
                nursery.cancel_scope.cancel(reason="application root exited")

        async def shutdown() -> None:
            await app.run(nursery)
            nursery.cancel_scope.cancel(reason="application shut down")

        nursery.start_soon(watch_root)
        async for signum in signals:
            signame = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                log.info("SIGHUP: reloading")
                await _call_hook(on_reload, app.system, root, "on_reload")
            elif not stopping:
                stopping = True
                log.warning(
                    "%s: graceful shutdown, in phases (the tree's deadline %gs); "
                    "SIGINT again to force",
                    signame,
                    app.timeout,
                )
                nursery.start_soon(shutdown)
            elif signum == signal.SIGTERM:
                log.warning("SIGTERM again: already shutting down (SIGINT forces)")
            else:
                log.warning("%s again: forcing shutdown", signame)
                forced = True
                await root.kill(ExitReason.cancelled(by="signal", detail="forced shutdown"))
                nursery.cancel_scope.cancel(reason="forced shutdown")
    if forced or app.killed:
        return ExitCode.FORCED
    reason = root.exit_reason
    if gave_up(reason):
        assert reason is not None
        log.error("%s: the root supervisor gave up: %s", root.path, reason.describe())
    return _code_for(reason) if reason is not None else ExitCode.FORCED


def run(root: Callable[[], Actor], **options: Any) -> int:
    """Blocking entry point: ``sys.exit(run(make_root))``."""
    code: ExitCode = trio.run(lambda: run_application(root, **options))
    return int(code)
