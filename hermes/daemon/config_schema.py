"""The configuration's schema: every section and key, its default, its check and its doc line.

``config.py`` reads a TOML file against ``SCHEMA``; ``docs/config.md`` holds
the same table (``render_docs``; a test checks that it names every key). A
check returns ``None`` for a good value, else what was expected, which becomes
the error.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable
from typing import Any

import attrs

BUSY_MODES = ("interrupt", "queue", "steer", "reject", "rollback")
LOG_LEVELS = ("debug", "info", "warning", "error")


Check = Callable[[Any], str | None]
"""Returns None when the value is fine, else what was expected."""


def _int(low: int, high: int | None = None) -> Check:
    def check(value: Any) -> str | None:
        ok = type(value) is int and value >= low and (high is None or value <= high)
        if ok:
            return None
        upper = f" and <= {high}" if high is not None else ""
        return f"an integer >= {low}{upper}"

    return check


def _number(low: float) -> Check:
    def check(value: Any) -> str | None:
        if type(value) in (int, float) and math.isfinite(value) and value > low:
            return None
        return f"a number > {low:g}"

    return check


def _delay(value: Any) -> str | None:
    if type(value) in (int, float) and math.isfinite(value) and 0 <= value <= 10:
        return None
    return "a number from 0 to 10"


def _idle_seconds(value: Any) -> str | None:
    if type(value) in (int, float) and math.isfinite(value) and 0 <= value < 3600:
        return None
    return "a number of seconds from 0 to 3600"


def _seconds(value: Any) -> str | None:
    if type(value) in (int, float) and math.isfinite(value) and value >= 0:
        return None
    return "a number of seconds >= 0"


NEVER_PASSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The daemon's own credentials (``hermes.tools.env.NEVER_PASSED``: not imported, so that
reading the configuration loads no tool)."""


def _env_names(value: Any) -> str | None:
    expected = "a list of environment variable names like 'GITHUB_TOKEN'"
    if not isinstance(value, list):
        return expected
    for item in value:
        if not isinstance(item, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", item):
            return expected
        if item in NEVER_PASSED:
            return f"{expected}, not the daemon's own credential {item}"
    return None


def _str(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "a non-empty string"


def _bool(value: Any) -> str | None:
    return None if type(value) is bool else "a boolean (true or false)"


def _choice(*choices: str) -> Check:
    def check(value: Any) -> str | None:
        return None if value in choices else "one of " + ", ".join(choices)

    return check


def _host(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "an IP address or 'localhost'"
    if value == "localhost":
        return None
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return "an IP address or 'localhost'"
    return None


def _origins(value: Any) -> str | None:
    expected = "a list of origins like 'http://localhost:3000' (scheme://host[:port], no path)"
    if not isinstance(value, list):
        return expected
    for item in value:
        if not isinstance(item, str) or not re.fullmatch(r"[A-Za-z][\w+.-]*://[^/?#\s]+", item):
            return expected
    return None


def _host_names(value: Any) -> str | None:
    expected = "a list of host names or IP addresses, without a port"
    if not isinstance(value, list):
        return expected
    for item in value:
        if not isinstance(item, str) or not re.fullmatch(r"[A-Za-z0-9.:_\[\]-]+", item):
            return expected
    return None


def _skill_names(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(v, str) and re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", v) for v in value
    )
    return None if ok else "a list of skill names like 'commit-message'"


def _dir_list(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(v, str) and v.startswith(("/", "~")) for v in value
    )
    return None if ok else "a list of absolute directory paths"


def _finding_keys(value: Any) -> str | None:
    ok = isinstance(value, list) and all(
        isinstance(v, str) and re.fullmatch(r"[a-z0-9_]+", v) for v in value
    )
    return None if ok else "a list of finding keys like 'recursive_delete'"


def _model_names(value: Any) -> str | None:
    expected = "a list of distinct model names"
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return expected
    return None if len(set(value)) == len(value) else expected


def _commands(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
    return None if ok else "a list of shell commands like 'ruff check {files}'"


def _optional_str(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _ratio(value: Any) -> str | None:
    if type(value) in (int, float) and math.isfinite(value) and 0 < value <= 1:
        return None
    return "a number > 0 and <= 1"


def _ratios_by_model(value: Any) -> str | None:
    expected = "a table of model name = number > 0 and <= 1"
    if not isinstance(value, dict):
        return expected
    if all(isinstance(k, str) and k and _ratio(v) is None for k, v in value.items()):
        return None
    return expected


@attrs.frozen(slots=True)
class Key:
    default: Any
    check: Check
    doc: str
    reload: bool = False
    """Takes effect on SIGHUP (else at the next start)."""


SCHEMA: dict[str, dict[str, Key]] = {
    "": {
        "data_dir": Key("", _optional_str, "data directory ('' = XDG data dir)"),
    },
    "daemon": {
        "host": Key("127.0.0.1", _host, "address to listen on"),
        "port": Key(0, _int(0, 65535), "port (0: any free port, see the endpoint file)"),
        "shutdown_timeout": Key(10.0, _number(0), "seconds for a graceful shutdown"),
        "unix_socket": Key(
            False, _bool, "also listen on <runtime>/hermes.sock (mode 0600; same protocol)"
        ),
    },
    "model": {
        "name": Key("", _optional_str, "model id ('' = claude-sonnet-4-5, or hermes-demo offline)"),
        "base_url": Key("", _optional_str, "Messages API base URL ('' = the SDK default)"),
        "max_tokens": Key(4096, _int(1), "max tokens per reply", reload=True),
        "auto_recovery_cycles": Key(
            5,
            _int(0),
            "waits (15, 30, 60 s) before asking a failing provider again, once retries "
            "are spent (0: end the turn)",
            reload=True,
        ),
        "context_window": Key(
            200_000,
            _int(1024),
            "tokens the model's context holds (compaction and subagent "
            "summaries are sized against it)",
            reload=True,
        ),
        "fake_event_delay": Key(
            0.0, _delay, "offline demo model: seconds between stream events (demos, tests)"
        ),
        "fallback_models": Key(
            [],
            _model_names,
            "models tried in order once a call's retries are spent on an error another model "
            "may not share (overload, rate limit, server error, timeout, no access, refusal)",
        ),
    },
    "session": {
        "cwd": Key("", _optional_str, "tools' working directory ('' = the daemon's)", reload=True),
        "busy_mode": Key("interrupt", _choice(*BUSY_MODES), "prompt mid-turn", reload=True),
        "crossed_reply": Key(
            "hermes",
            _choice("hermes", "marked"),
            "a reply cut by a redirect or an interrupt: Hermes' shape, or kept marked",
            reload=True,
        ),
        "max_iterations": Key(
            500, _int(1), "tool steps per turn, then one grace call (seed #180)", reload=True
        ),
        "approval_timeout": Key(300.0, _number(0), "seconds to wait for approval", reload=True),
        "yolo": Key(False, _bool, "skip the dangerous-command list", reload=True),
        "load_context_files": Key(True, _bool, "read AGENTS.md and friends", reload=True),
        "stall_guard": Key(
            True, _bool, "nudge a reply that announces a next step without a tool call", reload=True
        ),
        "verify_on_stop": Key(
            False, _bool, "send back an answer after code edits with no passing check", reload=True
        ),
        "late_checks": Key(
            [],
            _commands,
            "checker commands run at a final answer on the code files the turn edited",
            reload=True,
        ),
        "late_check_timeout": Key(
            60.0, _number(0), "seconds a late_checks command may run", reload=True
        ),
    },
    "compression": {
        "enabled": Key(True, _bool, "compact automatically as the context fills", reload=True),
        "abort_on_summary_failure": Key(
            False, _bool, "every failed summary aborts, keeping every message", reload=True
        ),
        "threshold": Key(
            0.5, _ratio, "compact at this share of (context_window - max_tokens)", reload=True
        ),
        "thresholds": Key(
            {}, _ratios_by_model, "per-model threshold overrides: { model = share }", reload=True
        ),
        "tail_ratio": Key(
            0.2, _ratio, "share of the threshold kept verbatim at the end", reload=True
        ),
        "protect_first": Key(3, _int(0), "messages kept verbatim at the start", reload=True),
        "protect_last": Key(6, _int(1), "fewest messages kept verbatim at the end", reload=True),
        "aux_model": Key(
            "", _optional_str, "model that writes summaries ('' = the session's)", reload=True
        ),
        "summary_timeout": Key(120.0, _number(0), "seconds for a summary call", reload=True),
    },
    "memory": {
        "enabled": Key(True, _bool, "MEMORY.md / USER.md, the memory tool and reviews"),
        "memory_chars": Key(2200, _int(100), "cap of MEMORY.md (agent notes), in characters"),
        "user_chars": Key(1375, _int(100), "cap of USER.md (user profile), in characters"),
    },
    "skills": {
        "enabled": Key(True, _bool, "skills: the index in the prompt and the skill_view tool"),
        "pinned": Key([], _skill_names, "skills loaded in full at every session start"),
        "trusted_projects": Key(
            [], _dir_list, "project directories whose .hermes/skills are read (hermes skills trust)"
        ),
        "review_interval": Key(
            10, _int(0), "a skill review after N tool iterations (0: never)", reload=True
        ),
        "write_approval": Key(
            False,
            _bool,
            "the agent's and reviews' skill changes wait for the person (hermes skills pending)",
        ),
    },
    "curator": {
        "enabled": Key(True, _bool, "the scheduled curator of the agent's skills"),
        "interval_hours": Key(168, _int(1), "hours between two curator passes"),
        "stale_after_days": Key(14, _int(1), "an agent skill unused this long is marked stale"),
        "archive_after_days": Key(30, _int(1), "an agent skill unused this long is archived"),
        "similarity": Key(0.7, _ratio, "word overlap at which two skills are near-duplicates"),
    },
    "approvals": {
        "mode": Key(
            "smart",
            _choice("smart", "manual", "off"),
            "flagged commands: smart (the judge model first), manual (the person), off (run)",
            reload=True,
        ),
        "judge_model": Key(
            "", _optional_str, "smart approvals' model ('' = the session's)", reload=True
        ),
        "command_allowlist": Key(
            [], _finding_keys, "finding keys approved 'always' (hermes approvals)", reload=True
        ),
        "unattended": Key(
            "deny",
            _choice("deny", "allow"),
            "flagged commands where nobody is attached to approve (headless sessions, cron "
            "runs): deny or allow (subagents are always denied)",
            reload=True,
        ),
    },
    "tools": {
        "deadline": Key(
            420.0,
            _seconds,
            "seconds before a tool call is abandoned (0: never; terminal: its own timeout + 11 s)",
            reload=True,
        ),
        "result_chars": Key(
            100_000,
            _int(1000),
            "characters of one tool result before it is saved to a file (a preview stays)",
            reload=True,
        ),
        "batch_chars": Key(
            200_000,
            _int(1000),
            "characters of one batch's results before the largest are saved to files",
            reload=True,
        ),
        "foreground_timeout": Key(180, _int(1), "terminal: a foreground command's default timeout"),
        "foreground_max_timeout": Key(
            600,
            _int(1),
            "terminal: longest foreground timeout; a longer one runs in the background",
        ),
        "env_passthrough": Key(
            [],
            _env_names,
            "secret-looking variables the tools' commands still get (e.g. GITHUB_TOKEN for gh)",
            reload=True,
        ),
        "spawn_cap": Key(
            50,
            _int(0),
            "subagent-spawning calls a turn may make; the batch past it is refused and the "
            "turn halts (0: no cap)",
            reload=True,
        ),
        "loop_halt": Key(
            "scheduled",
            _choice("scheduled", "unattended", "never"),
            "which looping turns the repeat guard halts: scheduled (cron and kanban runs, as "
            "Hermes), unattended (also any turn nobody can approve in, subagents included), "
            "never (warnings only)",
            reload=True,
        ),
    },
    "goals": {
        "max_turns": Key(20, _int(1, 1000), "a new /goal's turn budget", reload=True),
        "judge_model": Key(
            "",
            _optional_str,
            "the goal judge's model ('' = approvals.judge_model, else the session's)",
            reload=True,
        ),
        "judge_timeout": Key(30.0, _number(0), "seconds for one judge call", reload=True),
        "gate_timeout": Key(300.0, _number(0), "seconds a quality gate may run", reload=True),
        "gate_retries": Key(
            3, _int(0), "failures in a row of one gate before the goal pauses", reload=True
        ),
    },
    "loops": {
        "min_interval": Key(30.0, _number(0), "shortest /loop interval, seconds", reload=True),
        "max_ticks": Key(100, _int(0), "wakeups before a /loop pauses (0: no limit)", reload=True),
    },
    "subagents": {
        "max_depth": Key(
            1, _int(1, 3), "levels of children below a session (1: only it delegates)"
        ),
        "orchestrator_enabled": Key(
            True, _bool, "a child above the bottom level of max_depth delegates further"
        ),
        "max_concurrent_children": Key(10, _int(1), "running children per parent session"),
        "max_total_children": Key(64, _int(1), "running children in the whole daemon"),
        "admission": Key(
            "queue",
            _choice("queue", "reject"),
            "at a limit: queue the tasks in order, or reject the batch (Hermes)",
        ),
        "queue_capacity": Key(256, _int(1), "tasks waiting for a slot, daemon-wide"),
        "max_batch": Key(100, _int(1), "tasks in one delegate_task call"),
        "max_background": Key(
            10, _int(1), "a parent's background pool: subagents of background delegations"
        ),
        "background": Key(
            "top_level",
            _choice("top_level", "model"),
            "who places a delegation: code (the top level's in the background, a subagent's "
            "inline; seed #252) or the model's background flag",
        ),
        "max_iterations": Key(250, _int(1), "tool-using steps per child turn"),
        "stale_between_tools": Key(
            450.0, _number(0), "seconds without progress outside a tool before a child is stopped"
        ),
        "stale_in_tool": Key(1200.0, _number(0), "the same, inside one tool call"),
        "child_timeout": Key(0.0, _seconds, "wall-clock seconds per child (0: no cap)"),
        "max_summary_chars": Key(24_000, _int(1), "characters of a child's summary at most"),
        "model": Key("", _optional_str, "the children's model ('' = the parent's)"),
    },
    "cron": {
        "allow_agent_scheduling": Key(
            False, _bool, "a scheduled job's session keeps the cronjob tool (seed #118)"
        ),
    },
    "kanban": {
        "dispatch": Key(True, _bool, "the daemon hands todo cards to workers on its own"),
        "auto_decompose": Key(
            True, _bool, "the dispatcher splits triage cards into subcards (seed #259)"
        ),
        "auto_decompose_per_tick": Key(3, _int(1), "triage cards one dispatch pass decomposes"),
        "max_running": Key(3, _int(1), "kanban workers running at once"),
        "stop_nudge": Key(
            True, _bool, "a worker ending without handing off its card is sent back (seed #230)"
        ),
        "worker_timeout": Key(600.0, _number(0), "seconds of worker inactivity (0: no limit)"),
        "aux_model": Key(
            "", _optional_str, "model of specify, decompose and the judge ('' = goals.judge_model)"
        ),
    },
    "checkpoints": {
        "enabled": Key(
            False,
            _bool,
            "snapshot working directories before writes and destructive commands",
            reload=True,
        ),
    },
    "review": {
        "enabled": Key(True, _bool, "background reviews (memory and skills)", reload=True),
        "interval": Key(10, _int(1), "review after every N completed user turns", reload=True),
        "max_iterations": Key(16, _int(1), "model calls per review", reload=True),
        "token_budget": Key(600_000, _int(1000), "tokens a review may spend", reload=True),
        "model": Key("", _optional_str, "model for reviews ('' = the session's)", reload=True),
        "idle_delay": Key(
            2.0,
            _idle_seconds,
            "seconds a session must stay idle before a due review starts",
            reload=True,
        ),
    },
    "gateway": {
        "max_frame_bytes": Key(1 << 20, _int(1024), "largest WebSocket frame/message"),
        "max_body_bytes": Key(1 << 20, _int(1024), "largest HTTP request body"),
        "client_queue": Key(1000, _int(1), "events buffered per client subscription"),
        "replay_events": Key(2000, _int(0), "events kept per session for since= replay"),
        "stored_events": Key(
            20000, _int(0), "events kept per session in the database (0 = none stored)"
        ),
        "max_connections": Key(4096, _int(1), "concurrent connections that presented the token"),
        "max_unauthenticated": Key(
            64,
            _int(1),
            "connections still in their handshake (per listener); when full, the oldest is dropped",
        ),
        "handshake_timeout": Key(
            5.0, _number(0), "seconds a new connection has to present its head and token"
        ),
        "owner_reserve": Key(
            8, _int(0), "unix-socket connections (owner's uid only) allowed beyond max_connections"
        ),
        "client_buffer_bytes": Key(
            1 << 20, _int(65536), "bytes queued for one WebSocket client before its requests wait"
        ),
        "write_timeout": Key(
            10.0, _number(0), "seconds a WebSocket client may take no byte of a frame, then dropped"
        ),
        "max_subscriptions": Key(1000, _int(1), "event subscriptions per WebSocket connection"),
        "requests_in_flight": Key(32, _int(1), "concurrent requests per connection"),
        "allowed_origins": Key(
            [], _origins, "Origin values accepted besides the daemon's own loopback origins"
        ),
        "allowed_hosts": Key(
            [], _host_names, "Host names accepted besides loopback and the bound address"
        ),
        "sse_keepalive": Key(15.0, _number(0), "seconds between keepalives on an idle SSE stream"),
    },
    "processes": {
        "leftover_commands": Key(
            "kill",
            _choice("kill", "list"),
            "foreground commands a killed daemon left running, found at start: "
            "kill them, or list them (hermes orphans)",
        ),
        "max_processes": Key(64, _int(1), "background processes a session holds, running or done"),
        "finished_ttl": Key(1800.0, _seconds, "seconds a finished process stays listed"),
        "buffer_chars": Key(200_000, _int(1), "rolling output buffer per process, characters"),
        "poll_tail": Key(1000, _int(1), "characters of recent output a poll returns"),
        "log_limit": Key(10_000, _int(1), "characters a log page holds by default"),
        "kill_grace": Key(1.0, _seconds, "seconds between SIGTERM and SIGKILL to a process group"),
        "wait_max": Key(180.0, _seconds, "seconds the longest process wait may block"),
        "pattern_interval": Key(
            15.0, _seconds, "seconds between two watch-pattern notices of one process"
        ),
        "pattern_lifetime": Key(8, _int(1), "watch-pattern notices per process lifetime"),
        "notice_tail": Key(2000, _int(1), "characters of final output a completion notice carries"),
        "max_write": Key(65_536, _int(1), "bytes one stdin write to a process may carry"),
        "background_on_redirect": Key(
            True,
            _bool,
            "a redirect arriving while a foreground terminal command runs moves the command "
            "to the background (false: the turn waits for it)",
        ),
    },
    "logging": {
        "level": Key("info", _choice(*LOG_LEVELS), "log level", reload=True),
        "max_bytes": Key(5 << 20, _int(4096), "log file size before rotation"),
        "backups": Key(3, _int(0), "rotated files kept"),
    },
}
