"""Small actors and helpers shared by the supervisor tests."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import trio

from actors import Actor, ActorRef, ActorSystem, ExitKind, ExitReason, Subscription
from supervisors import IGNORE, ChildSpec, Supervisor, SupervisorClient

Log = list[tuple[Any, ...]]


class Worker(Actor):
    """Records ``("start", name)`` and ``("stop", name, kind)`` in a shared log.

    Messages: "crash" raises, "normal"/"shutdown" stop it on its own with that
    reason, "ping" answers, ("sleep", s) blocks in the handler, ("shielded", s)
    ignores cancellation for s seconds, ("beat-then-hang", s, every, activity, hang)
    beats every ``every`` for s seconds then hangs, ("got", x) records x and answers it.
    """

    def __init__(
        self,
        name: str,
        log: Log | None = None,
        *extra: Any,
        fail_start: bool = False,
        start_delay: float = 0.0,
        stop_delay: float = 0.0,
    ) -> None:
        self.name = name
        self.log = log if log is not None else []
        self.extra = extra
        self.fail_start = fail_start
        self.start_delay = start_delay
        self.stop_delay = stop_delay

    async def on_start(self) -> None:
        self.log.append(("start", self.name))
        if self.start_delay:
            await trio.sleep(self.start_delay)
        if self.fail_start:
            raise RuntimeError(f"{self.name} failed to start")

    async def receive(self, message: Any) -> Any:
        match message:
            case "crash":
                raise RuntimeError(f"{self.name} crashed")
            case "normal":
                self.ctx.stop()
            case "shutdown":
                self.ctx.stop(ExitReason.shutdown("on its own"))
            case "ping":
                return ("pong", self.name, self.ctx.restarts)
            case "extra":
                return self.extra
            case ("sleep", seconds):
                await trio.sleep(seconds)
            case ("shielded", seconds):
                with trio.CancelScope(shield=True):
                    await trio.sleep(seconds)
            case ("beat-then-hang", seconds, every, activity, hang):
                end = trio.current_time() + seconds
                while trio.current_time() < end:
                    self.ctx.beat(activity)
                    await trio.sleep(every)
                await trio.sleep(hang)
            case ("got", item):
                self.log.append(("got", self.name, self.ctx.restarts, item))
                return item
        return None

    async def on_stop(self, reason: ExitReason) -> None:
        self.log.append(("stop", self.name, reason.kind))
        if self.stop_delay:
            await trio.sleep(self.stop_delay)


def spec(
    cid: str, log: Log | None = None, worker: dict[str, Any] | None = None, **fields: Any
) -> ChildSpec:
    """A ``ChildSpec`` starting ``Worker(cid, log, **worker)``."""
    return ChildSpec(cid, functools.partial(Worker, cid, log, **(worker or {})), **fields)


class Flaky:
    """A start factory whose next ``fail_next`` calls raise instead of making a ``Worker``."""

    def __init__(self, name: str, log: Log | None = None, fail_next: int = 0) -> None:
        self.name = name
        self.log = log
        self.fail_next = fail_next
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        if self.fail_next > 0:
            self.fail_next -= 1
            raise RuntimeError(f"{self.name} cannot start (call {self.calls})")
        return Worker(self.name, self.log)


def ignore_factory() -> Any:
    return IGNORE


async def start_sup(
    system: ActorSystem, specs: list[ChildSpec], name: str = "sup", **flags: Any
) -> tuple[ActorRef, SupervisorClient]:
    ref = await system.spawn(Supervisor(specs, **flags), name=name)
    return ref, SupervisorClient(ref, timeout=1000)


async def ref_of(client: SupervisorClient, cid: str) -> ActorRef:
    handle = await client.child(cid)
    assert handle.ref is not None, f"{cid} is not running"
    return handle.ref


async def crash(
    client: SupervisorClient, cid: str, how: str = "crash", sync: bool = True
) -> ExitReason:
    """Make child ``cid`` exit (``how``); with ``sync``, wait until its supervisor handled it."""
    ref = await ref_of(client, cid)
    await ref.cast(how)
    reason = await ref.wait_exited()
    if sync:
        await client.count_children()  # the Exit notice is served before this call
    return reason


async def states(client: SupervisorClient) -> dict[str, str]:
    return {c.id: c.state for c in await client.which_children()}


async def wait_until(predicate: Callable[[], bool], step: float = 0.001) -> None:
    while True:
        if predicate():
            return
        await trio.sleep(step)


def of_type(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def stops(log: Log) -> list[tuple[str, ExitKind]]:
    return [(e[1], e[2]) for e in log if e[0] == "stop"]


def starts(log: Log) -> list[str]:
    return [e[1] for e in log if e[0] == "start"]


async def next_event(sub: Subscription, kind: type, **match: Any) -> Any:
    async for event in sub.receive:
        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in match.items()):
            return event
    raise AssertionError(f"bus closed before a {kind.__name__}")
