"""``Bell``: a ring cancels the scopes hung on it, with no watcher task."""

from __future__ import annotations

from pathlib import Path

import trio

from hermes.bell import Bell, cancelled_by
from hermes.procgroup import run_command


class SpawnCounter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


async def test_a_ring_cancels_every_scope_hung_on_it_and_no_other() -> None:
    bell, other = Bell(), Bell()
    with (
        cancelled_by(trio.CancelScope(), bell, None) as a,
        cancelled_by(trio.CancelScope(), bell),
        cancelled_by(trio.CancelScope(), other) as untouched,
    ):
        bell.set()
        await trio.lowlevel.checkpoint()
    assert a.cancelled_caught and not untouched.cancel_called
    assert bell.is_set() and not other.is_set()


async def test_a_scope_hung_on_a_bell_that_rang_is_cancelled_at_once() -> None:
    bell = Bell()
    bell.set()
    bell.set()  # a second ring changes nothing
    with cancelled_by(trio.CancelScope(), bell) as scope:
        await trio.sleep(30)
    assert scope.cancelled_caught
    with trio.fail_after(5):
        await bell.wait()


async def test_a_scope_left_is_no_longer_cancelled_by_a_ring() -> None:
    bell = Bell()
    scope = trio.CancelScope()
    with cancelled_by(scope, bell):
        pass
    bell.set()
    assert not scope.cancel_called


async def test_wait_returns_once_it_rings() -> None:
    bell = Bell()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bell.wait)
        await trio.testing.wait_all_tasks_blocked()
        bell.set()
    assert bell.is_set()


async def test_a_command_waits_on_its_bells_with_only_its_reader_task(tmp_path: Path) -> None:
    interrupt, redirect = Bell(), Bell()
    counter = SpawnCounter()

    async def hand_over(handover: object) -> None:
        raise AssertionError("not rung: nothing is handed over")

    trio.lowlevel.add_instrument(counter)
    try:
        with trio.fail_after(20):
            result = await run_command(
                ["sh", "-c", "echo done"],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"},
                timeout=10,
                interrupt=interrupt,
                yield_to=redirect,
                hand_over=hand_over,
            )
    finally:
        trio.lowlevel.remove_instrument(counter)
    assert result.output == "done\n" and result.exit_code == 0
    assert counter.spawned == 1  # the output reader; before bells, one watcher per event too


async def test_an_interrupt_bell_stops_a_command(tmp_path: Path) -> None:
    interrupt = Bell()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_ring_when_started, interrupt, tmp_path / "started")
        with trio.fail_after(20):
            result = await run_command(
                ["sh", "-c", f"touch {tmp_path / 'started'}; sleep 30"],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"},
                timeout=60,
                interrupt=interrupt,
                grace=0.2,
            )
    assert result.interrupted and not result.timed_out


async def _ring_when_started(bell: Bell, marker: Path) -> None:
    while not await trio.Path(marker).exists():  # noqa: ASYNC110 - a file the command writes
        await trio.sleep(0.01)
    bell.set()
