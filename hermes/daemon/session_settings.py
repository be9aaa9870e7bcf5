"""The configuration's ``[compression]``, ``[memory]`` and ``[review]`` sections as objects."""

from __future__ import annotations

from pathlib import Path

from hermes.compression import CompressionSettings
from hermes.memory import MemoryLimits, MemoryStore
from hermes.review import ReviewSettings

from .config import Config


def compression_settings(config: Config, model: str) -> CompressionSettings:
    """``[compression]``, with the per-model threshold for ``model`` if one is set."""

    thresholds: dict[str, float] = config.get("compression", "thresholds")
    threshold = thresholds.get(model, config.get("compression", "threshold"))
    aux_model: str = config.get("compression", "aux_model")
    return CompressionSettings(
        enabled=config.get("compression", "enabled"),
        threshold_ratio=float(threshold),
        tail_ratio=config.get("compression", "tail_ratio"),
        protect_first=config.get("compression", "protect_first"),
        protect_last=config.get("compression", "protect_last"),
        aux_model=aux_model or None,
        summary_timeout=config.get("compression", "summary_timeout"),
    )


def memory_store(config: Config, data_dir: Path) -> MemoryStore | None:
    """The long-term memory under ``<data_dir>/memories``; None when ``[memory]`` is off."""
    if not config.get("memory", "enabled"):
        return None
    limits = MemoryLimits(config.get("memory", "memory_chars"), config.get("memory", "user_chars"))
    return MemoryStore(data_dir / "memories", limits)


def review_settings(config: Config) -> ReviewSettings:
    """``[review]`` (reviews need ``[memory] enabled`` too: no store, no review)."""
    model: str = config.get("review", "model")
    return ReviewSettings(
        enabled=config.get("review", "enabled"),
        interval=config.get("review", "interval"),
        max_iterations=config.get("review", "max_iterations"),
        token_budget=config.get("review", "token_budget"),
        model=model or None,
        idle_delay=config.get("review", "idle_delay"),
    )
