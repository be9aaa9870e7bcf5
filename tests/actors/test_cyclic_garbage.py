"""A finished actor is freed by reference counting, not left to the cyclic collector.

In the daemon, finished turns and tool workers (cell, ref, mailbox, context,
timers, crash tracebacks) were 9-18k of the objects each young collection had
to traverse. These tests save everything the collector finds unreachable
(``DEBUG_SAVEALL``) and require that no part of a finished actor is among it.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
import trio

from actors import Actor, ActorExited, ActorSystem, ExitKind, LivenessSpec
from actors._cell import ActorCell
from actors._context import ActorContext
from actors._mailbox import Mailbox
from actors._ref import ActorRef

RUNTIME_TYPES = (ActorCell, ActorRef, Mailbox, ActorContext)


class Worker(Actor):
    """Answers calls, stops, crashes or hangs on request; uses a timer."""

    async def on_start(self) -> None:
        self.ctx.send_after(60.0, "late")

    async def receive(self, message: Any) -> Any:
        if message == "stop":
            self.ctx.stop()
        elif message == "crash":
            try:
                raise KeyError("context")
            except KeyError as exc:
                raise RuntimeError("crash requested") from exc
        elif message == "hang":
            await trio.sleep_forever()
        return message


class Watcher(Actor):
    """Watches the liveness of the actors it is told about."""

    async def receive(self, message: Any) -> Any:
        if message == "stop":
            self.ctx.stop()
        else:
            self.ctx.watch_liveness(message, LivenessSpec(interval=10.0))


def runtime_garbage(garbage: list[Any]) -> list[str]:
    gc.collect()
    kept = (*RUNTIME_TYPES, Worker, Watcher)
    return [type(o).__name__ for o in garbage if isinstance(o, kept)]


async def finish(system: ActorSystem, how: str) -> ActorRef:
    ref = await system.spawn(Worker())
    if how == "stop":
        await ref.cast("stop")
    elif how == "crash":
        await ref.cast("crash")
    elif how == "kill":
        await ref.cast("hang")
        await trio.lowlevel.checkpoint()
        await ref.kill()
        return ref
    elif how == "graceful":
        await ref.stop()
        return ref
    await ref.wait_exited()
    return ref


@pytest.mark.parametrize("how", ["stop", "crash", "kill", "graceful"])
async def test_finished_actors_leave_no_cyclic_garbage(
    system: ActorSystem, saved_garbage: list[Any], how: str
) -> None:
    watcher = await system.spawn(Watcher())
    for _ in range(20):
        ref = await finish(system, how)
        await watcher.call(ref)
    del ref
    await watcher.cast("stop")  # its liveness timers are closures over themselves
    await watcher.wait_exited()
    assert runtime_garbage(saved_garbage) == []


async def test_actor_instance_is_freed_without_the_collector(system: ActorSystem) -> None:
    actor = Worker()
    alive = weakref.ref(actor)
    ref = await system.spawn(actor)
    del actor
    await ref.cast("crash")
    reason = await ref.wait_exited()
    gc.disable()
    try:
        await trio.lowlevel.checkpoint()
        assert alive() is None
    finally:
        gc.enable()
    # The dead actor's ref still answers, and the crash is still described.
    assert not ref.is_alive
    assert ref.exit_reason is reason
    assert reason.kind is ExitKind.ERROR
    assert isinstance(reason.error, RuntimeError)
    assert "crash requested" in reason.describe()
    assert reason.traceback is not None
    assert "KeyError: 'context'" in reason.traceback
    assert "RuntimeError: crash requested" in reason.traceback
    with pytest.raises(ActorExited):
        await ref.call("ping")
    assert await ref.cast("ping") is False
    assert system.dead_letters.total >= 1
