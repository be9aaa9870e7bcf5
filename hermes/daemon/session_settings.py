"""The configuration's ``[compression]``, ``[memory]``, ``[review]``, ``[tools]``,
``[processes]`` and ``[subagents]`` sections as the objects sessions and their tools take."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hermes.compression import CompressionSettings
from hermes.goals import GoalSettings
from hermes.memory import MemoryLimits, MemoryStore
from hermes.processes import ProcessConfig
from hermes.review import ReviewSettings
from hermes.stopgates import StopSettings
from hermes.subagents import SubagentConfig
from hermes.tools import OutputBudget, ToolRegistry, default_registry

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
        abort_on_summary_failure=config.get("compression", "abort_on_summary_failure"),
    )


def memory_store(config: Config, data_dir: Path) -> MemoryStore | None:
    """The long-term memory under ``<data_dir>/memories``; None when ``[memory]`` is off."""
    if not config.get("memory", "enabled"):
        return None
    limits = MemoryLimits(config.get("memory", "memory_chars"), config.get("memory", "user_chars"))
    return MemoryStore(data_dir / "memories", limits)


def review_settings(config: Config) -> ReviewSettings:
    """``[review]`` and ``[skills] review_interval`` (memory reviews need ``[memory]
    enabled``, skill reviews ``[skills] enabled``: no store or tool, no review)."""
    model: str = config.get("review", "model")
    return ReviewSettings(
        enabled=config.get("review", "enabled"),
        interval=config.get("review", "interval"),
        skill_interval=config.get("skills", "review_interval"),
        max_iterations=config.get("review", "max_iterations"),
        token_budget=config.get("review", "token_budget"),
        model=model or None,
        idle_delay=config.get("review", "idle_delay"),
    )


def stop_settings(config: Config) -> StopSettings:
    """``[session] stall_guard``, ``verify_on_stop``, ``late_checks`` and
    ``late_check_timeout``: the turn's stop gates."""
    return StopSettings(
        stall_guard=config.get("session", "stall_guard"),
        verify_on_stop=config.get("session", "verify_on_stop"),
        late_checks=tuple(config.get("session", "late_checks")),
        late_check_timeout=config.get("session", "late_check_timeout"),
    )


def goal_settings(config: Config, estop_file: Path | None = None) -> GoalSettings:
    """``[goals]`` and ``[loops]``: standing goals and loops (``hermes.goals``); while
    ``estop_file`` (the emergency stop's) exists they start no turn."""
    return GoalSettings(
        estop_file=estop_file,
        max_turns=config.get("goals", "max_turns"),
        judge_model=config.get("goals", "judge_model"),
        judge_timeout=config.get("goals", "judge_timeout"),
        gate_timeout=config.get("goals", "gate_timeout"),
        gate_retries=config.get("goals", "gate_retries"),
        loop_min_interval=config.get("loops", "min_interval"),
        loop_max_ticks=config.get("loops", "max_ticks"),
    )


def tool_settings(config: Config) -> dict[str, Any]:
    """``[tools]`` and ``approvals.unattended``: the ``SessionConfig`` fields they set."""
    return {
        "call_timeout": config.get("tools", "deadline") or math.inf,  # 0: no deadline (#165)
        "output_budget": OutputBudget(
            per_result=config.get("tools", "result_chars"),
            per_batch=config.get("tools", "batch_chars"),
        ),
        "env_passthrough": tuple(config.get("tools", "env_passthrough")),
        "unattended_approvals": config.get("approvals", "unattended"),
        "loop_halt": config.get("tools", "loop_halt"),
        "spawn_cap": config.get("tools", "spawn_cap"),
    }


def tool_registry(config: Config) -> ToolRegistry:
    """The built-in tools, the terminal with ``[tools]``'s foreground timeouts."""
    return default_registry(
        terminal_timeout=config.get("tools", "foreground_timeout"),
        terminal_max_timeout=config.get("tools", "foreground_max_timeout"),
    )


_PROCESS_KEYS = (
    "leftover_commands",
    "max_processes",
    "finished_ttl",
    "buffer_chars",
    "poll_tail",
    "log_limit",
    "kill_grace",
    "wait_max",
    "pattern_interval",
    "pattern_lifetime",
    "notice_tail",
    "max_write",
    "background_on_redirect",
)


def process_config(config: Config) -> ProcessConfig:
    """``[processes]``: every session's background-process registry."""
    return ProcessConfig(**{key: config.get("processes", key) for key in _PROCESS_KEYS})


_SUBAGENT_KEYS = (
    "max_depth",
    "orchestrator_enabled",
    "max_concurrent_children",
    "max_total_children",
    "admission",
    "queue_capacity",
    "max_batch",
    "max_background",
    "background",
    "max_iterations",
    "stale_between_tools",
    "stale_in_tool",
    "max_summary_chars",
)


def subagent_config(config: Config) -> SubagentConfig:
    """``[subagents]``: the daemon's delegation limits (one ``SubagentRuntime``)."""
    values: dict[str, Any] = {key: config.get("subagents", key) for key in _SUBAGENT_KEYS}
    timeout = config.get("subagents", "child_timeout")
    model = config.get("subagents", "model")
    floor = SubagentConfig().summary_floor
    return SubagentConfig(
        **values,
        child_timeout=float(timeout) if timeout > 0 else None,
        model=model or None,
        summary_floor=min(floor, values["max_summary_chars"]),
    )
