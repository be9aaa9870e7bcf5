"""Run a whole supervision tree as an application, with OTP-style signal handling.

- First SIGINT or SIGTERM: graceful shutdown of the whole tree (children in
  reverse order, each per its shutdown spec) within ``shutdown_timeout``.
- Second SIGINT or SIGTERM: forced; the root is cancelled at once.
- SIGHUP: the ``on_reload`` hook runs; nothing is restarted.

The exit code tells how it ended (``ExitCode``): a root supervisor that gave
up after too many restarts exits ``shutdown`` (OTP) but the application failed.
"""

from __future__ import annotations

import enum
import inspect
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from actors import Actor, ActorRef, ActorSystem, ExitKind, ExitReason, StartFailed, open_system

from ._intensity import gave_up

log = logging.getLogger("supervisors.application")

Hook = Callable[[ActorSystem, ActorRef], Awaitable[None] | None]


class ExitCode(enum.IntEnum):
    OK = 0
    """The root stopped normally, or gracefully after a signal."""
    FAILED = 1
    """The root failed to start, exited abnormally, or gave up after too many restarts."""
    FORCED = 2
    """A second signal, or the shutdown deadline, cut the graceful shutdown short."""


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
) -> ExitCode:
    """Start ``root()`` as the top of the tree and run until it exits or a signal stops it.

    Must run in the main thread (signal handling).
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
            return await _serve(system, root_ref, signals, shutdown_timeout, on_reload)
    raise AssertionError("unreachable")  # pragma: no cover


async def _serve(
    system: ActorSystem,
    root: ActorRef,
    signals: Any,
    shutdown_timeout: float,
    on_reload: Hook | None,
) -> ExitCode:
    forced = False
    stopping = False
    async with trio.open_nursery() as nursery:

        async def watch_root() -> None:
            await root.wait_exited()
            nursery.cancel_scope.cancel(reason="application root exited")

        async def graceful() -> None:
            nonlocal forced
            reason = await root.stop(
                ExitReason.shutdown("signal: graceful shutdown"), timeout=shutdown_timeout
            )
            if reason.kind in (ExitKind.KILLED, ExitKind.UNKILLABLE):
                forced = True

        nursery.start_soon(watch_root)
        async for signum in signals:
            if signum == signal.SIGHUP:
                log.info("SIGHUP: reloading")
                await _call_hook(on_reload, system, root, "on_reload")
            elif not stopping:
                stopping = True
                log.warning(
                    "%s: graceful shutdown (deadline %gs); send it again to force",
                    signal.Signals(signum).name,
                    shutdown_timeout,
                )
                nursery.start_soon(graceful)
            else:
                log.warning("%s again: forcing shutdown", signal.Signals(signum).name)
                forced = True
                await root.kill(ExitReason.cancelled(by="signal", detail="forced shutdown"))
                nursery.cancel_scope.cancel(reason="forced shutdown")
    if forced:
        return ExitCode.FORCED
    reason = root.exit_reason
    if not stopping and gave_up(reason):
        assert reason is not None
        log.error("%s: the root supervisor gave up: %s", root.path, reason.describe())
    return _code_for(reason) if reason is not None else ExitCode.FORCED


def run(root: Callable[[], Actor], **options: Any) -> int:
    """Blocking entry point: ``sys.exit(run(make_root))``."""
    code: ExitCode = trio.run(lambda: run_application(root, **options))
    return int(code)
