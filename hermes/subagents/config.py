"""``SubagentConfig``: every limit and default of delegation, validated when built.

Hermes' defaults (the seed catalogue, #240, #180, #247, #251, #252): only the
top-level session delegates, and code runs its delegations in the background;
ten children at once per parent (more wait in the admission queue, this
project's improvement; ``admission = "reject"`` refuses them as Hermes does),
250 steps per child, stale after 450 s without progress between tools and
1,200 s inside one tool, summaries capped at 24,000 characters with a 2,000
floor.
"""

from __future__ import annotations

import attrs

from hermes.checks import count, one_of, optional, seconds
from supervisors import Admission

from .placement import MODES, TOP_LEVEL

MAX_DEPTH_LIMIT = 3
"""The deepest tree a configuration may allow (Hermes' ceiling)."""

BLOCKED_TOOLS: frozenset[str] = frozenset(
    {"delegate_task", "memory", "clarify", "send_message", "execute_code", "cronjob"}
)
"""Tools a child never gets (``delegate_task`` comes back for orchestrators); seed #244's
list, with ``cronjob`` for its ``cronjob_manage``."""
BLOCKED_TOOLSETS: frozenset[str] = frozenset({"kanban"})
"""Toolsets a child never gets: a kanban worker's card tools stay the worker's."""


LABEL = "subagent config"
_count = count(LABEL)
_seconds = seconds(LABEL)


def _admission(value: Admission | str) -> Admission:
    """The converter of ``admission``: an ``Admission`` or its value."""
    if isinstance(value, Admission):
        return value
    try:
        return Admission(value)
    except ValueError:
        raise ValueError(
            f"{LABEL} admission: expected 'queue' or 'reject', got {value!r}"
        ) from None


@attrs.frozen(slots=True, kw_only=True)
class SubagentConfig:
    """Delegation limits; one per daemon (``SubagentRuntime``)."""

    max_depth: int = attrs.field(default=1, validator=count(LABEL, 1, MAX_DEPTH_LIMIT))
    """Levels of children below the top-level session. 1: only the top level delegates;
    with 2 or 3, a child above the bottom level may orchestrate its own children."""
    orchestrator_enabled: bool = True
    """Whether a child above the bottom level of ``max_depth`` delegates further (decided
    by depth in code, seed #243; the model's ``orchestrate`` is ignored)."""
    max_concurrent_children: int = attrs.field(default=10, validator=_count)
    """Running children per parent session; more wait in the admission queue."""
    max_total_children: int = attrs.field(default=64, validator=_count)
    """Running children in the whole daemon."""
    admission: Admission = attrs.field(default=Admission.QUEUE, converter=_admission)
    """At a limit: ``QUEUE`` (wait in order) or ``REJECT`` (refuse the batch)."""
    queue_capacity: int = attrs.field(default=256, validator=_count)
    """Tasks waiting for a slot, daemon-wide; a batch that would overflow it is refused."""
    max_batch: int = attrs.field(default=100, validator=_count)
    """Tasks in one ``delegate_task`` call."""
    max_background: int = attrs.field(default=10, validator=_count)
    """The parent's background pool, in children: tasks of its background delegations not
    yet done, this call's included (Hermes' pool is ``max_concurrent_children``, 10; seed
    #252). A call that does not fit runs inline, or is refused when the model decides."""
    background: str = attrs.field(default=TOP_LEVEL, validator=one_of(LABEL, MODES))
    """Who places a delegation (``placement.py``, seed #252): ``"top_level"`` (code: the
    top level's in the background, a subagent's inline) or ``"model"`` (its flag)."""
    max_iterations: int = attrs.field(default=250, validator=_count)
    """Tool-using steps per child turn (Hermes' ``delegation.max_iterations``; the model
    cannot raise it)."""
    stale_between_tools: float = attrs.field(default=450.0, validator=_seconds)
    """A child making no progress this long outside a tool is cancelled as stalled."""
    stale_in_tool: float = attrs.field(default=1200.0, validator=_seconds)
    """...and this long inside one tool call."""
    check_interval: float = attrs.field(default=5.0, validator=_seconds)
    """How often the supervisor looks at its children's progress and clocks."""
    child_timeout: float | None = attrs.field(default=None, validator=optional(_seconds))
    """Wall-clock cap per child (None: no cap; liveness still applies)."""
    max_summary_chars: int = attrs.field(default=24_000, validator=_count)
    summary_floor: int = attrs.field(default=2_000, validator=_count)
    chars_per_token: int = attrs.field(default=4, validator=_count)
    """To turn the parent's remaining context (tokens) into a summary budget (characters)."""
    schema_retries: int = attrs.field(default=1, validator=count(LABEL, 0))
    """Follow-ups a child gets when its output does not fit the requested schema."""
    blocked_tools: frozenset[str] = BLOCKED_TOOLS
    finished_kept: int = attrs.field(default=50, validator=_count)
    """Finished children a supervisor keeps listing (Hermes keeps 50 records)."""
    close_timeout: float = attrs.field(default=15.0, validator=_seconds)
    """Bound on closing a finished child (its processes are killed and reaped first)."""
    model: str | None = None
    """Model of the children (default: the parent's)."""
