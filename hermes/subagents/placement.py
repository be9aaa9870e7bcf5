"""Inline or background: who decides where a delegation runs (seed #252).

At the default (``SubagentConfig.background = "top_level"``) code decides, as
Hermes does, and the model's ``background`` flag is ignored: a
``delegate_task`` call of the top-level session runs in the background, a
subagent's call runs inline. A top-level call still runs inline, its result
starting with a note saying why, when nobody could take a result later (no
approver attached to the session: a cron run, an HTTP client's request, a
headless session) or when the call's tasks do not fit in the parent's
background pool (``max_background`` children, Hermes' 10; the supervisor
decides that, ``inline_if_full``). With
``"model"`` the model's flag decides (default inline) and a full pool refuses.
"""

from __future__ import annotations

import attrs

TOP_LEVEL = "top_level"
MODEL = "model"
MODES = (TOP_LEVEL, MODEL)

NO_LISTENER = "nobody is attached to this session to receive a result later"
POOL_FULL = "this session's background subagents would exceed its pool (max_background)"


@attrs.frozen(slots=True)
class Placement:
    """Where one delegation runs; ``note`` says why a code-placed call runs inline."""

    background: bool
    note: str = ""
    inline_if_full: bool = False
    """Code asked for background: run inline (rather than refuse) when the pool is full."""


def place(mode: str, *, depth: int, attended: bool, asked: bool) -> Placement:
    """The placement of a call at ``depth`` (0: the top level); ``asked``: the model's flag."""
    if mode == MODEL:
        return Placement(asked)
    if depth > 0:
        return Placement(False)
    if not attended:
        return Placement(False, NO_LISTENER)
    return Placement(True, inline_if_full=True)


def inline_note(reason: str) -> str:
    """The line a code-placed call that ran inline starts its result with."""
    return f"[Ran inline, not in the background: {reason}.]\n\n"
