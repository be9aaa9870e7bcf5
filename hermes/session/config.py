"""A session's settings, validated when built, and the busy-input modes."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from pathlib import Path

import attrs

from hermes.checks import count, one_of, positive
from hermes.compression import CompressionSettings
from hermes.goals import GoalSettings
from hermes.model.recovery import RecoveryPolicy
from hermes.review import ReviewSettings
from hermes.stopgates import StopSettings
from hermes.tools import OutputBudget

from .crossed import CrossedReply
from .guards import LOOP_HALTS, SPAWN_CAP


class BusyMode(enum.Enum):
    """What a new prompt does when it arrives while a turn is running."""

    INTERRUPT = "interrupt"
    """Redirect the running turn with it at its next seam (Hermes' default): a model
    request in flight is cut and reissued with the correction; during tools it is
    delivered after their results, as a steer."""
    QUEUE = "queue"
    """Run it after the running turn (FIFO, at most ``queue_limit`` waiting)."""
    STEER = "steer"
    """Deliver it into the running turn as a steer."""
    REJECT = "reject"
    """Refuse it with a busy error."""
    ROLLBACK = "rollback"
    """Cancel the running turn, drop its rows, run the prompt instead."""


LABEL = "session config"
_positive = positive(LABEL)
_count = count(LABEL)


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _busy_mode(value: BusyMode | str) -> BusyMode:
    if isinstance(value, BusyMode):
        return value
    try:
        return BusyMode(value)
    except ValueError:
        choices = ", ".join(m.value for m in BusyMode)
        raise ValueError(
            f"session config busy_mode: expected one of {choices}, got {value!r}"
        ) from None


def _crossed_reply(value: CrossedReply | str) -> CrossedReply:
    if isinstance(value, CrossedReply):
        return value
    try:
        return CrossedReply(value)
    except ValueError:
        choices = ", ".join(m.value for m in CrossedReply)
        raise ValueError(
            f"session config crossed_reply: expected one of {choices}, got {value!r}"
        ) from None


@attrs.frozen(slots=True, kw_only=True)
class SessionConfig:
    """Everything a session needs to know besides its collaborators."""

    model: str
    cwd: Path = attrs.field(converter=Path)
    """Working directory of the tools; the project context file is looked up from here."""
    spill_dir: Path = attrs.field(converter=Path)
    """Where tool results too large for the transcript are saved."""
    title: str | None = None
    system: str | None = None
    """The caller's own system text (context tier of the system prompt)."""
    memory_snapshot: str | None = None
    max_tokens: int = attrs.field(default=4096, validator=_count)
    thinking_budget: int | None = None
    max_iterations: int = attrs.field(default=500, validator=_count)
    """Model calls with tool use per turn before the final tool-less summary call (the one
    grace call). 500: Hermes' ``agent.max_turns`` in the config its installers write (seed
    #180)."""
    busy_mode: BusyMode = attrs.field(default=BusyMode.INTERRUPT, converter=_busy_mode)
    queue_limit: int = attrs.field(default=32, validator=_count)
    crossed_reply: CrossedReply = attrs.field(default=CrossedReply.HERMES, converter=_crossed_reply)
    """What a reply cut by a redirect or an interrupt leaves (``crossed.py``, seed #154)."""
    call_timeout: float = attrs.field(default=420.0, validator=_positive)
    """Default deadline of one tool call, in seconds (Hermes' 420; ``[tools] deadline``)."""
    output_budget: OutputBudget = attrs.field(factory=OutputBudget)
    """Characters a tool result and a batch may hold before the largest are spilled."""
    env_passthrough: tuple[str, ...] = attrs.field(default=(), converter=_names)
    """Secret-looking variables the tools' children still get (``[tools] env_passthrough``)."""
    max_parallel_tools: int = attrs.field(default=8, validator=_count)
    approval_timeout: float = attrs.field(default=300.0, validator=_positive)
    yolo: bool = False
    """Skip the dangerous-command list (never the hardline floor)."""
    approval_mode: str = attrs.field(
        default="manual", validator=one_of(LABEL, ("smart", "manual", "off"))
    )
    """``smart``: the judge model answers flagged commands first (``hermes.tools.smart``)."""
    judge_model: str = ""
    """The smart judge's model ('' = ``model``)."""
    checkpoint_dir: Path | None = None
    """Where checkpoints' shadow repositories live; ``None``: no checkpoints."""
    store_timeout: float = attrs.field(default=5.0, validator=_positive)
    settle_timeout: float = attrs.field(default=0.5, validator=_positive)
    """Bound on the shielded end-of-turn work (synthetic results, persisting them)."""
    steer_capacity: int = attrs.field(default=64, validator=_count)
    """Control messages (steer, redirect, interrupt) waiting for the running turn."""
    load_context_files: bool = True
    soul_file: Path | None = None
    """``SOUL.md``: the agent's identity (stable tier) when it exists and is not empty;
    else the built-in one. Never read by unattended sessions (subagents)."""
    context_window: int = attrs.field(default=200_000, validator=_count)
    """Tokens the model's context holds (subagent summaries are sized against what is left)."""
    unattended: bool = False
    """No person answers approvals here (a subagent): dangerous commands are denied."""
    unattended_approvals: str = attrs.field(
        default="deny", validator=one_of(LABEL, ("deny", "allow"))
    )
    """Flagged commands where no approver is attached (``approvals.unattended``); a
    subagent (``unattended``) is denied whatever this says (seed #117)."""
    spawn_cap: int = attrs.field(default=SPAWN_CAP, validator=count(LABEL, 0))
    """Subagent-spawning calls a turn may make; past it the batch is refused and the turn
    halts (``[tools] spawn_cap``, Hermes' 50, seed #191; 0: no cap)."""
    scheduled: bool = False
    """A run nobody watches by design (a cron job, a kanban worker; ``Create.scheduled``)."""
    loop_halt: str = attrs.field(default="scheduled", validator=one_of(LABEL, LOOP_HALTS))
    """Which looping turns the repeat guard halts (``[tools] loop_halt``, seed #190):
    ``scheduled`` ones, ``unattended`` ones (scheduled, or nobody to approve), or
    ``never``; the others only get its warnings."""
    recovery: RecoveryPolicy = attrs.field(factory=RecoveryPolicy)
    """Auto-recovery cycles when the provider keeps failing (``[model]
    auto_recovery_cycles``; waits 15, 30, 60 s)."""
    compression: CompressionSettings = attrs.field(factory=CompressionSettings)
    """When and how the transcript is compacted (``hermes.compression``)."""
    review: ReviewSettings = attrs.field(factory=ReviewSettings)
    """Background memory reviews (only with a memory store, never when unattended)."""
    goals: GoalSettings = attrs.field(factory=GoalSettings)
    """Standing goals and loops: budget, judge, gates (``hermes.goals``)."""
    stops: StopSettings = attrs.field(factory=StopSettings)
    """What a turn's final answer passes first: stall guard, verify-on-stop, late checks."""

    def __attrs_post_init__(self) -> None:
        if self.max_tokens >= self.context_window:
            raise ValueError(
                f"session config max_tokens ({self.max_tokens}) must be less than "
                f"context_window ({self.context_window})"
            )
