"""``ProcessConfig``: every number of the process registry, with Hermes' defaults."""

from __future__ import annotations

import math
from pathlib import Path

import attrs

from actors import is_count, is_number

LEFTOVER_POLICIES = ("kill", "list")
"""What a restarted daemon may do with the foreground commands a dead one left running."""


@attrs.frozen(slots=True, kw_only=True)
class ProcessConfig:
    """Limits, budgets and rate limits of one session's process registry.

    The defaults are Hermes' (``tools/process_registry.py``) where it has one.
    """

    # -- registry -----------------------------------------------------------------------
    max_processes: int = 64
    """Processes a registry holds, running and finished; the oldest finished go first."""
    finished_ttl: float = 1800.0
    """Seconds a finished process stays listed (Hermes' ``FINISHED_TTL_SECONDS``)."""
    prune_interval: float = 60.0
    """Seconds between sweeps for expired finished processes."""
    shell: str = "bash"
    """Commands run as ``<shell> -c COMMAND``."""

    # -- output ---------------------------------------------------------------------------
    buffer_chars: int = 200_000
    """Rolling output buffer per process (Hermes' ``MAX_OUTPUT_CHARS``)."""
    read_chunk: int = 65_536
    """Bytes read from the output pipe at a time (never by line)."""
    poll_tail: int = 1000
    """Characters of recent output a poll returns."""
    log_limit: int = 10_000
    """Characters a log page holds by default."""
    max_line: int = 4096
    """A line longer than this is cut for pattern matching (output without newlines)."""

    # -- stopping -----------------------------------------------------------------------
    kill_grace: float = 1.0
    """Seconds between SIGTERM and SIGKILL to the group."""
    kill_wait: float = 2.0
    """Seconds to wait for the group to vanish after SIGKILL (and for the leader's reaping)."""
    drain_timeout: float = 1.0
    """Seconds to wait for the output pipe's end after the group is gone (an escaped holder)."""

    # -- watching -------------------------------------------------------------------------
    pattern_interval: float = 15.0
    """At most one pattern notice per process per this many seconds."""
    pattern_strikes: int = 3
    """Consecutive windows with dropped matches that disable pattern watching."""
    pattern_lifetime: int = 8
    """Pattern notices per process lifetime; then watching stops."""
    event_lines: int = 20
    """Matching lines a pattern notice carries."""
    event_chars: int = 2000
    """Characters a pattern notice carries."""
    notice_tail: int = 2000
    """Characters of final output a completion notice carries."""
    breaker_limit: int = 15
    """Notices delivered by the whole registry within ``breaker_period``; one more trips it."""
    breaker_period: float = 10.0
    breaker_cooldown: float = 30.0
    """Seconds notices are held once the breaker trips; then one summary."""

    # -- calls ----------------------------------------------------------------------------
    wait_max: float = 180.0
    """Longest ``wait`` (Hermes caps it at ``TERMINAL_TIMEOUT``)."""
    write_timeout: float = 5.0
    """Seconds a stdin write may block (the process does not read) before stdin is closed."""
    max_write: int = 65_536
    """Bytes one stdin write may carry."""
    store_timeout: float = 5.0
    """Timeout of each checkpoint write to the store."""
    adopted_poll: float = 1.0
    """Seconds between liveness checks of a process adopted after a restart."""

    # -- redirects -----------------------------------------------------------------------
    background_on_redirect: bool = True
    """A redirect that arrives while a foreground ``terminal`` command runs moves it to
    the background (Hermes: seeds #8, #13, #220); False: the turn waits for it."""

    # -- after a crash ----------------------------------------------------------------------
    leftover_commands: str = "kill"
    """Foreground tool commands a dead daemon left running, found at the next start:
    ``kill`` their groups, or ``list`` them (``hermes orphans``) and leave them alone."""

    # -- the daemon's -----------------------------------------------------------------------
    estop: Path | None = None
    """The emergency stop's file (``hermes pause``; not a config key): while it exists
    notices are held, not delivered (``hold.py``); the processes run on."""

    def __attrs_post_init__(self) -> None:
        counts = (
            "max_processes",
            "buffer_chars",
            "read_chunk",
            "poll_tail",
            "log_limit",
            "max_line",
            "pattern_strikes",
            "pattern_lifetime",
            "event_lines",
            "event_chars",
            "notice_tail",
            "breaker_limit",
            "max_write",
        )
        for name in counts:
            value = getattr(self, name)
            if not is_count(value) or value < 1:
                raise ValueError(f"ProcessConfig.{name} must be an int >= 1, got {value!r}")
        seconds = (
            "finished_ttl",
            "prune_interval",
            "kill_grace",
            "kill_wait",
            "drain_timeout",
            "pattern_interval",
            "breaker_period",
            "breaker_cooldown",
            "wait_max",
            "write_timeout",
            "store_timeout",
            "adopted_poll",
        )
        for name in seconds:
            value = getattr(self, name)
            if not is_number(value) or not 0 <= value < math.inf:
                raise ValueError(f"ProcessConfig.{name} must be seconds >= 0, got {value!r}")
        for name in ("prune_interval", "adopted_poll", "store_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"ProcessConfig.{name} must be > 0, got {getattr(self, name)!r}")
        if self.leftover_commands not in LEFTOVER_POLICIES:
            raise ValueError(
                "ProcessConfig.leftover_commands must be one of "
                f"{', '.join(LEFTOVER_POLICIES)}, got {self.leftover_commands!r}"
            )
        if type(self.background_on_redirect) is not bool:
            raise ValueError(
                "ProcessConfig.background_on_redirect must be true or false, "
                f"got {self.background_on_redirect!r}"
            )
        if not isinstance(self.shell, str) or not self.shell:
            raise ValueError(f"ProcessConfig.shell must be a program name, got {self.shell!r}")

    @property
    def stop_budget(self) -> float:
        """What a watcher's graceful stop may take: the kill ladder, reaping, a checkpoint."""
        return self.kill_grace + 2 * self.kill_wait + 1.0
