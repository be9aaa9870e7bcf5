"""Helpers for the process tests: a notice collector, /proc checks, the fast config."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

import attrs
import trio

from actors import ActorRef
from hermes.processes import NoticeKind, ProcessConfig, ProcessNotice, ProcessService

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONUNBUFFERED": "1"}

FAST = ProcessConfig(kill_grace=0.3, kill_wait=1.0, drain_timeout=0.3)
"""Short kill ladders so that tests of SIGTERM-ignoring processes stay quick."""

StartRegistry = Callable[..., Awaitable[ProcessService]]


@attrs.define
class Notices:
    """Collects what a registry pushes to its ``notify`` sink."""

    items: list[ProcessNotice] = attrs.field(factory=list)

    def __call__(self, notice: ProcessNotice) -> None:
        self.items.append(notice)

    def of(self, kind: NoticeKind) -> list[ProcessNotice]:
        return [n for n in self.items if n.kind is kind]

    async def wait_for(self, kind: NoticeKind, count: int = 1, timeout: float = 5.0) -> None:
        with trio.fail_after(timeout):
            while len(self.of(kind)) < count:  # noqa: ASYNC110 - the sink is a plain callback
                await trio.sleep(0.01)


def ref_of(service: ProcessService) -> ActorRef:
    return cast(ActorRef, service.registry)


def proc_exists(pid: int) -> bool:
    """Anything at ``/proc/<pid>``, a zombie included."""
    return Path(f"/proc/{pid}").exists()


async def read_pids(path: Path, count: int, timeout: float = 5.0) -> list[int]:
    """Wait until ``path`` holds ``count`` pids (written by a test command)."""
    file = trio.Path(path)
    with trio.fail_after(timeout):
        while True:
            if await file.exists():
                words = (await file.read_text()).split()
                if len(words) >= count:
                    return [int(w) for w in words[:count]]
            await trio.sleep(0.01)


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    with trio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polling /proc, which has no events
            await trio.sleep(0.01)
