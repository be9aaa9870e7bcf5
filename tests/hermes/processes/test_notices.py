"""Notices from real processes: watch_patterns, notify_on_complete, rate limits, the breaker."""

from __future__ import annotations

import itertools
from pathlib import Path

import attrs
import trio

from hermes.processes import NoticeKind, ProcessStatus

from .helpers import ENV, FAST, Notices, StartRegistry

TICKS = "for i in $(seq 1 {n}); do echo tick-$i hit; sleep {gap}; done"


async def test_pattern_lines_are_pushed(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start(
            "echo booting; echo 'listening on :8000 READY'; echo noise; sleep 30",
            cwd=str(tmp_path),
            env=ENV,
            watch_patterns=["READY", "FATAL"],
        )
        await notices.wait_for(NoticeKind.PATTERN)
        await svc.kill(info.id)
    (notice,) = notices.of(NoticeKind.PATTERN)
    assert notice.process_id == info.id and notice.session_id == "s-1"
    assert notice.lines == ("listening on :8000 READY",)
    assert "listening on :8000 READY" in notice.text and info.id in notice.text
    assert notices.of(NoticeKind.COMPLETED) == []  # not asked for


async def test_one_pattern_notice_per_interval_then_disabled_and_promoted(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    config = attrs.evolve(FAST, pattern_interval=0.25)
    svc = await start_registry(config=config)
    with trio.fail_after(10):
        # A match every 50 ms for about 1.5 s: drops in three windows in a row.
        info = await svc.start(
            TICKS.format(n=30, gap=0.05), cwd=str(tmp_path), env=ENV, watch_patterns=["hit"]
        )
        await notices.wait_for(NoticeKind.COMPLETED)  # promoted: it tells us when it ends
        polled = await svc.poll(info.id)
    patterns = notices.of(NoticeKind.PATTERN)
    assert len(patterns) == 3  # windows 1, 2, 3; the first drop of window 3 disables
    assert patterns[0].suppressed == 0 and patterns[1].suppressed > 0
    times = [n.at for n in patterns]
    assert all(b - a >= 0.2 for a, b in itertools.pairwise(times))
    (done,) = notices.of(NoticeKind.COMPLETED)
    assert done.process_id == info.id and done.status == "exited" and done.exit_code == 0
    assert "pattern watching was disabled" in done.text
    assert not polled.info.watching and polled.info.notify_on_complete


async def test_lifetime_cap_of_eight_pattern_notices(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    config = attrs.evolve(FAST, pattern_interval=0.0)  # never rate limited: only the cap
    svc = await start_registry(config=config)
    with trio.fail_after(10):
        info = await svc.start(
            TICKS.format(n=12, gap=0.02),
            cwd=str(tmp_path),
            env=ENV,
            watch_patterns=["hit"],
        )
        await notices.wait_for(NoticeKind.COMPLETED)
    patterns = notices.of(NoticeKind.PATTERN)
    assert len(patterns) == 8
    assert "stopped after 8 notices" in patterns[-1].text
    (done,) = notices.of(NoticeKind.COMPLETED)
    assert done.process_id == info.id and done.tail.endswith("tick-12 hit\n")


async def test_notify_on_complete_unless_the_exit_was_seen(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        quiet = await svc.start("echo a", cwd=str(tmp_path), env=ENV, notify_on_complete=True)
        await svc.wait(quiet.id, 5)  # saw it finish: no notice
        told = await svc.start(
            "echo building; exit 2", cwd=str(tmp_path), env=ENV, notify_on_complete=True
        )
        await notices.wait_for(NoticeKind.COMPLETED)
        killed = await svc.start("sleep 30", cwd=str(tmp_path), env=ENV, notify_on_complete=True)
        await svc.kill(killed.id)  # the killer saw the end: no notice
        polled = await svc.poll(told.id)
    (notice,) = notices.of(NoticeKind.COMPLETED)
    assert notice.process_id == told.id and notice.exit_code == 2
    assert notice.tail == "building\n" and "exited with code 2" in notice.text
    assert polled.info.status is ProcessStatus.EXITED


async def test_breaker_pauses_a_flood_then_summarises(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    config = attrs.evolve(FAST, breaker_limit=3, breaker_period=10.0, breaker_cooldown=0.5)
    svc = await start_registry(config=config)
    with trio.fail_after(10):
        ids = []
        for i in range(6):
            info = await svc.start(
                f"echo job-{i}", cwd=str(tmp_path), env=ENV, notify_on_complete=True
            )
            ids.append(info.id)
        await notices.wait_for(NoticeKind.BREAKER_SUMMARY)
    kinds = [n.kind for n in notices.items]
    assert kinds[:4] == [NoticeKind.COMPLETED] * 3 + [NoticeKind.BREAKER_TRIPPED]
    assert kinds[4:] == [NoticeKind.BREAKER_SUMMARY]
    summary = notices.items[-1]
    assert summary.suppressed == 3
    held = {n.process_id for n in notices.of(NoticeKind.COMPLETED)}
    for process_id in set(ids) - held:  # nothing is lost: the held ones are listed
        assert f"{process_id} (`" in summary.text
    assert summary.text.count("exited with code 0") == 3
