"""``kill_all``: many actors killed at once from one task, each waited for within the grace."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from actors import Actor, ActorExited, ActorSystem, ExitKind, kill_all
from actors._teardown import KILL_MARGIN

from .test_unkillable import ShieldedWorker


class Sleeper(Actor):
    """Sleeps in ``receive`` until cancelled; records that its ``on_stop`` ran."""

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.stopped = False

    async def receive(self, message: Any) -> None:
        self.entered.set()
        await trio.sleep_forever()

    async def on_stop(self, reason: object) -> None:
        self.stopped = True


async def test_every_actor_is_cancelled_at_once_and_the_reasons_come_back_in_order(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    sleepers = [Sleeper() for _ in range(5)]
    refs = [await system.spawn(s, name=f"sleeper-{i}") for i, s in enumerate(sleepers)]
    for ref, sleeper in zip(refs, sleepers, strict=True):
        await ref.cast("sleep")
        await sleeper.entered.wait()
    done = await system.spawn(Sleeper(), name="done")
    done_reason = await done.stop()
    t0 = trio.current_time()
    reasons = await kill_all([refs[0], done, *refs[1:]])
    assert trio.current_time() == t0  # nobody waited for anybody's grace
    assert reasons[1] == done_reason  # already gone: its own reason, unchanged
    assert [r.kind for i, r in enumerate(reasons) if i != 1] == [ExitKind.CANCELLED] * 5
    assert all(not ref.is_alive for ref in refs) and all(s.stopped for s in sleepers)


async def test_unkillable_ones_are_reported_after_one_grace_and_the_others_are_not_held(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()
    stuck = [ShieldedWorker(release) for _ in range(2)]
    stuck_refs = [await system.spawn(w, name=f"stuck-{i}") for i, w in enumerate(stuck)]
    sleeper = Sleeper()
    sleeper_ref = await system.spawn(sleeper, name="sleeper")
    for ref in stuck_refs:
        await ref.cast("work")
    await sleeper_ref.cast("sleep")
    for worker in stuck:
        await worker.entered.wait()
    await sleeper.entered.wait()
    try:
        t0 = trio.current_time()
        reasons = await kill_all([stuck_refs[0], sleeper_ref, stuck_refs[1]])
        # One grace for all of them, not one after the other.
        assert trio.current_time() - t0 == pytest.approx(system.kill_grace * (1 + KILL_MARGIN))
        kinds = [r.kind for r in reasons]
        assert kinds == [ExitKind.UNKILLABLE, ExitKind.CANCELLED, ExitKind.UNKILLABLE]
        assert set(system.unkillable()) == set(stuck_refs) and not sleeper_ref.is_alive
    finally:
        release.set()


class Killer(Actor):
    """Kills the refs it is sent, itself among them."""

    async def receive(self, message: Any) -> Any:
        return await kill_all([*message, self.ctx.self])


async def test_an_actor_cannot_kill_itself_and_wait(system: ActorSystem) -> None:
    bystander = await system.spawn(Sleeper(), name="bystander")
    killer = await system.spawn(Killer(), name="killer")
    with pytest.raises(ActorExited, match="cannot kill itself and wait"):
        await killer.call([bystander])
    assert bystander.is_alive  # refused before anyone was killed
