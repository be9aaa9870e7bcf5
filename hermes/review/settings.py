"""When a session reviews itself (memory, skills), and how much a review may spend."""

from __future__ import annotations

import attrs

from hermes.checks import count, flag, name, optional, seconds

LABEL = "review settings"


@attrs.frozen(slots=True, kw_only=True)
class ReviewSettings:
    """Hermes' defaults: memory every 10 user turns, skills every 10 tool iterations,
    16 iterations, a 600k-token budget."""

    enabled: bool = attrs.field(default=True, validator=flag(LABEL))
    interval: int = attrs.field(default=10, validator=count(LABEL))
    """Review memory after every ``interval`` completed user turns."""
    skill_interval: int = attrs.field(default=10, validator=count(LABEL, 0))
    """Review skills once this many tool-calling iterations ran since the last skill
    review or ``skill_manage`` call (``[skills] review_interval``, seed #262); 0: never."""
    max_iterations: int = attrs.field(default=16, validator=count(LABEL))
    """Model calls per review."""
    token_budget: int = attrs.field(default=600_000, validator=count(LABEL))
    """Prompt plus output tokens a review may spend; it stops (and commits) when spent."""
    max_tokens: int = attrs.field(default=2048, validator=count(LABEL))
    """Output tokens per review call."""
    model: str | None = attrs.field(default=None, validator=optional(name(LABEL, "a model name")))
    """Another model for reviews; None: the session's (its cached prompt is reused)."""
    digest_messages: int = attrs.field(default=40, validator=count(LABEL, 2))
    """With another model, the review reads a digest of this many trailing messages."""
    idle_delay: float = attrs.field(default=0.0, validator=seconds(LABEL, zero=True, below=3600))
    """Seconds the session must stay idle before a due review starts (the daemon's
    default is 2 s: a person typing the next prompt never pays for a review)."""
