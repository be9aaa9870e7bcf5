"""The [tools], [approvals] and [processes] keys of issue 24 (items 3, 7-9): defaults,
settings, errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hermes.daemon.config import ConfigError, load_config
from hermes.daemon.session_settings import process_config, tool_registry, tool_settings
from hermes.processes import ProcessConfig
from hermes.session import SessionConfig
from hermes.tools.builtin import TerminalTool


def test_defaults_are_hermes_and_reach_the_session_and_terminal(tmp_path: Path) -> None:
    config = load_config(None, env={})
    settings = tool_settings(config)
    assert settings["call_timeout"] == 420.0
    assert settings["unattended_approvals"] == "deny"
    assert settings["env_passthrough"] == ()
    assert settings["loop_halt"] == "scheduled"  # seed #190: only runs nobody watches halt
    assert settings["spawn_cap"] == 50  # seed #191
    session = SessionConfig(model="m", cwd=tmp_path, spill_dir=tmp_path, **settings)
    assert session.call_timeout == 420.0 and session.loop_halt == "scheduled"
    # The parent's step cap is Hermes' installer-written agent.max_turns (seed #180).
    assert config.get("session", "max_iterations") == 500 == session.max_iterations
    terminal = tool_registry(config).get("terminal")
    assert isinstance(terminal, TerminalTool)
    assert (terminal.default_timeout, terminal.max_timeout) == (180, 600)


def test_set_values_reach_the_session_and_terminal(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[tools]\ndeadline = 90\nforeground_timeout = 30\nforeground_max_timeout = 60\n"
        "env_passthrough = ['GITHUB_TOKEN']\nloop_halt = 'unattended'\nspawn_cap = 0\n"
        "[approvals]\nunattended = 'allow'\n"
    )
    config = load_config(path, env={})
    settings = tool_settings(config)
    assert settings["call_timeout"] == 90
    assert settings["env_passthrough"] == ("GITHUB_TOKEN",)
    assert settings["unattended_approvals"] == "allow"
    assert settings["loop_halt"] == "unattended" and settings["spawn_cap"] == 0
    terminal = tool_registry(config).get("terminal")
    assert isinstance(terminal, TerminalTool)
    assert (terminal.default_timeout, terminal.max_timeout) == (30, 60)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools]\ndeadline = -1\n", "[tools] deadline: expected"),
        ("[tools]\ndeadline = 'long'\n", "[tools] deadline: expected"),
        ("[tools]\nforeground_timeout = 0\n", "[tools] foreground_timeout: expected"),
        ("[tools]\nforeground_max_timeout = 1.5\n", "[tools] foreground_max_timeout: expected"),
        ("[tools]\nresult_chars = 10\n", "[tools] result_chars: expected"),
        ("[tools]\nenv_passthrough = 'GITHUB_TOKEN'\n", "[tools] env_passthrough: expected"),
        ("[tools]\nenv_passthrough = ['no-dashes']\n", "[tools] env_passthrough: expected"),
        (
            "[tools]\nenv_passthrough = ['ANTHROPIC_API_KEY']\n",
            "not the daemon's own credential ANTHROPIC_API_KEY",
        ),
        ("[tools]\ntimeout = 3\n", "[tools] timeout: unknown key"),
        ("[tools]\nloop_halt = 'sometimes'\n", "[tools] loop_halt: expected"),
        ("[tools]\nspawn_cap = -1\n", "[tools] spawn_cap: expected"),
        ("[processes]\nmax_processes = 0\n", "[processes] max_processes: expected"),
        ("[processes]\nkill_grace = -1\n", "[processes] kill_grace: expected"),
        ("[processes]\nwait_max = 'long'\n", "[processes] wait_max: expected"),
        ("[processes]\nbackground_on_redirect = 'yes'\n", "[processes] background_on_redirect"),
        ("[processes]\nleftover_commands = 'ignore'\n", "[processes] leftover_commands"),
        ("[processes]\nmax_procs = 3\n", "[processes] max_procs: unknown key"),
        ("[approvals]\nunattended = 'ask'\n", "[approvals] unattended: expected"),
        ("[approvals]\nunattended = true\n", "[approvals] unattended: expected"),
        (
            "[tools]\nforeground_timeout = 700\n",
            "[tools] foreground_timeout (700) must be at most foreground_max_timeout (600)",
        ),
        (
            "[tools]\nresult_chars = 300000\n",
            "[tools] batch_chars (200000) must be at least result_chars (300000)",
        ),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert message in str(info.value) and str(path) in str(info.value), str(info.value)


def test_subagents_and_the_fallback_chain_are_keys(tmp_path: Path) -> None:
    from hermes.daemon.session_settings import subagent_config
    from hermes.subagents import SubagentConfig
    from supervisors import Admission

    assert subagent_config(load_config(None, env={})) == SubagentConfig()
    path = tmp_path / "config.toml"
    path.write_text(
        "[model]\nfallback_models = ['claude-b', 'claude-c']\n"
        "[subagents]\nmax_depth = 2\nmax_concurrent_children = 5\nadmission = 'reject'\n"
        "max_iterations = 12\nchild_timeout = 600\nmodel = 'claude-small'\n"
        "max_summary_chars = 1000\nbackground = 'model'\n"
    )
    config = load_config(path, env={})
    assert config.get("model", "fallback_models") == ["claude-b", "claude-c"]
    sub = subagent_config(config)
    assert (sub.max_depth, sub.max_concurrent_children, sub.admission) == (2, 5, Admission.REJECT)
    assert (sub.max_iterations, sub.child_timeout, sub.model) == (12, 600.0, "claude-small")
    assert (sub.max_summary_chars, sub.summary_floor) == (1000, 1000)
    assert sub.background == "model" and SubagentConfig().background == "top_level"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[subagents]\nmax_depth = 4\n",
            "[subagents] max_depth: expected an integer >= 1 and <= 3",
        ),
        ("[subagents]\nadmission = 'drop'\n", "[subagents] admission: expected"),
        ("[subagents]\nbackground = 'always'\n", "[subagents] background: expected"),
        ("[subagents]\nmax_iterations = 0\n", "[subagents] max_iterations: expected"),
        ("[subagents]\nchild_timeout = -1\n", "[subagents] child_timeout: expected"),
        ("[subagents]\nstale_in_tool = 'long'\n", "[subagents] stale_in_tool: expected"),
        ("[subagents]\nwidth = 3\n", "[subagents] width: unknown key"),
        ("[model]\nfallback_models = 'claude-b'\n", "[model] fallback_models: expected"),
        ("[model]\nfallback_models = ['a', 'a']\n", "[model] fallback_models: expected"),
        ("[model]\nfallback_models = ['']\n", "[model] fallback_models: expected"),
    ],
)
def test_bad_subagent_and_fallback_values_name_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert message in str(info.value), str(info.value)


def test_a_zero_deadline_means_none(tmp_path: Path) -> None:
    """Seed #165: ``0`` disables the tool deadline (a call is then bounded only by itself)."""
    path = tmp_path / "config.toml"
    path.write_text("[tools]\ndeadline = 0\n")
    settings = tool_settings(load_config(path, env={}))
    assert settings["call_timeout"] == math.inf
    session = SessionConfig(model="m", cwd=tmp_path, spill_dir=tmp_path, **settings)
    assert session.call_timeout == math.inf


def test_process_keys_reach_every_sessions_registry(tmp_path: Path) -> None:
    assert process_config(load_config(None, env={})) == ProcessConfig()  # the same defaults
    path = tmp_path / "config.toml"
    path.write_text(
        "[processes]\nmax_processes = 8\nfinished_ttl = 60\nbuffer_chars = 5000\n"
        "poll_tail = 200\nlog_limit = 3000\nkill_grace = 0.5\nwait_max = 30\n"
        "pattern_interval = 5\npattern_lifetime = 2\nnotice_tail = 500\nmax_write = 1024\n"
        "background_on_redirect = false\nleftover_commands = 'list'\n"
    )
    got = process_config(load_config(path, env={}))
    assert (got.max_processes, got.finished_ttl, got.buffer_chars) == (8, 60.0, 5000)
    assert (got.poll_tail, got.log_limit, got.kill_grace, got.wait_max) == (200, 3000, 0.5, 30)
    assert (got.pattern_interval, got.pattern_lifetime, got.notice_tail) == (5, 2, 500)
    assert got.max_write == 1024 and got.background_on_redirect is False
    assert got.leftover_commands == "list"
