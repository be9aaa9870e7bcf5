"""Schedules: the three forms, time zones, daylight saving, grace, and precise refusals."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from hermes.cron.schedule import ScheduleError, grace, next_run, parse_schedule

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 3, 27, 12, 0, tzinfo=PARIS).timestamp()


def local(stamp: float | None, zone: ZoneInfo = PARIS) -> str:
    assert stamp is not None
    return datetime.fromtimestamp(stamp, zone).isoformat()


def test_a_cron_time_in_a_zone_follows_its_daylight_saving_change() -> None:
    schedule = parse_schedule("30 2 * * *", "Europe/Paris", now=NOW)
    first = next_run(schedule, NOW)
    second = next_run(schedule, first)  # type: ignore[arg-type]
    third = next_run(schedule, second)  # type: ignore[arg-type]
    # 2:30 does not exist on 29 March 2026 in Paris: that day it runs at 03:00
    assert [local(first), local(second), local(third)] == [
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:00:00+02:00",
        "2026-03-30T02:30:00+02:00",
    ]


def test_the_same_expression_in_another_zone_runs_at_its_own_local_time() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    schedule = parse_schedule("0 9 * * 1-5", "Asia/Tokyo", now=NOW)
    assert local(next_run(schedule, NOW), tokyo) == "2026-03-30T09:00:00+09:00"  # Monday


def test_intervals_and_one_shots() -> None:
    every = parse_schedule("every  1h30m", now=NOW)
    assert (every.text, every.period, next_run(every, NOW)) == ("every 1h30m", 5400, NOW + 5400)
    once = parse_schedule("in 2h", "Europe/Paris", now=NOW)
    assert once.text == "at 2026-03-27T14:00:00+01:00"
    assert next_run(once, NOW) == NOW + 7200 and next_run(once, NOW + 7200) is None
    again = parse_schedule(once.text, "Europe/Paris", now=NOW)  # the stored form reads back
    assert again.at == once.at
    naive = parse_schedule("2026-12-24T09:00", "Asia/Tokyo", now=NOW)
    assert naive.text == "at 2026-12-24T09:00:00+09:00"


def test_grace_is_half_the_period_from_two_minutes_to_two_hours() -> None:
    assert grace(parse_schedule("every 1m", now=NOW), NOW) == 120
    assert grace(parse_schedule("every 1h", now=NOW), NOW) == 1800
    assert grace(parse_schedule("0 9 * * *", now=NOW), NOW) == 7200


@pytest.mark.parametrize(
    ("text", "tz", "message"),
    [
        ("* * *", "UTC", "a cron expression has 5 fields"),
        ("61 * * * *", "UTC", "invalid cron expression '61 * * * *'"),
        ("0 9 * * *", "Mars/Base", "unknown time zone 'Mars/Base'"),
        ("0 9 * * *", "", "time zone must be an IANA name"),
        ("every 5x", "UTC", "interval '5x' is not a duration"),
        ("every 0s", "UTC", "interval '0s' is out of range"),
        ("every 400d", "UTC", "interval '400d' is out of range"),
        ("in soon", "UTC", "delay 'soon' is not a duration"),
        ("2001-01-01T00:00", "UTC", "the time 2001-01-01T00:00:00+00:00 is in the past"),
        ("2026-13-01", "UTC", "'2026-13-01' is not an ISO time"),
        ("", "UTC", "schedule must be a cron expression"),
    ],
)
def test_a_bad_schedule_says_what_is_wrong(text: str, tz: str, message: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_schedule(text, tz, now=NOW)
    assert message in str(refused.value)
