"""The emergency stop and the operator's spawn pause, as the sessions manager answers them.

``ESTOP_FILE`` in the data directory is the emergency stop (``hermes pause``, seed
#218): while it exists no job runs, no goal continues, no delegation spawns and
process notices are held. ``StopDelegations`` is sent when it goes on: every
background delegation in the daemon is stopped. ``SpawnPause`` is the operator's
own pause of new delegations, separate from the file. Both act on the daemon's
``SubagentRuntime``, which the manager holds.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs

from actors import Call
from hermes.subagents import SubagentRuntime

from .manager_api import Failed

ESTOP_FILE = "ESTOP"
"""In the data directory: while it exists no job runs (``hermes pause``, seed #218)."""

log = logging.getLogger("hermes.daemon.sessions")


@attrs.frozen(slots=True)
class SpawnPause(Call[dict[str, Any] | Failed]):
    """The operator's spawn pause: ``paused`` True pauses new delegations daemon-wide,
    False resumes them, None only reads; answered with ``{"paused": bool}``. Running
    children go on either way."""

    paused: bool | None = None


@attrs.frozen(slots=True)
class StopDelegations(Call[dict[str, Any] | Failed]):
    """The emergency stop went on (its file is written): every background delegation in
    the daemon is stopped; answered with ``{"delegations_stopped": tasks}``."""


def spawn_pause(subagents: SubagentRuntime, paused: bool | None) -> dict[str, Any]:
    """Pause (True) or resume (False) new delegations, or only read (None)."""
    if paused is not None:
        (subagents.pause if paused else subagents.resume)()
        log.info("subagent spawning %s", "paused" if paused else "resumed")
    return {"paused": subagents.paused}


async def stop_delegations(subagents: SubagentRuntime) -> dict[str, Any]:
    """Stop every background delegation; answered with how many tasks were stopped."""
    stopped = await subagents.emergency_stop()
    log.warning("emergency stop: %d background subagent task(s) stopped", stopped)
    return {"delegations_stopped": stopped}
