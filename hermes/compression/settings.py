"""Compression settings (Hermes defaults) and the budgets derived from them."""

from __future__ import annotations

import math

import attrs

CHARS_PER_TOKEN = 4
"""The rough estimate: about four characters per token."""


def _fail(name: str, rule: str, value: object) -> ValueError:
    return ValueError(f"CompressionSettings.{name} must be {rule}, got {value!r}")


@attrs.frozen(slots=True, kw_only=True)
class CompressionSettings:
    """How and when a session compacts its transcript."""

    enabled: bool = True
    """Automatic compaction; a forced ``/compress`` runs regardless."""
    threshold_ratio: float = 0.5
    """Compact when the prompt reaches this share of (context window - max_tokens)."""
    small_window: int = 512_000
    small_window_ratio: float = 0.75
    """On a window under ``small_window`` tokens the ratio is at least this (Hermes)."""
    tail_ratio: float = 0.2
    """The protected tail may hold up to this share of the threshold, in tokens."""
    protect_first: int = 3
    """Messages kept verbatim at the start (the system prompt is kept anyway)."""
    protect_last: int = 6
    """The tail never holds fewer messages than this."""
    prune_min_chars: int = 2_000
    """Tool results larger than this, between head and tail, are pruned."""
    summary_min_tokens: int = 2_000
    summary_max_tokens_cap: int = 12_000
    summary_context_ratio: float = 0.05
    """Summary budget: between ``summary_min_tokens`` and min(ratio x context, cap)."""
    summary_timeout: float = 120.0
    aux_model: str | None = None
    """The model that writes summaries; None means the session's own model."""
    cooldowns: tuple[float, ...] = (60.0, 300.0, 900.0)
    """Hold after the 1st, 2nd, 3rd+ consecutive failed summary call (seconds)."""
    min_saving: float = 0.10
    """A compaction saving less than this share of the prompt counts as weak."""
    regrow_ratio: float = 0.10
    """After two weak compactions, resume once the prompt grew by this share of the threshold."""
    max_attempts_per_turn: int = 3
    abort_on_summary_failure: bool = False
    """Every failed summary aborts (keeps every message), not only the aborting classes
    (Hermes' ``compression.abort_on_summary_failure``, seed #197)."""
    static_summary_chars: int = 8_000

    def __attrs_post_init__(self) -> None:
        def ratio(name: str, value: float, *, zero_ok: bool = False) -> None:
            low_ok = value >= 0 if zero_ok else value > 0
            if not (math.isfinite(value) and low_ok and value <= 1):
                raise _fail(name, "in [0, 1]" if zero_ok else "in (0, 1]", value)

        def count(name: str, value: int, minimum: int) -> None:
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise _fail(name, f"an integer >= {minimum}", value)

        ratio("threshold_ratio", self.threshold_ratio)
        ratio("small_window_ratio", self.small_window_ratio)
        count("small_window", self.small_window, 0)
        ratio("tail_ratio", self.tail_ratio)
        ratio("summary_context_ratio", self.summary_context_ratio)
        ratio("min_saving", self.min_saving, zero_ok=True)
        ratio("regrow_ratio", self.regrow_ratio, zero_ok=True)
        count("protect_first", self.protect_first, 0)
        count("protect_last", self.protect_last, 1)
        count("prune_min_chars", self.prune_min_chars, 200)
        count("summary_min_tokens", self.summary_min_tokens, 1)
        count("summary_max_tokens_cap", self.summary_max_tokens_cap, self.summary_min_tokens)
        count("max_attempts_per_turn", self.max_attempts_per_turn, 1)
        count("static_summary_chars", self.static_summary_chars, 500)
        if not (math.isfinite(self.summary_timeout) and self.summary_timeout > 0):
            raise _fail("summary_timeout", "a positive number of seconds", self.summary_timeout)
        if not self.cooldowns or not all(math.isfinite(c) and c >= 0 for c in self.cooldowns):
            raise _fail("cooldowns", "a non-empty tuple of seconds >= 0", self.cooldowns)
        if self.aux_model is not None and not self.aux_model.strip():
            raise _fail("aux_model", "None or a model name", self.aux_model)

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
