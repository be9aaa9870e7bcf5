"""Compression settings (Hermes defaults) and the budgets derived from them."""

from __future__ import annotations

import attrs

from hermes.checks import count, durations, fraction, name, optional, seconds

CHARS_PER_TOKEN = 4
"""The rough estimate: about four characters per token."""


LABEL = "compression settings"
_share = fraction(LABEL)
_share_or_zero = fraction(LABEL, zero=True)


@attrs.frozen(slots=True, kw_only=True)
class CompressionSettings:
    """How and when a session compacts its transcript."""

    enabled: bool = True
    """Automatic compaction; a forced ``/compress`` runs regardless."""
    threshold_ratio: float = attrs.field(default=0.5, validator=_share)
    """Compact when the prompt reaches this share of (context window - max_tokens)."""
    small_window: int = attrs.field(default=512_000, validator=count(LABEL, 0))
    small_window_ratio: float = attrs.field(default=0.75, validator=_share)
    """On a window under ``small_window`` tokens the ratio is at least this (Hermes)."""
    tail_ratio: float = attrs.field(default=0.2, validator=_share)
    """The protected tail may hold up to this share of the threshold, in tokens."""
    protect_first: int = attrs.field(default=3, validator=count(LABEL, 0))
    """Messages kept verbatim at the start (the system prompt is kept anyway)."""
    protect_last: int = attrs.field(default=6, validator=count(LABEL, 1))
    """The tail never holds fewer messages than this."""
    prune_min_chars: int = attrs.field(default=2_000, validator=count(LABEL, 200))
    """Tool results larger than this, between head and tail, are pruned."""
    summary_min_tokens: int = attrs.field(default=2_000, validator=count(LABEL, 1))
    summary_max_tokens_cap: int = attrs.field(default=12_000, validator=count(LABEL, 1))
    summary_context_ratio: float = attrs.field(default=0.05, validator=_share)
    """Summary budget: between ``summary_min_tokens`` and min(ratio x context, cap)."""
    summary_timeout: float = attrs.field(default=120.0, validator=seconds(LABEL))
    aux_model: str | None = attrs.field(
        default=None, validator=optional(name(LABEL, "a model name"))
    )
    """The model that writes summaries; None means the session's own model."""
    cooldowns: tuple[float, ...] = attrs.field(
        default=(60.0, 300.0, 900.0), validator=durations(LABEL)
    )
    """Hold after the 1st, 2nd, 3rd+ consecutive failed summary call (seconds)."""
    min_saving: float = attrs.field(default=0.10, validator=_share_or_zero)
    """A compaction saving less than this share of the prompt counts as weak."""
    regrow_ratio: float = attrs.field(default=0.10, validator=_share_or_zero)
    """After two weak compactions, resume once the prompt grew by this share of the threshold."""
    max_attempts_per_turn: int = attrs.field(default=3, validator=count(LABEL, 1))
    abort_on_summary_failure: bool = False
    """Every failed summary aborts (keeps every message), not only the aborting classes
    (Hermes' ``compression.abort_on_summary_failure``, seed #197)."""
    static_summary_chars: int = attrs.field(default=8_000, validator=count(LABEL, 500))

    def __attrs_post_init__(self) -> None:
        if self.summary_max_tokens_cap < self.summary_min_tokens:
            raise ValueError(
                f"{LABEL} summary_max_tokens_cap: expected an integer >= summary_min_tokens "
                f"({self.summary_min_tokens}), got {self.summary_max_tokens_cap!r}"
            )

    def summary_max_tokens(self, context_window: int) -> int:
        """The summary call's max_tokens: 5 % of the context, within [min, cap]."""
        scaled = int(context_window * self.summary_context_ratio)
        return max(self.summary_min_tokens, min(scaled, self.summary_max_tokens_cap))

    @property
    def summary_max_chars(self) -> int:
        """Longer summaries are cut (``accept_summary``): the token cap in characters."""
        return self.summary_max_tokens_cap * CHARS_PER_TOKEN


def threshold_ratio(context_window: int, settings: CompressionSettings) -> float:
    """The share of the window that triggers: ``threshold_ratio``, raised to at least
    ``small_window_ratio`` on a window under ``small_window`` (seed #192)."""
    if context_window < settings.small_window:
        return max(settings.threshold_ratio, settings.small_window_ratio)
    return settings.threshold_ratio


def threshold_tokens(context_window: int, max_tokens: int, settings: CompressionSettings) -> int:
    """Prompt size (tokens) at which to compact: ratio x (window - output reservation),
    the ratio as ``threshold_ratio`` gives it."""
    if context_window <= 0:
        raise ValueError(f"context_window must be positive, got {context_window}")
    if not 0 <= max_tokens < context_window:
        raise ValueError(
            f"max_tokens must be in [0, context_window={context_window}), got {max_tokens}"
        )
    return int(threshold_ratio(context_window, settings) * (context_window - max_tokens))


def tail_budget_tokens(threshold: int, settings: CompressionSettings) -> int:
    """The protected tail's token budget: ``tail_ratio`` of the threshold."""
    return int(threshold * settings.tail_ratio)
