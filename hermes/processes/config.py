"""``ProcessConfig``: every number of the process registry, with Hermes' defaults."""

from __future__ import annotations

from pathlib import Path

import attrs

from hermes.checks import count, flag, name, one_of, seconds

LEFTOVER_POLICIES = ("kill", "list")
"""What a restarted daemon may do with the foreground commands a dead one left running."""

LABEL = "process config"
_count = count(LABEL)
_seconds = seconds(LABEL, zero=True)
_positive_seconds = seconds(LABEL)
_flag = flag(LABEL)


@attrs.frozen(slots=True, kw_only=True)
class ProcessConfig:
    """Limits, budgets and rate limits of one session's process registry.

    The defaults are Hermes' (``tools/process_registry.py``) where it has one.
    """

    # -- registry -----------------------------------------------------------------------
    max_processes: int = attrs.field(default=64, validator=_count)
    """Processes a registry holds, running and finished; the oldest finished go first."""
    finished_ttl: float = attrs.field(default=1800.0, validator=_seconds)
    """Seconds a finished process stays listed (Hermes' ``FINISHED_TTL_SECONDS``)."""
    prune_interval: float = attrs.field(default=60.0, validator=_positive_seconds)
    """Seconds between sweeps for expired finished processes."""
    shell: str = attrs.field(default="bash", validator=name(LABEL, "a program name"))
    """Commands run as ``<shell> -c COMMAND``."""

    # -- output ---------------------------------------------------------------------------
    buffer_chars: int = attrs.field(default=200_000, validator=_count)
    """Rolling output buffer per process (Hermes' ``MAX_OUTPUT_CHARS``)."""
    read_chunk: int = attrs.field(default=65_536, validator=_count)
    """Bytes read from the output pipe at a time (never by line)."""
    poll_tail: int = attrs.field(default=1000, validator=_count)
    """Characters of recent output a poll returns."""
    log_limit: int = attrs.field(default=10_000, validator=_count)
    """Characters a log page holds by default."""
    max_line: int = attrs.field(default=4096, validator=_count)
    """A line longer than this is cut for pattern matching (output without newlines)."""

    # -- stopping -----------------------------------------------------------------------
    kill_grace: float = attrs.field(default=1.0, validator=_seconds)
    """Seconds between SIGTERM and SIGKILL to the group."""
    kill_wait: float = attrs.field(default=2.0, validator=_seconds)
    """Seconds to wait for the group to vanish after SIGKILL (and for the leader's reaping)."""
    drain_timeout: float = attrs.field(default=1.0, validator=_seconds)
    """Seconds to wait for the output pipe's end after the group is gone (an escaped holder)."""

    # -- watching -------------------------------------------------------------------------
    pattern_interval: float = attrs.field(default=15.0, validator=_seconds)
    """At most one pattern notice per process per this many seconds."""
    pattern_strikes: int = attrs.field(default=3, validator=_count)
    """Consecutive windows with dropped matches that disable pattern watching."""
    pattern_lifetime: int = attrs.field(default=8, validator=_count)
    """Pattern notices per process lifetime; then watching stops."""
    event_lines: int = attrs.field(default=20, validator=_count)
    """Matching lines a pattern notice carries."""
    event_chars: int = attrs.field(default=2000, validator=_count)
    """Characters a pattern notice carries."""
    notice_tail: int = attrs.field(default=2000, validator=_count)
    """Characters of final output a completion notice carries."""
    breaker_limit: int = attrs.field(default=15, validator=_count)
    """Notices delivered by the whole registry within ``breaker_period``; one more trips it."""
    breaker_period: float = attrs.field(default=10.0, validator=_seconds)
    breaker_cooldown: float = attrs.field(default=30.0, validator=_seconds)
    """Seconds notices are held once the breaker trips; then one summary."""

    # -- calls ----------------------------------------------------------------------------
    wait_max: float = attrs.field(default=180.0, validator=_seconds)
    """Longest ``wait`` (Hermes caps it at ``TERMINAL_TIMEOUT``)."""
    write_timeout: float = attrs.field(default=5.0, validator=_seconds)
    """Seconds a stdin write may block (the process does not read) before stdin is closed."""
    max_write: int = attrs.field(default=65_536, validator=_count)
    """Bytes one stdin write may carry."""
    store_timeout: float = attrs.field(default=5.0, validator=_positive_seconds)
    """Timeout of each checkpoint write to the store."""
    adopted_poll: float = attrs.field(default=1.0, validator=_positive_seconds)
    """Seconds between liveness checks of a process adopted after a restart."""

    # -- redirects -----------------------------------------------------------------------
    background_on_redirect: bool = attrs.field(default=True, validator=_flag)
    """A redirect that arrives while a foreground ``terminal`` command runs moves it to
    the background (Hermes: seeds #8, #13, #220); False: the turn waits for it."""

    # -- after a crash ----------------------------------------------------------------------
    leftover_commands: str = attrs.field(default="kill", validator=one_of(LABEL, LEFTOVER_POLICIES))
    """Foreground tool commands a dead daemon left running, found at the next start:
    ``kill`` their groups, or ``list`` them (``hermes orphans``) and leave them alone."""

    # -- the daemon's -----------------------------------------------------------------------
    estop: Path | None = None
    """The emergency stop's file (``hermes pause``; not a config key): while it exists
    notices are held, not delivered (``hold.py``); the processes run on."""

    @property
    def stop_budget(self) -> float:
        """What a watcher's graceful stop may take: the kill ladder, reaping, a checkpoint."""
        return self.kill_grace + 2 * self.kill_wait + 1.0
