"""Follow the fake provider's JSON-lines log (``bench/suite/fake.py``) from this process."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio

POLL = 0.002
"""Seconds between reads of the log: the resolution of ``wait_*`` (not of the stamps)."""


class ProviderLog:
    """What the fake saw, by tag: streams opened, streams the client closed, requests ended.

    ``run`` polls the file in a task; the stamps in it are the fake's own
    ``time.monotonic()``, so polling adds nothing to the measured latencies.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.buffer = b""
        self.opened: dict[str, list[float]] = defaultdict(list)
        self.closed: dict[str, list[float]] = defaultdict(list)
        self.ended = 0
        """``/v1/messages`` requests that ended, however they ended."""
        self._changed = trio.Event()

    def read(self) -> None:
        """Read what the fake appended since the last call."""
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        if not data:
            return
        self.offset += len(data)
        lines = (self.buffer + data).split(b"\n")
        self.buffer = lines.pop()
        for line in lines:
            self._add(json.loads(line))
        self._changed.set()
        self._changed = trio.Event()

    def _add(self, line: dict[str, Any]) -> None:
        if line["ev"] == "open":
            self.opened[line["tag"]].append(line["at"])
        elif line["ev"] == "end":
            self.ended += 1
            if line["o"] == "client closed" and line["dc"] is not None:
                self.closed[line["tag"]].append(line["dc"])

    async def run(self) -> None:
        while True:
            self.read()
            await trio.sleep(POLL)

    async def wait_opened(self, tag: str, count: int = 1) -> float:
        """The stamp of the ``count``-th stream opened for ``tag`` (waits for it)."""
        while len(self.opened[tag]) < count:
            await self._changed.wait()
        return self.opened[tag][count - 1]

    async def wait_closed(self, tag: str, count: int = 1) -> float:
        """When the fake saw the client leave the ``count``-th stream of ``tag``."""
        while len(self.closed[tag]) < count:
            await self._changed.wait()
        return self.closed[tag][count - 1]
