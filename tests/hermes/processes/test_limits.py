"""Pattern rate limits and the registry-wide breaker, on trio's clock (``autojump_clock``)."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from hermes.processes import Breaker, NoticeKind, PatternLimiter, ProcessConfig
from hermes.processes.gate import NoticeGate
from hermes.processes.limits import Admission, Disabled, Verdict
from hermes.processes.notices import completion_notice, pattern_notice


def now() -> float:
    return trio.current_time()


def test_defaults_are_hermes_numbers() -> None:
    c = ProcessConfig()
    assert (c.max_processes, c.finished_ttl) == (64, 1800)
    assert (c.buffer_chars, c.poll_tail) == (200_000, 1000)
    assert (c.kill_grace, c.read_chunk) == (1.0, 65_536)
    assert (c.pattern_interval, c.pattern_strikes, c.pattern_lifetime) == (15, 3, 8)
    assert (c.breaker_limit, c.breaker_period, c.breaker_cooldown) == (15, 10, 30)
    assert (c.event_lines, c.event_chars, c.notice_tail, c.wait_max) == (20, 2000, 2000, 180)
    for bad in ({"max_processes": 0}, {"kill_grace": -1}, {"wait_max": math.inf}, {"shell": ""}):
        ((key, value),) = bad.items()
        expected = rf"^process config {key}: expected .*, got {value!r}$"
        with pytest.raises(ValueError, match=expected):
            ProcessConfig(**bad)


async def test_one_pattern_notice_per_window(autojump_clock: trio.testing.MockClock) -> None:
    limiter = PatternLimiter()
    assert limiter.offer(now()).verdict is Verdict.EMIT
    await trio.sleep(5)
    assert limiter.offer(now()).verdict is Verdict.DROP
    assert limiter.offer(now()).verdict is Verdict.DROP
    assert limiter.strikes == 1  # one strike per window, however many drops
    await trio.sleep(10)  # 15 s after the first notice: a new window
    offer = limiter.offer(now())
    assert offer.verdict is Verdict.EMIT and offer.suppressed == 2
    await trio.sleep(20)
    assert limiter.offer(now()).verdict is Verdict.EMIT  # the last window was clean...
    assert limiter.strikes == 0  # ...so the strikes were not in a row any more
    assert limiter.disabled is None


async def test_three_dropped_windows_in_a_row_disable_watching(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limiter = PatternLimiter()
    verdicts = []
    for _ in range(46):  # a match every second for 46 s
        verdicts.append(limiter.offer(now()))
        await trio.sleep(1)
    emitted = [i for i, v in enumerate(verdicts) if v.verdict is Verdict.EMIT]
    assert emitted == [0, 15, 30]
    disabling = [v for v in verdicts if v.disabled is not None]
    assert len(disabling) == 1 and disabling[0].disabled is Disabled.RATE
    assert verdicts.index(disabling[0]) == 31  # the first drop of the third window
    assert all(v.verdict is Verdict.OFF for v in verdicts[32:])
    assert limiter.disabled is Disabled.RATE


async def test_lifetime_cap_of_eight_notices(autojump_clock: trio.testing.MockClock) -> None:
    limiter = PatternLimiter()
    offers = []
    for _ in range(10):
        offers.append(limiter.offer(now()))
        await trio.sleep(16)  # never inside a window: never dropped
    assert [o.verdict for o in offers] == [Verdict.EMIT] * 8 + [Verdict.OFF] * 2
    assert offers[7].disabled is Disabled.LIFETIME and limiter.emitted == 8


async def test_breaker_trips_on_the_sixteenth_in_ten_seconds(
    autojump_clock: trio.testing.MockClock,
) -> None:
    breaker = Breaker()
    for _ in range(15):
        assert breaker.admit(now()) is Admission.PASS
        await trio.sleep(0.5)
    assert breaker.admit(now()) is Admission.TRIP  # 16th within 10 s
    assert breaker.open_until == pytest.approx(now() + 30)
    await trio.sleep(29)
    assert breaker.admit(now()) is Admission.HOLD
    assert breaker.release(now()) is None  # not cooled down yet
    await trio.sleep(1)
    assert breaker.release(now()) == 2
    assert breaker.admit(now()) is Admission.PASS and breaker.trips == 1


async def test_events_spread_out_never_trip(autojump_clock: trio.testing.MockClock) -> None:
    breaker = Breaker()
    for _ in range(100):
        assert breaker.admit(now()) is Admission.PASS
        await trio.sleep(0.7)  # 14.3 per 10 s


async def test_gate_pauses_and_summarises(autojump_clock: trio.testing.MockClock) -> None:
    gate = NoticeGate("s-1", ProcessConfig())
    delivered = []
    for i in range(15):
        delivered += gate.offer(pattern_notice("s-1", f"proc_{i % 3}", "cmd", ["hit"]), now())
    assert len(delivered) == 15
    tripped = gate.offer(pattern_notice("s-1", "proc_0", "cmd", ["hit"]), now())
    assert [n.kind for n in tripped] == [NoticeKind.BREAKER_TRIPPED]
    assert gate.release_at == pytest.approx(now() + 30)
    done = completion_notice("s-1", "proc_9", "make", "exited", 2, 3.0, "bye")
    assert gate.offer(done, now()) == []  # held, not lost
    await trio.sleep(30)
    summary = gate.release(now())
    assert summary is not None and summary.kind is NoticeKind.BREAKER_SUMMARY
    assert summary.suppressed == 2
    assert "proc_0 (`cmd`): 1 pattern notice(s) held" in summary.text
    assert "proc_9 (`make`) exited with code 2" in summary.text
    assert gate.release_at is None
    assert gate.offer(pattern_notice("s-1", "proc_1", "cmd", ["hit"]), now())[0].lines == ("hit",)
