"""The [compression], [memory] and [review] sections: checked, and turned into settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.daemon.config import ConfigError, load_config
from hermes.daemon.session_settings import compression_settings, memory_store, review_settings


def test_sections_become_settings_with_per_model_thresholds(tmp_path: Path) -> None:
    config = load_config(None, env={})
    assert compression_settings(config, "any").threshold_ratio == 0.5
    path = tmp_path / "config.toml"
    path.write_text(
        "[compression]\nthreshold = 0.6\naux_model = 'claude-aux'\n"
        "thresholds = { 'claude-small' = 0.8 }\n"
        "[review]\ninterval = 3\nmodel = 'claude-review'\n"
        "[memory]\nmemory_chars = 500\n"
    )
    config = load_config(path, env={})
    assert compression_settings(config, "claude-big").threshold_ratio == 0.6
    small = compression_settings(config, "claude-small")
    assert small.threshold_ratio == 0.8 and small.aux_model == "claude-aux"
    review = review_settings(config)
    assert (review.interval, review.model) == (3, "claude-review")
    store = memory_store(config, tmp_path)
    assert store is not None and store.limits.cap("memory") == 500
    path.write_text("[memory]\nenabled = false\n")
    assert memory_store(load_config(path, env={}), tmp_path) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[compression]\nthreshold = 1.5\n", "[compression] threshold: expected a number > 0"),
        ("[compression]\nthresholds = { m = 0 }\n", "thresholds: expected a table of model"),
        ("[compression]\nthresholds = 3\n", "thresholds: expected a table of model"),
        ("[review]\ninterval = 0\n", "[review] interval: expected an integer >= 1"),
        ("[memory]\nuser_chars = 'lots'\n", "[memory] user_chars: expected an integer >= 100"),
        ("[compression]\nsummary = 1\n", "[compression] summary: unknown key"),
        (
            "[model]\ncontext_window = 4096\nmax_tokens = 4096\n",
            "[model] max_tokens (4096) must be less than context_window (4096)",
        ),
    ],
)
def test_bad_values_are_refused_with_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert message in str(info.value) and str(path) in str(info.value)
