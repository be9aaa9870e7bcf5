"""How big each scenario is: the defaults (a few minutes on 2 cores), ``--smoke``, the flags."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Sizes:
    sessions: int = 50
    """Concurrent sessions of the sessions workload (also the load under cancel, steer, chaos)."""
    turns: int = 10
    """Turns per session in the sessions and chaos scenarios."""
    load_think: float = 1.0
    """Seconds each load session waits between turns under the cancel storm and steers."""
    fanout_sessions: int = 10
    subagents: int = 10
    """Subagents per fan-out session."""
    idle_sessions: int = 100
    """Idle sessions created to measure memory per idle session."""
    cancels: int = 60
    victims: int = 4
    """Sessions the cancel storm cancels in turn (while the load runs)."""
    steers: int = 30
    soak_loops: int = 10_000
    soak_workers: int = 8
    chaos_rate: float = 5.0
    """Actor crashes per second during the chaos scenario."""
    seed: int = 1

    @classmethod
    def smoke(cls) -> Sizes:
        return cls(
            sessions=3,
            turns=3,
            fanout_sessions=2,
            subagents=3,
            idle_sessions=3,
            cancels=9,
            victims=2,
            steers=3,
            soak_loops=30,
            soak_workers=3,
            chaos_rate=10.0,
            load_think=0.1,
        )

    def with_flags(self, flags: dict[str, Any]) -> Sizes:
        """These sizes with the flags that were given (``None`` = not given); checked."""
        given = {k: v for k, v in flags.items() if v is not None}
        sizes = attrs.evolve(self, **given)
        sizes.check()
        return sizes

    def check(self) -> None:
        """Raise ``ValueError`` naming the first flag out of range."""
        minimum = {
            "sessions": 1,
            "turns": 1,
            "fanout_sessions": 1,
            "subagents": 1,
            "idle_sessions": 1,
            "cancels": 1,
            "victims": 1,
            "steers": 1,
            "soak_loops": 10,
            "soak_workers": 1,
        }
        for name, low in minimum.items():
            value = getattr(self, name)
            if value < low:
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{flag} must be at least {low}, got {value}")
        if not 0 <= self.load_think <= 60:
            raise ValueError(f"--load-think must be from 0 to 60 seconds, got {self.load_think:g}")
        if not 0 < self.chaos_rate <= 100:
            raise ValueError(f"--chaos-rate must be > 0 and <= 100, got {self.chaos_rate:g}")
        if self.soak_workers > self.soak_loops:
            raise ValueError(
                f"--soak-workers ({self.soak_workers}) must not exceed "
                f"--soak-loops ({self.soak_loops})"
            )
