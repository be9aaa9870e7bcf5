"""Liveness specs: how old a heartbeat may get before an actor counts as stale."""

from __future__ import annotations

from typing import Any

import attrs

from ._checks import is_count, is_number


def _positive(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
    if not is_number(value) or value <= 0:
        raise ValueError(f"liveness {attribute.name} must be a number > 0, got {value!r}")


def _misses(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if not is_count(value) or value < 0:
        raise ValueError(f"liveness {attribute.name} must be an int >= 0, got {value!r}")


@attrs.frozen(slots=True)
class LivenessSpec:
    """Expect a heartbeat every ``interval`` seconds; tolerate ``allowed_misses`` missed ones.

    The watcher probes the actor every ``interval``. An idle actor answers probes
    itself; a busy one must call ``ctx.beat()``. The actor is stale once its
    heartbeat is older than ``interval * (allowed_misses + 1)``.
    """

    interval: float = attrs.field(validator=_positive)
    allowed_misses: int = attrs.field(default=2, validator=_misses)

    @property
    def stale_after(self) -> float:
        """Heartbeat age beyond which the actor is stale."""
        return self.interval * (self.allowed_misses + 1)

    def is_stale(self, heartbeat_age: float) -> bool:
        """True if a heartbeat this old means the actor is stale."""
        return heartbeat_age > self.stale_after
