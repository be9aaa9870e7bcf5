"""Schedules: parse what a person writes, and say when a job runs next.

Three forms (``parse_schedule``):

- a cron expression of 5 fields (minute hour day month weekday) or a
  ``@daily``-style nickname, read in the job's time zone (IANA name, UTC by
  default; DST changes follow ``croniter``: a time skipped by the change runs
  at the first valid minute after it, a repeated hour once);
- an interval, ``every 30m`` (units s, m, h, d; combined: ``every 1h30m``);
- one shot: ``in 2h`` (from now), ``at 2026-12-24T09:00`` or the bare ISO
  time (naive times are in the job's time zone). It is stored as ``at <ISO
  time with offset>``, so a restart does not move it.

Every refusal is a ``ScheduleError`` that names what was wrong. Pure
functions on wall-clock seconds since the epoch: the caller says what "now" is.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs
from croniter import CroniterError, croniter

MIN_INTERVAL = 1.0
MAX_INTERVAL = 366 * 86400.0
GRACE_MIN = 120.0
GRACE_MAX = 7200.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(?:(\d+)\s*([smhd]))", re.IGNORECASE)


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why."""


@attrs.frozen(slots=True)
class Schedule:
    """A parsed schedule; ``text`` is what is stored."""

    kind: Literal["cron", "every", "once"]
    text: str
    tz: str
    period: float | None = None
    at: float | None = None


def zone(tz: object) -> ZoneInfo:
    """The time zone named ``tz`` (an IANA name such as ``Europe/Paris``)."""
    if not isinstance(tz, str) or not tz.strip():
        raise ScheduleError(f"time zone must be an IANA name such as 'Europe/Paris', got {tz!r}")
    try:
        return ZoneInfo(tz.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"unknown time zone {tz!r} (use an IANA name such as 'Europe/Paris' or 'UTC')"
        ) from None


def parse_duration(text: str, what: str = "interval") -> float:
    """Seconds in ``30m``, ``1h30m``, ``90s``, ``2d``."""
    compact = text.strip().replace(" ", "")
    parts = _DURATION.findall(compact)
    if not compact or "".join(n + u for n, u in parts).lower() != compact.lower():
        raise ScheduleError(
            f"{what} {text.strip()!r} is not a duration: write a number and a unit "
            "(s, m, h, d), e.g. '30m' or '1h30m'"
        )
    return float(sum(int(n) * _UNITS[u.lower()] for n, u in parts))


def parse_schedule(text: object, tz: object = "UTC", *, now: float) -> Schedule:
    """Parse ``text`` (see the module docstring); ``now`` anchors ``in 2h``."""
    if not isinstance(text, str) or not text.strip():
        raise ScheduleError(
            f"schedule must be a cron expression, 'every 30m', 'in 2h' or an ISO time, got {text!r}"
        )
    zone_info = zone(tz)
    tz_name = str(tz).strip()
    spec = " ".join(text.split())
    lower = spec.lower()
    if lower.startswith("every "):
        period = parse_duration(spec[6:])
        if not MIN_INTERVAL <= period <= MAX_INTERVAL:
            raise ScheduleError(
                f"interval {spec[6:]!r} is out of range (from 1s to 366d), got {period:g}s"
            )
        return Schedule("every", f"every {spec[6:].replace(' ', '')}", tz_name, period=period)
    if lower.startswith("in "):
        delay = parse_duration(spec[3:], "delay")
        if delay <= 0:
            raise ScheduleError(f"delay {spec[3:]!r} must be more than 0s")
        return _once(float(int(now + delay)), zone_info, tz_name)
    if lower.startswith("at "):
        return _once(_iso(spec[3:], zone_info), zone_info, tz_name, now=now)
    if re.match(r"^\d{4}-\d{2}-\d{2}", spec):
        return _once(_iso(spec, zone_info), zone_info, tz_name, now=now)
    return _cron(spec, zone_info, tz_name)


def _iso(text: str, zone_info: ZoneInfo) -> float:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ScheduleError(
            f"{text.strip()!r} is not an ISO time (e.g. '2026-12-24T09:00' or "
            "'2026-12-24T09:00+01:00')"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone_info)
    return when.timestamp()


def _once(at: float, zone_info: ZoneInfo, tz_name: str, *, now: float | None = None) -> Schedule:
    when = datetime.fromtimestamp(at, zone_info)
    if now is not None and at <= now:
        raise ScheduleError(f"the time {when.isoformat()} is in the past")
    return Schedule("once", f"at {when.isoformat()}", tz_name, at=at)


def _cron(spec: str, zone_info: ZoneInfo, tz_name: str) -> Schedule:
    fields = spec.split()
    if not spec.startswith("@") and len(fields) != 5:
        raise ScheduleError(
            f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)} in {spec!r}; or write 'every 30m', 'in 2h' or an ISO time"
        )
    try:
        croniter(spec, datetime.now(zone_info))
    except (CroniterError, ValueError, KeyError) as exc:
        raise ScheduleError(f"invalid cron expression {spec!r}: {exc}") from None
    return Schedule("cron", spec, tz_name)


def next_run(schedule: Schedule, after: float) -> float | None:
    """The first run strictly after ``after``; None when a one-shot job has no more."""
    if schedule.kind == "once":
        assert schedule.at is not None
        return schedule.at if schedule.at > after else None
    if schedule.kind == "every":
        assert schedule.period is not None
        return after + schedule.period
    start = datetime.fromtimestamp(after, zone(schedule.tz))
    return float(croniter(schedule.text, start).get_next(float))


def grace(schedule: Schedule, due: float) -> float:
    """How late a missed run may still start (half its period, from 2 min to 2 h)."""
    if schedule.kind == "every":
        assert schedule.period is not None
        period = schedule.period
    elif schedule.kind == "cron":
        following = next_run(schedule, due)
        period = (following - due) if following is not None else GRACE_MAX
    else:
        period = GRACE_MAX * 2
    return min(GRACE_MAX, max(GRACE_MIN, period / 2))
