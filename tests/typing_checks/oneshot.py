"""Checked by mypy (``tests/actors/test_oneshot.py``), never run: the result types of tasks.

Each ``assert_type`` states what ``spawn_task`` and ``result()`` are typed under
``mypy --strict``: the body's return type, whether it is a function or a ``Task``.
"""

from __future__ import annotations

from typing import assert_type

from actors import ActorContext, ActorRef, ActorSystem, ExitReason, Task, TaskRef
from supervisors import ChildSpec, task_spec


async def fetch(url: str, attempts: int) -> bytes:
    return url.encode() * attempts


async def nothing() -> None:
    pass


class Count(Task[dict[str, int]]):
    async def run(self) -> dict[str, int]:
        return {"n": 1}


async def from_the_system(system: ActorSystem) -> None:
    task = await system.spawn_task(fetch, "u", 2, name="fetch")
    assert_type(task, TaskRef[bytes])
    assert_type(await task.result(), bytes)
    assert_type(await (await system.spawn_task(nothing)).result(), None)
    assert_type(await (await system.spawn_task(Count())).result(), dict[str, int])


async def from_an_actor(ctx: ActorContext) -> None:
    task = await ctx.spawn_task(fetch, "u", 1, name="fetch", link=False)
    assert_type(await task.result(), bytes)
    ref: ActorRef = task  # a task's ref is an actor ref (monitor, link, kill it)
    assert_type(await ref.kill(), ExitReason)
    assert_type(await (await ctx.spawn_task(Count(), name="count")).result(), dict[str, int])
    assert_type(Task.of(fetch, "u", 3), Task[bytes])


def specs() -> list[ChildSpec]:
    return [task_spec("fetch", fetch, "u", 1), task_spec("count", Count)]
