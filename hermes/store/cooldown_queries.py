"""A session's summary-failure cooldown on its row, so it survives a restart (seed #196).

Two columns of ``sessions`` (migration 16): ``summary_cooldown_until``, the
cooldown's end in wall-clock seconds (``time.time()``: the session's own clock
restarts with the process), and ``summary_failures``, the counters the ladder
climbs on (a JSON object: ``failures``, ``climbs`` by failure class, ``held``,
``overloads``). ``SaveCooldown`` writes both when a failed summary starts or
climbs a cooldown (``None`` clears them after a model summary succeeds);
``GetCooldown`` reads them back when the session starts.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite
from .session_queries import session_row


@attrs.frozen(slots=True, kw_only=True)
class StoredCooldown:
    """A session's summary failures as kept on its row."""

    until: float | None = None
    """The cooldown's end, wall-clock seconds (None: none set)."""
    failures: int = 0
    """Consecutive failed summary calls."""
    climbs: tuple[tuple[str, int], ...] = ()
    """Per laddered failure class (its value, e.g. ``"timeout"``): the steps climbed."""
    held: bool = False
    """The last failure aborted its compaction (automatic ones wait for the cooldown)."""
    overloads: int = 0
    """Consecutive summary calls that failed as overloaded."""


@attrs.frozen(slots=True)
class SaveCooldown(SideWrite[None]):
    """Record the session's summary failures, or clear them (``None``)."""

    op: ClassVar[str] = "save_cooldown"

    session_id: str
    cooldown: StoredCooldown | None


@attrs.frozen(slots=True)
class GetCooldown(Read["StoredCooldown | None"]):
    """The session's recorded summary failures (None when none are kept)."""

    op: ClassVar[str] = "get_cooldown"

    session_id: str


@operation(SaveCooldown)
def save_cooldown(conn: apsw.Connection, req: SaveCooldown, abort: Abort) -> None:
    session_row(conn, req.op, req.session_id)
    until: float | None = None
    counters: str | None = None
    if req.cooldown is not None:
        until, counters = _checked(req.op, req.cooldown)
    conn.execute(
        "UPDATE sessions SET summary_cooldown_until = ?, summary_failures = ? WHERE id = ?",
        (until, counters, req.session_id),
    )


@operation(GetCooldown)
def get_cooldown(conn: apsw.Connection, req: GetCooldown, abort: Abort) -> StoredCooldown | None:
    session_row(conn, req.op, req.session_id)
    row = conn.execute(
        "SELECT summary_cooldown_until, summary_failures FROM sessions WHERE id = ?",
        (req.session_id,),
    ).fetchone()
    until, counters = row if row is not None else (None, None)
    if until is None and counters is None:
        return None
    return _read(None if until is None else float(until), counters)


def _checked(op: str, cooldown: Any) -> tuple[float | None, str]:
    """The two columns of ``cooldown``, or an ``InvalidRequest`` naming the bad field."""
    if not isinstance(cooldown, StoredCooldown):
        raise InvalidRequest(op, f"cooldown must be a StoredCooldown or None, got {cooldown!r}")
    until = cooldown.until
    if until is not None and (
        isinstance(until, bool) or not isinstance(until, int | float) or not math.isfinite(until)
    ):
        raise InvalidRequest(op, f"until must be a finite time or None, got {until!r}")
    for name in ("failures", "overloads"):
        value = getattr(cooldown, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidRequest(op, f"{name} must be a count (an int >= 0), got {value!r}")
    if not isinstance(cooldown.held, bool):
        raise InvalidRequest(op, f"held must be a bool, got {cooldown.held!r}")
    if not isinstance(cooldown.climbs, tuple | list):
        raise InvalidRequest(op, f"climbs must be a tuple of pairs, got {cooldown.climbs!r}")
    climbs: dict[str, int] = {}
    for item in cooldown.climbs:
        match item:
            case (str() as kind, int() as steps) if (
                kind and steps > 0 and not isinstance(steps, bool)
            ):
                climbs[kind] = steps
            case _:
                raise InvalidRequest(
                    op, f"climbs must be (failure class, steps > 0) pairs, got {item!r}"
                )
    counters = {
        "failures": cooldown.failures,
        "climbs": climbs,
        "held": cooldown.held,
        "overloads": cooldown.overloads,
    }
    return (None if until is None else float(until)), json.dumps(counters)


def _read(until: float | None, counters: Any) -> StoredCooldown:
    """The stored cooldown; counters this build cannot read count as none (the deadline holds)."""
    try:
        data = json.loads(str(counters)) if counters is not None else {}
        climbs = tuple((str(k), int(v)) for k, v in dict(data.get("climbs", {})).items())
        return StoredCooldown(
            until=until,
            failures=max(int(data.get("failures", 0)), 0),
            climbs=tuple((k, v) for k, v in climbs if v > 0),
            held=bool(data.get("held", False)),
            overloads=max(int(data.get("overloads", 0)), 0),
        )
    except (ValueError, TypeError, AttributeError):
        return StoredCooldown(until=until)
