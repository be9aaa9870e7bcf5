"""``ProcessNotice``: what the registry pushes to its session, unasked.

A notice is a frozen value with a ready-to-deliver ``text`` (the session adds
it to the conversation as new input, when idle or per its busy mode) and the
structured fields a surface may want to show. The registry calls its
``notify`` sink with each notice, from its own task: the sink must not block
(forward with ``cast_nowait`` or ``send_nowait``; drop or count on overflow).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Sequence

import attrs

from hermes.text import strip_ansi


class NoticeKind(enum.Enum):
    PATTERN = "pattern"
    """Lines of a process's output matched its ``watch_patterns``."""
    COMPLETED = "completed"
    """A process with ``notify_on_complete`` finished (and nobody saw it finish)."""
    BREAKER_TRIPPED = "breaker_tripped"
    """Too many notices at once: the registry holds them for a cooldown."""
    BREAKER_SUMMARY = "breaker_summary"
    """The cooldown ended: what was held."""
    HANDED_OVER = "handed_over"
    """A subagent handed this session a running process. News for surfaces (an event),
    not input: the delegation's result tells the model."""


@attrs.frozen(slots=True, kw_only=True)
class ProcessNotice:
    """One push notification from a session's process registry."""

    kind: NoticeKind
    session_id: str
    text: str
    """The message for the model, ready to deliver as input."""
    process_id: str | None = None
    command: str | None = None
    lines: tuple[str, ...] = ()
    """``PATTERN``: the matching lines (at most 20 lines, 2,000 characters)."""
    suppressed: int = 0
    """``PATTERN``: batches of matches dropped by the rate limit since the last notice.
    ``BREAKER_*``: notices held."""
    status: str | None = None
    """``COMPLETED``: ``exited``, ``killed`` or ``lost``."""
    exit_code: int | None = None
    tail: str = ""
    """``COMPLETED``: the last output (at most 2,000 characters)."""
    at: float = attrs.field(factory=time.time)
    """Wall clock."""


NoticeSink = Callable[[ProcessNotice], None]
"""Receives notices; called from the registry's task, so it must not block."""


def _name(process_id: str, command: str) -> str:
    short = command if len(command) <= 80 else command[:79] + "…"
    return f"{process_id} (`{short}`)"


def pattern_notice(
    session_id: str,
    process_id: str,
    command: str,
    lines: Sequence[str],
    *,
    more: int = 0,
    suppressed: int = 0,
    disabled: str | None = None,
) -> ProcessNotice:
    lines = [strip_ansi(line) for line in lines]
    body = "\n".join(lines)
    extra = []
    if more:
        extra.append(f"{more} more matching line(s) in this burst not shown")
    if suppressed:
        extra.append(f"{suppressed} earlier burst(s) of matches dropped by the rate limit")
    if disabled:
        extra.append(disabled)
    tail = f"\n({'; '.join(extra)})" if extra else ""
    text = (
        f"[Background process {_name(process_id, command)} printed lines matching its "
        f"watch patterns:\n{body}{tail}]"
    )
    return ProcessNotice(
        kind=NoticeKind.PATTERN,
        session_id=session_id,
        text=text,
        process_id=process_id,
        command=command,
        lines=tuple(lines),
        suppressed=suppressed,
    )


def completion_notice(
    session_id: str,
    process_id: str,
    command: str,
    status: str,
    exit_code: int | None,
    runtime: float,
    tail: str,
    note: str | None = None,
) -> ProcessNotice:
    if status == "exited":
        how = f"exited with code {exit_code}" if exit_code is not None else "exited"
    elif status == "killed":
        how = "was killed"
    else:
        how = "was lost (found dead after a daemon restart)"
    tail = strip_ansi(tail)
    body = tail.rstrip("\n") or "(no output)"
    extra = f"\n({note})" if note else ""
    text = (
        f"[Background process {_name(process_id, command)} {how} after {runtime:.0f}s. "
        f"Last output:\n{body}{extra}]"
    )
    return ProcessNotice(
        kind=NoticeKind.COMPLETED,
        session_id=session_id,
        text=text,
        process_id=process_id,
        command=command,
        status=status,
        exit_code=exit_code,
        tail=tail,
    )


def handed_over_notice(
    session_id: str, process_id: str, command: str, from_session: str
) -> ProcessNotice:
    text = (
        f"[Background process {_name(process_id, command)} was handed over by subagent "
        f"session {from_session}: it keeps running in this session; use the process tool "
        "to poll, read, wait for or kill it.]"
    )
    return ProcessNotice(
        kind=NoticeKind.HANDED_OVER,
        session_id=session_id,
        text=text,
        process_id=process_id,
        command=command,
        status="running",
    )


def tripped_notice(session_id: str, limit: int, period: float, cooldown: float) -> ProcessNotice:
    text = (
        f"[Background-process notifications paused for {cooldown:g}s: more than {limit} "
        f"arrived within {period:g}s. A summary follows when they resume; use the process "
        "tool to check on processes meanwhile.]"
    )
    return ProcessNotice(kind=NoticeKind.BREAKER_TRIPPED, session_id=session_id, text=text)


def summary_notice(session_id: str, held: int, lines: Sequence[str]) -> ProcessNotice:
    listed = "\n".join(f"- {line}" for line in lines) or "- (none)"
    text = f"[Background-process notifications resumed. {held} were held while paused:\n{listed}]"
    return ProcessNotice(
        kind=NoticeKind.BREAKER_SUMMARY, session_id=session_id, text=text, suppressed=held
    )
