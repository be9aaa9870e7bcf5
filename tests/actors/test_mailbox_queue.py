"""The mailbox as a queue, without actors: statistics, the system lane's removal, and
the mailbox against a reference model (the actors' side is ``test_mailbox.py``)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors import (
    MailboxConfig,
    MailboxFull,
    MailboxStats,
    Overflow,
)
from actors._envelope import Envelope
from actors._mailbox import DROPPED_NEWEST, DROPPED_OLDEST, RECIPIENT_EXITED, Mailbox

from .test_mailbox import Drops

# == statistics ======================================================================


def test_stats_counters_are_exact() -> None:
    drops = Drops()
    mailbox = Mailbox("/m", MailboxConfig(3, Overflow.DROP_OLDEST), drops)
    assert mailbox.stats() == MailboxStats(0, 0, 0, 0, 0, 3, "drop_oldest")
    for n in range(5):
        mailbox.put_nowait(Envelope(n))
    mailbox.put_system("notice")
    assert mailbox.stats() == MailboxStats(
        depth=3,
        system_depth=1,
        high_water=3,
        received=5,
        dropped=2,
        capacity=3,
        overflow="drop_oldest",
    )
    taken = [mailbox.get_nowait() for _ in range(3)]
    assert taken[0] == "notice"
    assert [e.message for e in taken[1:]] == [2, 3]
    mailbox.put_nowait(Envelope(5))
    assert attrs.asdict(mailbox.stats()) == {
        "depth": 2,
        "system_depth": 0,
        "high_water": 3,
        "received": 6,
        "dropped": 2,
        "capacity": 3,
        "overflow": "drop_oldest",
    }
    assert drops.items == [(0, DROPPED_OLDEST), (1, DROPPED_OLDEST)]


def test_high_water_tracks_the_deepest_point() -> None:
    mailbox = Mailbox("/m", MailboxConfig(10, Overflow.FAIL), Drops())
    for n in range(4):
        mailbox.put_nowait(Envelope(n))
    for _ in range(3):
        mailbox.get_nowait()
    mailbox.put_nowait(Envelope(9))
    assert (mailbox.depth, mailbox.high_water, mailbox.received) == (2, 4, 5)


def test_drop_reasons_are_stable_strings() -> None:
    assert DROPPED_NEWEST == "dropped as newest (mailbox full)"
    assert DROPPED_OLDEST == "dropped as oldest (mailbox full)"
    assert RECIPIENT_EXITED == "recipient exited"


def test_closed_mailbox_returns_leftovers_and_refuses_further_messages() -> None:
    drops = Drops()
    mailbox = Mailbox("/m", MailboxConfig(4, Overflow.BLOCK), drops)
    for n in range(3):
        mailbox.put_nowait(Envelope(n))
    mailbox.put_system("notice")
    leftovers = mailbox.close()
    assert [e.message for e in leftovers] == [0, 1, 2]
    assert mailbox.get_nowait() is None  # the queued notice is discarded too
    assert mailbox.put_nowait(Envelope(3)) is False
    assert mailbox.put_system("late notice") is False
    assert drops.items == [(3, RECIPIENT_EXITED)]
    assert (mailbox.depth, mailbox.system_depth) == (0, 0)


# == property: the mailbox against a reference model =================================


@attrs.define
class Model:
    """A list with a capacity, plus a system lane that is always served first."""

    capacity: int
    overflow: Overflow
    block_raises: bool
    queue: list[int] = attrs.Factory(list)
    system: list[str] = attrs.Factory(list)
    dropped: list[tuple[int, str]] = attrs.Factory(list)
    received: int = 0
    high_water: int = 0

    def put(self, message: int) -> bool | type[MailboxFull]:
        """True if queued, False if dropped, MailboxFull if refused."""
        if len(self.queue) >= self.capacity:
            if self.overflow is Overflow.DROP_OLDEST:
                self.dropped.append((self.queue.pop(0), DROPPED_OLDEST))
            elif self.overflow is Overflow.DROP_NEWEST or (
                self.overflow is Overflow.BLOCK and not self.block_raises
            ):
                self.dropped.append((message, DROPPED_NEWEST))
                return False
            else:
                return MailboxFull
        self.queue.append(message)
        self.received += 1
        self.high_water = max(self.high_water, len(self.queue))
        return True

    def get(self) -> Any:
        if self.system:
            return self.system.pop(0)
        return self.queue.pop(0) if self.queue else None


POLICIES = [
    (Overflow.DROP_NEWEST, True),
    (Overflow.DROP_OLDEST, True),
    (Overflow.FAIL, True),
    (Overflow.BLOCK, True),  # a non-blocking send (cast_nowait) raises
    (Overflow.BLOCK, False),  # a timer's send drops the newest instead
]


@settings(max_examples=300, deadline=None)
@given(
    policy=st.sampled_from(POLICIES),
    capacity=st.integers(min_value=1, max_value=4),
    ops=st.lists(st.sampled_from(["put", "put", "get", "system"]), max_size=40),
)
def test_mailbox_matches_reference_model(
    policy: tuple[Overflow, bool], capacity: int, ops: list[str]
) -> None:
    overflow, block_raises = policy
    drops = Drops()
    mailbox = Mailbox("/m", MailboxConfig(capacity, overflow), drops)
    model = Model(capacity, overflow, block_raises)
    delivered: list[Any] = []
    expected_delivered: list[Any] = []
    for step, op in enumerate(ops):
        if op == "put":
            expected = model.put(step)
            if expected is MailboxFull:
                with pytest.raises(MailboxFull):
                    mailbox.put_nowait(Envelope(step), block_raises=block_raises)
            else:
                assert mailbox.put_nowait(Envelope(step), block_raises=block_raises) is expected
        elif op == "system":
            model.system.append(f"notice-{step}")
            assert mailbox.put_system(f"notice-{step}") is True
        else:
            item = mailbox.get_nowait()
            delivered.append(item.message if isinstance(item, Envelope) else item)
            expected_delivered.append(model.get())
        assert delivered == expected_delivered
        assert drops.items == model.dropped
        assert mailbox.stats() == MailboxStats(
            depth=len(model.queue),
            system_depth=len(model.system),
            high_water=model.high_water,
            received=model.received,
            dropped=len(model.dropped),
            capacity=capacity,
            overflow=overflow.value,
        )
    assert [e.message for e in mailbox.close()] == model.queue


def test_remove_first_system_removes_only_the_first_match_in_order() -> None:
    mailbox = Mailbox("/m", MailboxConfig(10, Overflow.FAIL), Drops())
    assert not mailbox.remove_first_system(lambda m: True)  # no system lane yet
    for item in ("a", "b", "a", "c"):
        mailbox.put_system(item)
    assert mailbox.remove_first_system(lambda m: m == "a")
    assert not mailbox.remove_first_system(lambda m: m == "z")
    assert [mailbox.get_nowait() for _ in range(3)] == ["b", "a", "c"]
