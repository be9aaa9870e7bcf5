"""A crash's traceback is captured without its frames and formatted when first read.

Formatting a traceback (source lines, caret anchors) was ~100 us of a ~320 us
supervised restart; a crash now keeps code objects and line numbers only, and
the text is the same ``traceback.format_exception`` gives for the exception.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from actors import Actor, ActorSystem, ExitKind
from actors._tracebacks import CapturedTraceback

EMPTY: dict[str, int] = {}


class Crasher(Actor):
    """Crashes with a chained exception on 'crash'."""

    async def receive(self, message: Any) -> None:
        try:
            EMPTY["missing"]
        except KeyError as exc:
            raise RuntimeError(f"crash on {message!r}") from exc


@pytest.fixture
def format_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts ``TracebackException.format`` calls (every formatting path goes through it)."""
    calls: list[int] = []
    real = traceback.TracebackException.format

    def counting(self: traceback.TracebackException, **kwargs: Any) -> Iterator[str]:
        calls.append(1)
        return real(self, **kwargs)

    monkeypatch.setattr(traceback.TracebackException, "format", counting)
    yield calls


async def test_a_crash_is_not_formatted_until_its_traceback_is_read(
    system: ActorSystem, format_calls: list[int]
) -> None:
    ref = await system.spawn(Crasher())
    await ref.cast("crash")
    with trio.fail_after(60):
        reason = await ref.wait_exited()
    assert reason.kind is ExitKind.ERROR
    assert format_calls == []  # the crash itself formatted nothing
    assert isinstance(reason.error, RuntimeError)
    assert reason.error.__traceback__ is None  # detached: no frame, so no cycle
    text = reason.traceback
    assert text is not None
    assert format_calls == [1]
    assert "in receive" in text
    assert 'EMPTY["missing"]' in text
    assert "KeyError: 'missing'" in text
    assert "The above exception was the direct cause" in text
    assert "RuntimeError: crash on 'crash'" in text
    assert reason.traceback is text  # formatted once
    assert format_calls == [1]


def _raise_chained() -> None:
    try:
        EMPTY["missing"]
    except KeyError:
        raise RuntimeError("during handling") from None


def _raise_context() -> None:
    try:
        EMPTY["missing"]
    except KeyError:
        raise RuntimeError("during handling")  # noqa: B904 (the context is the point)


def _raise_group() -> None:
    try:
        _raise_context()
    except RuntimeError as exc:
        error = ValueError("noted")
        error.add_note("a note")
        raise ExceptionGroup("several", [exc, error]) from None


def _raise_syntax() -> None:
    compile("a b", "<source>", "exec")


@pytest.mark.parametrize("raiser", [_raise_chained, _raise_context, _raise_group, _raise_syntax])
def test_the_captured_text_is_the_traceback_modules(raiser: Any) -> None:
    try:
        raiser()
    except BaseException as exc:
        expected = "".join(traceback.format_exception(exc))
        captured = CapturedTraceback(exc)
        assert exc.__traceback__ is None
        assert captured.format() == expected
    else:
        pytest.fail("did not raise")


class CrashingStop(Actor):
    """Its stop hook raises."""

    async def receive(self, message: Any) -> None:
        self.ctx.stop()

    async def on_stop(self, reason: Any) -> None:
        _explode_in_on_stop()


def _explode_in_on_stop() -> None:
    raise ValueError("stop hook failed")


async def test_a_stop_hook_crash_keeps_its_frames(system: ActorSystem) -> None:
    """The hook's crash becomes the exit (with the stop as its cause): still with frames."""
    ref = await system.spawn(CrashingStop())
    await ref.cast("stop")
    with trio.fail_after(60):
        reason = await ref.wait_exited()
    assert reason.kind is ExitKind.ERROR
    assert reason.cause is not None
    assert reason.traceback is not None
    assert "_explode_in_on_stop" in reason.traceback
    assert "ValueError: stop hook failed" in reason.traceback
