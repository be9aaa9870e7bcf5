from __future__ import annotations

from typing import Any

import pytest

from hermes.compression import CompressionSettings, tail_budget_tokens, threshold_tokens


def test_defaults_follow_hermes() -> None:
    s = CompressionSettings()
    assert (s.enabled, s.threshold_ratio, s.tail_ratio) == (True, 0.5, 0.2)
    assert (s.protect_first, s.protect_last, s.prune_min_chars) == (3, 6, 2_000)
    assert s.cooldowns == (60.0, 300.0, 900.0)
    assert (s.min_saving, s.max_attempts_per_turn, s.static_summary_chars) == (0.10, 3, 8_000)
    assert s.summary_timeout == 120.0
    assert s.aux_model is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"threshold_ratio": 0.0}, "threshold_ratio"),
        ({"threshold_ratio": 1.5}, "threshold_ratio"),
        ({"tail_ratio": float("nan")}, "tail_ratio"),
        ({"protect_first": -1}, "protect_first"),
        ({"protect_last": 0}, "protect_last"),
        ({"prune_min_chars": 10}, "prune_min_chars"),
        ({"summary_min_tokens": 5000, "summary_max_tokens_cap": 4000}, "summary_max_tokens_cap"),
        ({"summary_timeout": 0.0}, "summary_timeout"),
        ({"cooldowns": ()}, "cooldowns"),
        ({"cooldowns": (60.0, -1.0)}, "cooldowns"),
        ({"min_saving": 1.5}, "min_saving"),
        ({"max_attempts_per_turn": 0}, "max_attempts_per_turn"),
        ({"static_summary_chars": 100}, "static_summary_chars"),
        ({"aux_model": "  "}, "aux_model"),
        ({"protect_first": True}, "protect_first"),
    ],
)
def test_invalid_settings_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=rf"compression settings {field}: expected .*, got "):
        CompressionSettings(**kwargs)


def test_threshold_is_ratio_of_window_minus_output() -> None:
    s = CompressionSettings()
    assert threshold_tokens(1_000_000, 8_000, s) == 496_000  # 50 % on a large window
    assert threshold_tokens(200_000, 8_000, s) == 144_000  # at least 75 % under 512K
    assert threshold_tokens(200_000, 4_096, s) == 146_928  # the default model's
    assert threshold_tokens(511_999, 0, s) == int(0.75 * 511_999)
    assert threshold_tokens(512_000, 0, s) == 256_000
    assert threshold_tokens(100_000, 0, CompressionSettings(threshold_ratio=0.8)) == 80_000
    assert threshold_tokens(200_000, 8_000, CompressionSettings(small_window=0)) == 96_000
    assert tail_budget_tokens(96_000, s) == 19_200


@pytest.mark.parametrize(("window", "max_tokens"), [(0, 0), (1000, 1000), (1000, -1)])
def test_threshold_rejects_impossible_windows(window: int, max_tokens: int) -> None:
    with pytest.raises(ValueError):
        threshold_tokens(window, max_tokens, CompressionSettings())


def test_summary_token_bounds() -> None:
    s = CompressionSettings()
    assert s.summary_max_tokens(8_000) == 2_000  # floor
    assert s.summary_max_tokens(100_000) == 5_000  # 5 %
    assert s.summary_max_tokens(1_000_000) == 12_000  # cap
    assert s.summary_max_chars == 48_000
