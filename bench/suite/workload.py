"""The sessions workload: N sessions, each running turns one after another.

The sessions scenario runs it alone; the cancel storm, the steer scenario
and chaos run it as the load underneath what they measure.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import attrs
import trio

from . import procfs
from .driver import Pool, SessionRef, Tally, run_turn
from .fake import RECORD_TAG

PromptFn = Callable[[int, int], str]


def tools_prompt(index: int, turn: int) -> str:
    """A turn with two tool calls (``read_file``, ``terminal true``) and two model calls.

    Session 0 is tagged ``#rec``: the fake records its request bodies for the
    bare-SDK baseline.
    """
    tag = RECORD_TAG if index == 0 else f"s{index}"
    return f"bench:tools #{tag} turn {turn}"


@attrs.define
class Workload:
    """``sessions`` sessions running ``turns`` turns each (``None``: until ``stop`` is set)."""

    pool: Pool
    sessions: int
    turns: int | None
    prompt: PromptFn = tools_prompt
    on_turn: Callable[[], None] = lambda: None
    tally: Tally = attrs.field(factory=Tally)
    refs: list[SessionRef] = attrs.field(factory=list)
    stop: trio.Event = attrs.field(factory=trio.Event)
    first_offset: int = 0
    """Added to session indexes (connection choice and tags)."""
    after_turn: Callable[[SessionRef, int], Awaitable[None]] | None = None
    """Runs after each turn of a session (think time, other verbs)."""
    think: float = 0.0
    """Seconds a session waits after each turn (a user reading the answer)."""

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            for index in range(self.sessions):
                nursery.start_soon(self._worker, index + self.first_offset)

    async def _worker(self, index: int) -> None:
        ref = await self.pool.session(index)
        self.refs.append(ref)
        turn = 0
        while (self.turns is None and not self.stop.is_set()) or (
            self.turns is not None and turn < self.turns
        ):
            self.tally.add(await run_turn(ref, self.prompt(index, turn)))
            self.on_turn()
            if self.after_turn is not None:
                await self.after_turn(ref, turn)
            if self.think:
                await trio.sleep(self.think)
            turn += 1

    async def close_all(self) -> None:
        """Close every session of the workload (ends them in the store)."""
        async with trio.open_nursery() as nursery:
            for ref in self.refs:
                nursery.start_soon(close_session, self.pool, ref)


async def close_session(pool: Pool, ref: SessionRef) -> None:
    await ref.call("session.close", timeout=60.0)
    await pool.forget(ref)


class LoadMeter:
    """How heavy the load was between ``__init__`` and ``result``: its turns per second and
    the daemon's CPU as a share of one core (1.0 = one core busy all the time)."""

    def __init__(self, pid: int, tally: Tally) -> None:
        self.pid = pid
        self.tally = tally
        self.turns = tally.answered
        self.cpu = procfs.process_cpu_seconds(pid)
        self.start = time.perf_counter()

    def result(self) -> dict[str, float]:
        wall = time.perf_counter() - self.start
        cpu = procfs.process_cpu_seconds(self.pid) - self.cpu
        return {
            "turns_per_s": round((self.tally.answered - self.turns) / wall, 1) if wall else 0.0,
            "daemon_cpu_share": round(cpu / wall, 2) if wall else 0.0,
        }
