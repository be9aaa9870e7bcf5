"""What a scenario gets: the run's processes, the sizes, progress bars, the provider's log."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import trio

from .harness import Run
from .progress import Progress
from .providerlog import ProviderLog
from .sizes import Sizes


@attrs.define
class Context:
    run: Run
    sizes: Sizes
    progress: Progress
    provider: ProviderLog
    rng: random.Random

    @classmethod
    def of(cls, run: Run, sizes: Sizes, progress: Progress) -> Context:
        return cls(run, sizes, progress, ProviderLog(run.provider_log), random.Random(sizes.seed))

    @asynccontextmanager
    async def following(self) -> AsyncIterator[None]:
        """Read the provider's log in the background (for ``wait_opened``/``wait_closed``)."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.provider.run)
            try:
                yield
            finally:
                nursery.cancel_scope.cancel()
