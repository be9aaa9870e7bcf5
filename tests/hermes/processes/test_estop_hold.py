"""Process notices wait during the emergency stop (issue 27, item 4; seed #218): the
process runs on, its notice (a turn of its session) goes out once the stop is cleared."""

from __future__ import annotations

from pathlib import Path

import attrs
import trio

from hermes.processes import NoticeKind, ProcessNotice, ProcessStatus
from hermes.processes.hold import HOLD_RECHECK, MAX_HELD, NoticeHold

from .helpers import ENV, FAST, Notices, StartRegistry


async def test_a_completion_during_the_stop_is_held_then_delivered(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("")
    svc = await start_registry(config=attrs.evolve(FAST, estop=estop))
    with trio.fail_after(10):
        info = await svc.start("echo built", cwd=str(tmp_path), env=ENV, notify_on_complete=True)
        while True:  # the process runs to its end: running work is not stopped
            if (await svc.poll(info.id)).info.status is ProcessStatus.EXITED:
                break
            await trio.sleep(0.02)
        await trio.sleep(0.3)  # a window for its completion to reach the registry (absence)
        await svc.list()
    assert notices.items == []
    estop.unlink()
    await notices.wait_for(NoticeKind.COMPLETED, timeout=HOLD_RECHECK * 3)
    (done,) = notices.items
    assert done.process_id == info.id and done.status == "exited" and "built" in done.tail


def _notice(n: int) -> ProcessNotice:
    return ProcessNotice(kind=NoticeKind.PATTERN, session_id="s-1", text=f"hit {n}")


def test_the_hold_keeps_order_counts_overflow_and_passes_hand_overs(tmp_path: Path) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("set")
    hold = NoticeHold("s-1", estop)
    assert all(hold.offer(_notice(n)) == [] for n in range(MAX_HELD + 2))
    handed = ProcessNotice(kind=NoticeKind.HANDED_OVER, session_id="s-1", text="yours")
    assert hold.offer(handed) == [handed]
    assert hold.release() == [] and hold.holding  # still stopped
    estop.unlink()
    out = hold.offer(_notice(99))
    assert [n.text for n in out[:MAX_HELD]] == [f"hit {n}" for n in range(MAX_HELD)]
    assert out[MAX_HELD].kind is NoticeKind.BREAKER_SUMMARY and out[MAX_HELD].suppressed == 2
    assert out[-1].text == "hit 99" and len(out) == MAX_HELD + 2 and not hold.holding


def test_held_notices_outlive_their_hold_in_the_data_directory(tmp_path: Path) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("")
    first = NoticeHold("s-1", estop)
    for n in range(MAX_HELD + 1):
        first.offer(_notice(n))
    done = ProcessNotice(
        kind=NoticeKind.COMPLETED, session_id="s-1", text="built", lines=("a",), exit_code=0
    )
    first._held[-1] = done  # a completion among them, every field kept
    assert first.file is not None
    first.file.save(first._held, 1)
    assert (tmp_path / "held-notices" / "s-1.json").exists()
    second = NoticeHold("s-1", estop)  # the registry of the restarted daemon
    assert second.holding and second.release() == []  # still stopped
    assert NoticeHold("s-2", estop).holding is False  # another session's are its own
    estop.unlink()
    out = second.release()
    assert [n.text for n in out[: MAX_HELD - 1]] == [f"hit {n}" for n in range(MAX_HELD - 1)]
    assert out[MAX_HELD - 1] == done and out[-1].suppressed == 1
    assert not (tmp_path / "held-notices" / "s-1.json").exists()  # released: gone from disk
    assert NoticeHold("s-1", estop).holding is False


def test_an_unreadable_held_file_is_skipped(tmp_path: Path) -> None:
    estop = tmp_path / "ESTOP"
    (tmp_path / "held-notices").mkdir()
    (tmp_path / "held-notices" / "s-1.json").write_text("{not json")
    assert NoticeHold("s-1", estop).holding is False
