"""``terminal``'s two background modes, run through the session's ``ProcessService``.

- ``background=true``: start the command under a watcher and answer at once
  with its process id (``start_background``).
- ``on_timeout="background"`` (a foreground command the model allows to
  outlive its timeout): the command runs under a watcher from the start,
  with an empty stdin like any foreground command, and the tool waits for it.
  If it finishes in time the answer is the same as a foreground run (output,
  ``[exit code: N]``). If the timeout passes it is *not* killed: the answer
  is the output so far and its process id, and a completion notice follows
  when it ends (the watcher was started with ``notify_on_complete``; a wait
  that sees the end first turns the notice off). A soft interrupt kills it
  (exit 130) and a cancelled call kills it too, as in the foreground.

A redirect (the user corrects the turn while its tools run; ``[processes]
background_on_redirect``) moves a running command to the background at once,
with the same answer in both cases (``redirected``: its output so far, its
process id and the redirect note): a plain foreground command is handed to
the registry (``RedirectMove``; ``hermes/processes/yielded.py``), and an
``on_timeout="background"`` command, already under a watcher, is simply no
longer waited for (its record gets the same note; its completion notice still
follows).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import attrs
import trio

from hermes.bell import Bell, cancelled_by
from hermes.processes.errors import ProcessError
from hermes.processes.service import ProcessService
from hermes.processes.state import LogResult, ProcessInfo, WaitOutcome, WaitResult
from hermes.processes.yielded import NOTE as REDIRECT_NOTE
from hermes.procgroup import Handover
from hermes.text import strip_ansi

from ..base import ToolOutcome
from ..context import ToolContext
from .terminal import EXIT_INTERRUPTED

NO_SERVICE = (
    "Background mode is not available in this session (it has no background-process "
    "service). Nothing was run. Run the command in the foreground with a timeout instead."
)


def _service(ctx: ToolContext) -> ProcessService | None:
    try:
        return ctx.service(ProcessService)
    except LookupError:
        return None


@attrs.define(slots=True, eq=False)
class RedirectMove:
    """``terminal``'s ``hand_over`` on a redirect: moves the command, keeps the answer."""

    service: ProcessService
    command: str
    workdir: Path
    ctx: ToolContext
    info: ProcessInfo | None = None
    error: str | None = None

    async def __call__(self, handover: Handover) -> None:
        try:
            self.info = await self.service.take_foreground(
                handover, command=self.command, cwd=str(self.workdir), env=self.ctx.env
            )
        except ProcessError as exc:
            self.error = str(exc)

    def moved(self, output: str, verdict: str, duration: float) -> ToolOutcome:
        """The answer of a command now running in the background."""
        assert self.info is not None
        return redirected(self.info, output, verdict, duration)

    def refusal(self) -> str:
        """The note of a command the registry did not take (it was stopped)."""
        return f"[The command could not be moved to the background on the redirect: {self.error}]"


def redirected(info: ProcessInfo, output: str, verdict: str, duration: float) -> ToolOutcome:
    """The answer of a command a redirect moved to the background (it keeps running)."""
    shown = strip_ansi(output).rstrip("\n") or "(no output yet)"
    return ToolOutcome.ok(
        f"{shown}\n[The user redirected the turn while this command ran, so it was moved "
        f"to the background as {info.id} (pid {info.pid}) and keeps running. You will be "
        f"notified when it finishes; use the process tool with process_id={info.id!r} to "
        "poll, log, wait or kill it.]",
        exit_code=None,
        moved_to_background=True,
        redirected=True,
        process_id=info.id,
        pid=info.pid,
        duration=duration,
        approval=verdict,
    )


def _yield_to(ctx: ToolContext, service: ProcessService) -> Bell | None:
    """The event a redirect sets, if it moves commands here; None: a redirect waits."""
    return ctx.redirect if service.config.background_on_redirect else None


def redirect_move(command: str, workdir: Path, ctx: ToolContext) -> RedirectMove | None:
    """How a foreground command moves on a redirect; None: a redirect waits for it."""
    service = _service(ctx)
    if service is None or _yield_to(ctx, service) is None:
        return None
    return RedirectMove(service, command, workdir, ctx)


async def start_background(
    command: str, workdir: Path, args: Any, ctx: ToolContext, verdict: str
) -> ToolOutcome:
    """``terminal(background=true)``: start it and return its process id at once."""
    service = _service(ctx)
    if service is None:
        return ToolOutcome.error(NO_SERVICE, ran=False, reason="no_process_service")
    patterns = tuple(args.get("watch_patterns") or ())
    notify = bool(args.get("notify_on_complete", False))
    try:
        info = await service.start(
            command,
            cwd=str(workdir),
            env=ctx.env,
            watch_patterns=patterns,
            notify_on_complete=notify,
        )
    except ProcessError as exc:
        return ToolOutcome.error(str(exc), ran=False)
    told = []
    if patterns:
        told.append("you will be notified of output lines matching the watch patterns")
    if notify:
        told.append("you will be notified when it finishes")
    extra = f" ({'; '.join(told)})" if told else ""
    return ToolOutcome.ok(
        f"Started background process {info.id} (pid {info.pid}){extra}. Use the process "
        f"tool with process_id={info.id!r} to poll, log, wait, kill or write to it.",
        process_id=info.id,
        pid=info.pid,
        background=True,
        approval=verdict,
    )


async def run_movable(
    command: str,
    workdir: Path,
    timeout: int,
    ctx: ToolContext,
    verdict: str,
    progress_interval: float = 0.5,
) -> ToolOutcome:
    """A foreground run that moves to the background at its timeout instead of dying, or
    at once on a redirect."""
    service = _service(ctx)
    if service is None:
        return ToolOutcome.error(NO_SERVICE, ran=False, reason="no_process_service")
    started = time.monotonic()
    try:
        info = await service.start(
            command, cwd=str(workdir), env=ctx.env, notify_on_complete=True, close_stdin=True
        )
    except ProcessError as exc:
        return ToolOutcome.error(str(exc), ran=False)
    settled = False
    try:
        redirect = _yield_to(ctx, service)
        waited = await _wait_reporting(service, info, timeout, ctx, progress_interval, redirect)
        if waited is None and not ctx.interrupted:  # redirected: it runs on
            settled = True
            return await _redirected(service, info.id, verdict, started)
        if waited is None or waited.outcome is WaitOutcome.INTERRUPTED:
            await service.kill(info.id)
            settled = True
            return await _answer(service, info.id, verdict, started, interrupted=True)
        settled = True
        if waited.outcome is WaitOutcome.FINISHED:
            return await _answer(service, info.id, verdict, started)
        return _moved(waited, timeout, verdict, started)
    except ProcessError as exc:
        return ToolOutcome.error(f"{exc} (background process {info.id})", process_id=info.id)
    finally:
        if not settled:  # cancelled or failed while it ran: it dies as a foreground command
            with trio.move_on_after(service.kill_timeout, shield=True):
                with contextlib.suppress(ProcessError):
                    await service.kill(info.id)


async def _wait_reporting(
    service: ProcessService,
    info: ProcessInfo,
    timeout: int,
    ctx: ToolContext,
    interval: float,
    redirect: Bell | None = None,
) -> WaitResult | None:
    """Wait up to ``timeout`` (in waits of at most ``wait_max``), reporting output meanwhile;
    None if ``redirect`` was set first (the process runs on)."""
    deadline = trio.current_time() + timeout
    result: WaitResult | None = None
    error: ProcessError | None = None

    async def report() -> None:
        last = ""
        while True:
            await trio.sleep(interval)
            try:
                tail = (await service.poll(info.id)).tail
            except ProcessError:
                return
            if tail != last:
                last = tail
                ctx.report("output", strip_ansi(tail))

    async with trio.open_nursery() as nursery:
        if ctx.progress is not None:
            nursery.start_soon(report)
        with cancelled_by(trio.CancelScope(), redirect) as waiting:  # a redirect ends it
            try:
                while True:
                    left = deadline - trio.current_time()
                    result = await service.wait(info.id, max(left, 0.0), interrupt=ctx.interrupt)
                    if result.outcome is not WaitOutcome.TIMEOUT or left <= service.config.wait_max:
                        break
            except ProcessError as exc:
                error = exc  # raised bare below, not wrapped in the nursery's group
        nursery.cancel_scope.cancel()
    if error is not None:
        raise error
    if waiting.cancelled_caught:
        return None
    assert result is not None
    return result


async def _redirected(
    service: ProcessService, process_id: str, verdict: str, started: float
) -> ToolOutcome:
    """A redirect came first: the output so far and the note, or (ended meanwhile) its end.

    A command still running is noted on its record as a moved foreground one is."""
    result = await service.log(process_id, 0, service.config.buffer_chars)
    if result.info.finished:
        return _answer_of(result, verdict, started)
    with contextlib.suppress(ProcessError):  # a note it could not get is no failure
        await service.note(process_id, REDIRECT_NOTE)
    return redirected(result.info, _output_of(result), verdict, time.monotonic() - started)


def _output_of(result: LogResult) -> str:
    page = result.page
    output = strip_ansi(page.text).rstrip("\n")
    if page.skipped:
        output = f"[... first {page.skipped:,} characters of output dropped ...]\n{output}"
    return output


async def _answer(
    service: ProcessService,
    process_id: str,
    verdict: str,
    started: float,
    *,
    interrupted: bool = False,
) -> ToolOutcome:
    """The finished command, answered as the foreground terminal answers."""
    result = await service.log(process_id, 0, service.config.buffer_chars)
    return _answer_of(result, verdict, started, interrupted=interrupted)


def _answer_of(
    result: LogResult, verdict: str, started: float, *, interrupted: bool = False
) -> ToolOutcome:
    info = result.info
    output = _output_of(result)
    notes = []
    if interrupted:
        exit_code = EXIT_INTERRUPTED
        notes.append("[Command interrupted]")
    else:
        exit_code = info.exit_code if info.exit_code is not None else -1
        if info.note:
            notes.append(f"[{info.note}]")
    notes.append(f"[exit code: {exit_code}]")
    return ToolOutcome(
        (output or "(no output)") + "\n" + "\n".join(notes),
        exit_code != 0,
        {
            "exit_code": exit_code,
            "timed_out": False,
            "interrupted": interrupted,
            "duration": time.monotonic() - started,
            "output_bytes": info.output_chars,
            "approval": verdict,
            "process_id": info.id,
        },
    )


def _moved(waited: WaitResult, timeout: int, verdict: str, started: float) -> ToolOutcome:
    info = waited.info
    output = strip_ansi(waited.tail).rstrip("\n") or "(no output yet)"
    return ToolOutcome.ok(
        f"{output}\n[Command still running after {timeout}s: moved to the background as "
        f"{info.id} (pid {info.pid}) instead of being stopped. You will be notified when it "
        f"finishes; use the process tool with process_id={info.id!r} to poll, log, wait or "
        "kill it.]",
        exit_code=None,
        timed_out=True,
        moved_to_background=True,
        process_id=info.id,
        pid=info.pid,
        duration=time.monotonic() - started,
        approval=verdict,
    )
