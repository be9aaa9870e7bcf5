"""Auto-recovery cycles on trio's clock (seed #159): the real SDK against the fake provider.

The waits (15, 30, 60 s, jittered; Retry-After up to 120 s) run on the
autojump clock; the fake provider and the client talk over real loopback HTTP.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing

from hermes.daemon.config import ConfigError, load_config
from hermes.fake import ErrorReply, FailFirst, FakeProvider, Reply
from hermes.model import FailureReason, Message, ModelClient, ModelError, RetryPolicy, TextBlock
from hermes.model.recovery import RecoveryPolicy, RecoveryWait, complete_recovering
from hermes.model.types import ModelRequest

from ..fake_model import KEY, SCRIPTED, FakeSetup

REQUEST = ModelRequest(model="claude-test", messages=(Message("user", (TextBlock("hi"),)),))


@pytest.fixture
def fake_setup() -> FakeSetup:
    return SCRIPTED


@pytest.fixture
async def client(
    fake: FakeProvider, autojump_clock: trio.testing.MockClock
) -> AsyncIterator[ModelClient]:
    """A client whose connection is open before the clock starts jumping.

    Opening it resolves the address in a worker thread: on the autojump clock
    that idle time would be a jump past the stale-stream watchdog.
    """
    retry = RetryPolicy(max_attempts=2, base_delay=0.5, max_delay=1.0, deadline=600)
    autojump_clock.autojump_threshold = math.inf
    async with ModelClient(api_key=KEY, base_url=fake.base_url, retry=retry, trust_env=False) as c:
        fake.enqueue(Reply.of("warm"))
        await c.complete(REQUEST)
        fake.requests.clear()
        autojump_clock.autojump_threshold = 0
        yield c


async def recovering(
    client: ModelClient, policy: RecoveryPolicy, may_park: bool = True
) -> tuple[list[RecoveryWait], list[float], object]:
    waits: list[RecoveryWait] = []
    started: list[float] = []

    def on_wait(wait: RecoveryWait) -> None:
        waits.append(wait)
        started.append(trio.current_time())

    try:
        outcome: object = await complete_recovering(
            client, REQUEST, lambda _: None, policy, may_park=lambda: may_park, on_wait=on_wait
        )
    except ModelError as error:
        outcome = error
    return waits, started, outcome


async def test_an_overloaded_provider_recovers_on_the_third_cycle(
    autojump_clock: trio.testing.MockClock, fake: FakeProvider, client: ModelClient
) -> None:
    # Each call makes two attempts: the first call and two cycles fail, the third succeeds.
    fake.enqueue(FailFirst(6, ErrorReply(529), then=Reply.of("back again")))
    start = trio.current_time()
    waits, _, outcome = await recovering(client, RecoveryPolicy())
    assert [(w.cycle, w.cycles, w.reason) for w in waits] == [
        (1, 5, "overloaded"),
        (2, 5, "overloaded"),
        (3, 5, "overloaded"),
    ]
    for wait, base in zip(waits, (15, 30, 60), strict=True):
        assert base * 0.9 <= wait.delay <= base * 1.1  # jittered by at most 10 %
    assert trio.current_time() - start >= sum(w.delay for w in waits)
    assert len(fake.message_requests) == 7  # six failures, then the answer
    assert outcome.message.text() == "back again"  # type: ignore[attr-defined]


async def test_after_five_cycles_it_gives_up_with_a_status_line(
    autojump_clock: trio.testing.MockClock, fake: FakeProvider, client: ModelClient
) -> None:
    fake.when(ErrorReply(500))
    waits, _, outcome = await recovering(client, RecoveryPolicy())
    bases = (15, 30, 60, 60, 60)  # the last wait repeats
    assert all(b * 0.9 <= w.delay <= b * 1.1 for w, b in zip(waits, bases, strict=True))
    assert len(waits) == 5 and len(fake.message_requests) == 12  # 6 calls of 2 attempts
    assert isinstance(outcome, ModelError) and outcome.reason is FailureReason.SERVER_ERROR
    assert "gave up after 5 auto-recovery cycles" in str(outcome)


async def test_a_provider_retry_after_wins_up_to_120_s(
    autojump_clock: trio.testing.MockClock, fake: FakeProvider, client: ModelClient
) -> None:
    fake.enqueue(
        FailFirst(2, ErrorReply(529, retry_after=90), then=Reply.of("one")),
        FailFirst(2, ErrorReply(529, retry_after=500), then=Reply.of("two")),
    )
    first, _, _ = await recovering(client, RecoveryPolicy())
    second, _, _ = await recovering(client, RecoveryPolicy())
    assert [w.delay for w in first] == [90] and [w.delay for w in second] == [120]


@pytest.mark.parametrize(
    "case", ["zero cycles", "text reached the user", "not recoverable", "the server said final"]
)
async def test_no_cycles_when_off_after_text_or_for_other_failures(
    autojump_clock: trio.testing.MockClock, fake: FakeProvider, client: ModelClient, case: str
) -> None:
    status = 400 if case == "not recoverable" else 529
    fake.when(ErrorReply(status, should_retry=False if case == "the server said final" else None))
    cycles = 0 if case == "zero cycles" else 5
    waits, _, outcome = await recovering(
        client, RecoveryPolicy(cycles=cycles), may_park=case != "text reached the user"
    )
    assert waits == [] and isinstance(outcome, ModelError)
    assert "auto-recovery" not in str(outcome)


async def test_a_wait_ends_at_once_when_its_scope_is_cancelled(
    autojump_clock: trio.testing.MockClock, fake: FakeProvider, client: ModelClient
) -> None:
    fake.when(ErrorReply(529))
    with trio.CancelScope() as scope:

        def on_wait(_: RecoveryWait) -> None:
            scope.cancel()

        start = trio.current_time()
        await complete_recovering(
            client,
            REQUEST,
            lambda _: None,
            RecoveryPolicy(),
            may_park=lambda: True,
            on_wait=on_wait,
        )
    assert scope.cancelled_caught
    assert trio.current_time() - start < 5  # the 15 s wait did not run


def test_the_policy_checks_its_fields() -> None:
    with pytest.raises(ValueError, match="cycles: expected an integer >= 0, got -1"):
        RecoveryPolicy(cycles=-1)
    with pytest.raises(
        ValueError, match=r"waits: expected a non-empty list of seconds >= 0, got \(\)"
    ):
        RecoveryPolicy(waits=())


def test_the_config_key_is_checked_and_reaches_the_policy(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[model]\nauto_recovery_cycles = -1\n")
    with pytest.raises(ConfigError, match="auto_recovery_cycles"):
        load_config(path, {})
    path.write_text("[model]\nauto_recovery_cycles = 0\n")
    assert load_config(path, {}).get("model", "auto_recovery_cycles") == 0
