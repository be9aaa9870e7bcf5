"""When a session reviews itself (memory, skills), and how much a review may spend."""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True, kw_only=True)
class ReviewSettings:
    """Hermes' defaults: memory every 10 user turns, skills every 10 tool iterations,
    16 iterations, a 600k-token budget."""

    enabled: bool = True
    interval: int = 10
    """Review memory after every ``interval`` completed user turns."""
    skill_interval: int = 10
    """Review skills once this many tool-calling iterations ran since the last skill
    review or ``skill_manage`` call (``[skills] review_interval``, seed #262); 0: never."""
    max_iterations: int = 16
    """Model calls per review."""
    token_budget: int = 600_000
    """Prompt plus output tokens a review may spend; it stops (and commits) when spent."""
    max_tokens: int = 2048
    """Output tokens per review call."""
    model: str | None = None
    """Another model for reviews; None: the session's (its cached prompt is reused)."""
    digest_messages: int = 40
    """With another model, the review reads a digest of this many trailing messages."""
    idle_delay: float = 0.0
    """Seconds the session must stay idle before a due review starts (the daemon's
    default is 2 s: a person typing the next prompt never pays for a review)."""

    def __attrs_post_init__(self) -> None:
        minimums = {
            "interval": 1,
            "skill_interval": 0,
            "max_iterations": 1,
            "token_budget": 1,
            "max_tokens": 1,
            "digest_messages": 2,
        }
        for name, minimum in minimums.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(
                    f"review settings {name}: expected an integer >= {minimum}, got {value!r}"
                )
        delay = self.idle_delay
        if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay < 3600:
            raise ValueError(
                f"review settings idle_delay: expected seconds from 0 to 3600, got {delay!r}"
            )
        if not isinstance(self.enabled, bool):
            raise ValueError(
                f"review settings enabled: expected true or false, got {self.enabled!r}"
            )
        if self.model is not None and (not isinstance(self.model, str) or not self.model.strip()):
            raise ValueError(f"review settings model: expected a model name, got {self.model!r}")
