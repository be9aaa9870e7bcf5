"""Retry and stale-stream policies of the model client (ours, not the SDK's)."""

from __future__ import annotations

import random

import attrs

from hermes.checks import at_least, positive

_positive = positive("model policy")
_non_negative = at_least("model policy", 0)


@attrs.frozen(slots=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter, honouring retry-after up to a cap, within a deadline.

    ``max_attempts`` counts attempts per model; ``deadline`` bounds one whole
    call (every attempt, every wait, every fallback model), so a call can never
    go quiet for many minutes.
    """

    max_attempts: int = attrs.field(default=4, validator=_positive)
    base_delay: float = attrs.field(default=1.0, validator=_non_negative)
    max_delay: float = attrs.field(default=30.0, validator=_non_negative)
    jitter: float = attrs.field(default=0.25, validator=_non_negative)
    retry_after_cap: float = attrs.field(default=60.0, validator=_non_negative)
    deadline: float = attrs.field(default=600.0, validator=_positive)
    malformed_retries: int = attrs.field(default=2, validator=_non_negative)
    """Replies with unusable tool arguments asked again (Hermes: 2) before one is accepted
    with the bad calls listed in ``ModelResponse.malformed_inputs``."""

    def delay(
        self, retry: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap)
        base = min(self.max_delay, self.base_delay * 2 ** min(retry, 30))
        return float(base * (1 - self.jitter * (rng or random).random()))


@attrs.frozen(slots=True, kw_only=True)
class StalePolicy:
    """How long a stream may go without any event before the attempt is abandoned.

    Hermes' defaults: 180 s, 240 s above 50k prompt tokens, 300 s above 100k.
    """

    base: float = attrs.field(default=180.0, validator=_positive)
    large: float = attrs.field(default=240.0, validator=_positive)
    huge: float = attrs.field(default=300.0, validator=_positive)
    large_tokens: int = 50_000
    huge_tokens: int = 100_000

    def timeout(self, prompt_tokens: int) -> float:
        if prompt_tokens > self.huge_tokens:
            return self.huge
        if prompt_tokens > self.large_tokens:
            return self.large
        return self.base
