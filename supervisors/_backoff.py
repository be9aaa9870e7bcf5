"""Exponential backoff between restarts (Akka's ``restartWithBackoff``)."""

from __future__ import annotations

import math
import random
from typing import Any

import attrs

from actors import is_number

from ._errors import SpecError


def _nonneg(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not is_number(value) or not (0 <= value < math.inf):
        raise SpecError(
            f"invalid backoff {attribute.name}: {value!r} (expected a finite number >= 0)"
        )


@attrs.frozen(slots=True)
class Backoff:
    """delay(n) = min(max, min * 2**n) * (1 + U(0, random_factor)).

    ``n`` counts consecutive restarts; it resets after ``reset_after`` seconds
    without a failure (default ``(min + max) / 2``, as in Akka).
    """

    min: float = attrs.field(validator=_nonneg)
    max: float = attrs.field(validator=_nonneg)
    random_factor: float = attrs.field(default=0.2, validator=_nonneg)
    reset_after: float | None = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        if self.max < self.min:
            raise SpecError(
                f"invalid backoff max: {self.max!r} (expected >= min, which is {self.min!r})"
            )
        if self.reset_after is not None:
            _nonneg(self, attrs.fields(Backoff).reset_after, self.reset_after)

    @property
    def quiet_period(self) -> float:
        """Seconds without failure after which the attempt count resets."""
        return self.reset_after if self.reset_after is not None else (self.min + self.max) / 2

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Delay before restart number ``attempt`` (0-based)."""
        base = min(self.max, self.min * (2 ** min(attempt, 62)))
        jitter = (rng or random).uniform(0, self.random_factor) if self.random_factor else 0.0
        return float(base * (1 + jitter))
