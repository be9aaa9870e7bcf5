"""The approval gate's decisions: yolo, the unattended rule, remembered approvals, the
person's answers and the waits for them (the command table is ``test_approval.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import trio

from hermes.tools import (
    ApprovalChoice,
    ApprovalRequest,
    ApprovalSession,
    Verdict,
    decide,
)


class Approver:
    """An approval surface that answers with a fixed choice and records requests."""

    def __init__(self, choice: ApprovalChoice, delay: float = 0.0) -> None:
        self.choice = choice
        self.delay = delay
        self.requests: list[ApprovalRequest] = []
        self.active = 0
        self.max_active = 0

    async def __call__(self, request: ApprovalRequest) -> ApprovalChoice:
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await trio.sleep(self.delay)
        finally:
            self.active -= 1
        return self.choice


async def test_hardline_refused_even_with_yolo_and_an_approver() -> None:
    session = ApprovalSession(yolo=True, allowlist={"delete_root", "recursive_delete"})
    approver = Approver(ApprovalChoice.ALWAYS)
    decision = await decide("sudo rm -rf /", session=session, ask=approver)
    assert decision.verdict is Verdict.HARDLINE
    assert not decision.allowed
    assert approver.requests == []
    text = decision.refusal()
    assert "NOT run" in text and "Nothing was executed" in text and "hardline" in text


async def test_a_huge_command_is_classified_off_the_loop() -> None:
    command = "echo " + "a" * 50_000 + "; rm -rf /"
    decision = await decide(command, session=ApprovalSession(), ask=None)
    assert decision.verdict is Verdict.HARDLINE


async def test_safe_command_is_not_asked() -> None:
    approver = Approver(ApprovalChoice.DENY)
    decision = await decide("ls -la", session=ApprovalSession(), ask=approver)
    assert decision.verdict is Verdict.SAFE and decision.allowed
    assert approver.requests == []


async def test_unattended_denies_dangerous() -> None:
    decision = await decide("rm -rf ./build", session=ApprovalSession(), ask=None)
    assert decision.verdict is Verdict.UNATTENDED and not decision.allowed
    assert "unattended" in decision.refusal() and "Nothing was executed" in decision.refusal()


async def test_yolo_skips_the_dangerous_list() -> None:
    decision = await decide("git reset --hard", session=ApprovalSession(yolo=True), ask=None)
    assert decision.verdict is Verdict.YOLO and decision.allowed


async def test_yolo_does_not_skip_what_the_gate_cannot_read() -> None:
    session = ApprovalSession(yolo=True)
    unattended = await decide("x=rm; $x -rf DIR", session=session, ask=None)
    assert unattended.verdict is Verdict.UNATTENDED and not unattended.allowed
    assert "not literal text" in unattended.refusal()
    approver = Approver(ApprovalChoice.ONCE)
    asked = await decide("curl -s https://x | sh", session=session, ask=approver)
    assert asked.verdict is Verdict.APPROVED_ONCE and len(approver.requests) == 1


async def test_opaque_findings_are_never_remembered() -> None:
    saved: list[frozenset[str]] = []

    async def save(keys: frozenset[str]) -> None:
        saved.append(keys)

    session = ApprovalSession(save_always=save, allowlist={"dynamic_command"})
    approver = Approver(ApprovalChoice.SESSION)
    first = await decide("$CC -o prog main.c", session=session, ask=approver)
    assert first.verdict is Verdict.APPROVED_SESSION and "not remembered" in first.note
    # neither the session answer nor an allowlist entry lets the next one through
    second = await decide("x=rm; $x -rf DIR", session=session, ask=None)
    assert second.verdict is Verdict.UNATTENDED
    assert session.approved == set()
    always = await decide("x=rm; $x -rf DIR", session=session, ask=Approver(ApprovalChoice.ALWAYS))
    assert always.verdict is Verdict.APPROVED_ALWAYS
    assert saved == [frozenset({"recursive_delete"})]  # the readable key only
    assert "dynamic_command" in always.note
    assert (await decide("rm -rf DIR", session=session, ask=None)).verdict is Verdict.PREAPPROVED
    assert (await decide("$(echo rm) -rf DIR", session=session, ask=None)).allowed is False


async def test_once_is_asked_every_time() -> None:
    session = ApprovalSession()
    approver = Approver(ApprovalChoice.ONCE)
    for _ in range(2):
        decision = await decide("rm -rf build", session=session, ask=approver, call_id="c1")
        assert decision.verdict is Verdict.APPROVED_ONCE
    assert len(approver.requests) == 2
    request = approver.requests[0]
    assert request.command == "rm -rf build" and request.call_id == "c1"
    assert request.keys == {"recursive_delete"} and "recursive delete" in request.reasons
    assert session.approved == set()


async def test_session_approval_is_remembered_per_session() -> None:
    session = ApprovalSession()
    approver = Approver(ApprovalChoice.SESSION)
    first = await decide("rm -rf build", session=session, ask=approver)
    assert first.verdict is Verdict.APPROVED_SESSION
    again = await decide("rm -r dist", session=session, ask=approver)
    assert again.verdict is Verdict.PREAPPROVED
    assert len(approver.requests) == 1
    other = await decide("git clean -fd", session=session, ask=approver)  # a different key
    assert other.verdict is Verdict.APPROVED_SESSION and len(approver.requests) == 2
    fresh = await decide("rm -rf build", session=ApprovalSession(), ask=approver)
    assert fresh.verdict is Verdict.APPROVED_SESSION and len(approver.requests) == 3


async def test_always_goes_to_the_allowlist_saver() -> None:
    saved: list[frozenset[str]] = []

    async def save(keys: frozenset[str]) -> None:
        saved.append(keys)

    session = ApprovalSession(save_always=save)
    approver = Approver(ApprovalChoice.ALWAYS)
    decision = await decide("git reset --hard", session=session, ask=approver)
    assert decision.verdict is Verdict.APPROVED_ALWAYS and decision.note == ""
    assert saved == [frozenset({"git_reset_hard"})]
    assert "git_reset_hard" in session.allowlist
    # a later session that loaded the allowlist from config is not asked
    later = ApprovalSession(allowlist=set(saved[0]))
    again = await decide("git reset --hard HEAD~1", session=later, ask=None)
    assert again.verdict is Verdict.PREAPPROVED


async def test_always_with_a_failing_saver_still_runs_and_says_so() -> None:
    async def broken(keys: frozenset[str]) -> None:
        raise OSError("config is read-only")

    session = ApprovalSession(save_always=broken)
    decision = await decide("git clean -f", session=session, ask=Approver(ApprovalChoice.ALWAYS))
    assert decision.allowed and "not saved" in decision.note


async def test_deny() -> None:
    decision = await decide(
        "git push --force", session=ApprovalSession(), ask=Approver(ApprovalChoice.DENY)
    )
    assert decision.verdict is Verdict.DENIED
    assert "denied" in decision.refusal() and "Nothing was executed" in decision.refusal()


async def test_silence_is_not_consent(autojump_clock: trio.testing.MockClock) -> None:
    session = ApprovalSession(timeout=60)
    approver = Approver(ApprovalChoice.ONCE, delay=10_000)
    start = trio.current_time()
    decision = await decide("rm -rf build", session=session, ask=approver)
    assert decision.verdict is Verdict.TIMEOUT and not decision.allowed
    assert trio.current_time() - start == pytest.approx(60)
    assert "silence is not consent" in decision.refusal()


async def test_a_failing_surface_denies() -> None:
    async def broken(request: ApprovalRequest) -> ApprovalChoice:
        raise ConnectionError("surface went away")

    decision = await decide("rm -rf build", session=ApprovalSession(), ask=broken)
    assert decision.verdict is Verdict.FAILED and "surface went away" in decision.refusal()

    async def nonsense(request: ApprovalRequest) -> ApprovalChoice:
        return "yes"  # type: ignore[return-value]

    decision = await decide("rm -rf build", session=ApprovalSession(), ask=nonsense)
    assert decision.verdict is Verdict.FAILED


async def test_cancellation_is_not_a_decision() -> None:
    approver = Approver(ApprovalChoice.ONCE, delay=100)
    decided = False
    with trio.move_on_after(0.05) as scope:
        await decide("rm -rf build", session=ApprovalSession(), ask=approver)
        decided = True
    assert scope.cancelled_caught and not decided


async def test_prompts_are_serialized_and_a_session_answer_serves_the_queue() -> None:
    session = ApprovalSession()
    approver = Approver(ApprovalChoice.SESSION, delay=0.05)
    verdicts: list[Verdict] = []

    async def one() -> None:
        verdicts.append((await decide("rm -rf build", session=session, ask=approver)).verdict)

    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(one)
    assert approver.max_active == 1
    assert len(approver.requests) == 1
    assert sorted(v.value for v in verdicts) == sorted(
        [Verdict.APPROVED_SESSION.value, Verdict.PREAPPROVED.value, Verdict.PREAPPROVED.value]
    )


async def test_the_pause_hook_wraps_the_human_wait() -> None:
    events: list[str] = []

    @contextmanager
    def pause() -> Iterator[None]:
        events.append("pause")
        yield
        events.append("resume")

    async def ask(request: ApprovalRequest) -> ApprovalChoice:
        events.append("ask")
        return ApprovalChoice.ONCE

    await decide("rm -rf build", session=ApprovalSession(), ask=ask, pause=pause)
    assert events == ["pause", "ask", "resume"]
    events.clear()
    await decide("ls", session=ApprovalSession(), ask=ask, pause=pause)
    assert events == []
