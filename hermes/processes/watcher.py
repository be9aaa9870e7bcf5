"""``ProcessWatcher``: the actor that owns one background process group.

It starts ``<shell> -c COMMAND`` in a new session (so a new process group
whose id is the leader's pid), stdout and stderr merged into one pipe, stdin a
pipe of its own. With a checkpoint, the command is held by a gate
(``hermes.procgroup.gated``) until its start is recorded. Its
``OutputPump`` (two tasks the watcher owns) reads the output and waits for
the exit; the watcher decodes the output into the
process's ``OutputBuffer``, matches ``watch_patterns`` line by line through
its ``PatternLimiter``, serves kill and stdin requests, and tells its
registry about pattern hits and its end.

The end, in every case, leaves nothing of the group behind:

- the leader exits: members it left in its group (``cmd &``) are killed, and
  the watcher waits (at most ``drain_timeout``) for the pipe to close;
- a kill request: ``kill_group`` (SIGTERM to the group, ``kill_grace``,
  SIGKILL to the group, reap, verify through ``/proc``);
- the watcher is stopped (its registry stops: session closed, daemon
  shutdown) or crashes: SIGTERM to the group as the stop begins (when the
  pump's wait is cancelled), then the same kill in ``on_stop``, shielded and
  fitted to whatever time the stop leaves (a hard stop shortens the grace).

Each end is checkpointed in the store, and the watcher then stops itself; the
registry keeps the final state (``ProcessState``) for the list.

A subagent's watcher can also hand its process to the parent session's
registry (``HandOff``; see ``handoff.py``): it detaches its pump, packs the
live objects into a ``Transfer``, and once the parent has taken it stops
without killing anything. The parent's new watcher is built over the
``Transfer`` and carries on: same buffer, stdin, pattern limits and notices.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import logging
import shutil
import signal
import subprocess
from typing import Any

import trio

from actors import ExitReason
from hermes.procgroup import (
    GATE_LINE,
    enable_subreaper,
    exit_status,
    gated,
    group_empty,
    kill_group,
    live_members,
    reap_group,
    signal_group,
    user_umask,
)

from .checkpoint import Checkpoint
from .config import ProcessConfig
from .errors import ProcessError, ProcessNotRunning, StdinClosed
from .handoff import Adopt, Detached, HandingOff, HandOff, Ticket, Transfer, handoff_error
from .limits import PatternLimiter, Verdict, disabled_text
from .lines import LineSplitter, clip, matching
from .messages import (
    CloseStdin,
    DrainTimeout,
    Exited,
    Kill,
    Output,
    OutputEnded,
    PatternHit,
    StartSpec,
    Write,
)
from .procfs import start_time
from .pump import OutputPump
from .state import ProcessInfo, ProcessState, ProcessStatus
from .watcher_base import WatcherBase, close_pipe

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def _which(program: str, path: str | None) -> str:
    """``program``'s full path on ``path`` (cached: a start should not stat the whole PATH)."""
    return shutil.which(program, path=path) or program


class ProcessWatcher(WatcherBase):
    """Starts and owns one process group (see the module docstring).

    With ``transfer`` it starts nothing: it carries on with a process another
    session's watcher handed over (see ``handoff.py``).
    """

    def __init__(
        self,
        state: ProcessState,
        spec: StartSpec,
        config: ProcessConfig,
        checkpoint: Checkpoint | None = None,
        *,
        transfer: Transfer | None = None,
    ) -> None:
        super().__init__(state, config, checkpoint)
        self.spec = spec
        self.process: trio.Process | None = None
        self._stdin: trio.abc.SendStream | None = None
        self._stdout: trio.abc.ReceiveStream | None = None
        self._decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")(
            errors="replace"
        )
        self._lines = LineSplitter(config.max_line)
        self._limiter = PatternLimiter(
            config.pattern_interval, config.pattern_strikes, config.pattern_lifetime
        )
        self._leader_done = False
        self._eof = False
        self._killed = False
        """A kill request found the leader still running."""
        self._signalled = False
        """The group was sent SIGTERM as this watcher began to stop."""
        self._pump: OutputPump | None = None
        self._handing: HandingOff | None = None
        self._ticket: Ticket | None = None
        self.transfer = transfer
        if transfer is None:
            state.watching = bool(spec.watch_patterns)
        else:
            self.process = transfer.process
            self._stdin, self._stdout = transfer.stdin, transfer.stdout
            self._decoder = transfer.decoder
            self._lines = transfer.lines
            self._limiter = transfer.limiter
            self._eof = transfer.eof
            self.recorded = transfer.recorded

    # -- start -----------------------------------------------------------------------------

    async def on_start(self) -> None:
        enable_subreaper()
        if self.transfer is not None:
            await self._take_over()
            return
        spec, config, state = self.spec, self.config, self.state
        shell = _which(config.shell, spec.env.get("PATH"))
        # Held by a gate until its start is checkpointed (no process runs unrecorded: a
        # crash before the record closes the gate's stdin and it exits, running nothing).
        argv = [shell, "-c", spec.command]
        self.process = process = await trio.lowlevel.open_process(
            gated(argv, null_stdin=False) if self.checkpoint is not None else argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=spec.cwd,
            env=dict(spec.env),
            start_new_session=True,
            umask=user_umask(),  # the user's, not the daemon's private 0077
        )
        self._stdin, self._stdout = process.stdin, process.stdout
        self._start_pump()
        state.pid = state.pgid = process.pid
        # Readable until we reap it, even if it already exited: it is our child.
        state.start_time = start_time(process.pid) or 0
        if self.checkpoint is not None:
            await self.checkpoint.started(state)  # on failure on_stop kills the held gate
            self.recorded = True
            await self._release()
        if spec.close_stdin:
            await self._close_stdin()

    async def _release(self) -> None:
        """Let the gate ``exec`` the command (it reads one line of the stdin pipe first)."""
        stdin = self._stdin
        assert stdin is not None
        # A gate killed from outside ran nothing; its exit is seen as usual.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stdin.send_all(GATE_LINE)

    def _start_pump(self) -> None:
        """Pump the process's output pipe (again, after a detach)."""
        process, stdout = self.process, self._stdout
        assert process is not None and stdout is not None
        self._pump = OutputPump(self.ctx, self.config.read_chunk, self._signal_at_stop)
        self._pump.start(process, stdout)

    def _signal_at_stop(self) -> None:
        """The watcher is stopping with the process running: SIGTERM its group now, so
        it dies while the rest of the teardown runs (``on_stop`` finishes the kill)."""
        process = self.process  # None once handed over; a hand-off's detach never calls this
        # Only while the leader is unreaped (it holds the group id, so it is ours).
        if process is not None and process.returncode is None:
            self._signalled = True
            signal_group(self.state.pgid, signal.SIGTERM)

    async def _take_over(self) -> None:
        """Carry on with a handed-over process: pump it, move its checkpoint row here (or
        write one: a foreground command's, ``yielded.py``)."""
        self._start_pump()
        if self.checkpoint is not None and self.recorded:
            await self.checkpoint.moved(self.state)
        elif self.checkpoint is not None:
            await self.checkpoint.started(self.state)  # on failure on_stop kills it
            self.recorded = True

    # -- hand-off --------------------------------------------------------------------------

    def _handoff_refusal(self) -> str | None:
        state = self.state
        process = self.process
        if self.finalized or self._leader_done or process is None or process.returncode is not None:
            return f"Background process {state.id} has finished; there is nothing to hand over."
        if self.kill_requested:
            return f"Background process {state.id} is being killed; it cannot be handed over."
        return None

    async def _handoff(self, request: HandOff) -> None:
        """Step 1: detach the pump; the hand-off goes on when ``Detached`` arrives."""
        refusal = self._handoff_refusal()
        if refusal is not None:
            raise ProcessNotRunning(refusal)
        if self._handing is not None:
            raise ProcessError(f"Background process {self.state.id} is already being handed over.")
        pump = self._pump
        if pump is None or not pump.detach():
            # The pump delivered the end already: Exited is on its way.
            raise ProcessNotRunning(
                f"Background process {self.state.id} has finished; there is nothing to hand over."
            )
        self._handing = HandingOff(request, self.ctx.defer_reply())

    async def _detached(self, message: Detached) -> None:
        """Step 2: every output chunk is in; give the process to the parent's registry."""
        handing = self._handing  # cleared once settled; on_stop settles it if we are stopped
        self._pump = None  # its tasks have ended: they sent this
        if message.pending:
            await self._on_output(message.pending)
        if handing is None:  # not expected: carry on as before
            if not self.finalized:
                self._start_pump()
            return
        refusal = self._handoff_refusal()
        if refusal is not None:
            self._handing = None
            handing.reply.fail(ProcessNotRunning(refusal))
            if not self.finalized:
                self._start_pump()  # it sees the end as usual
            return
        process = self.process
        assert process is not None
        request, state = handing.request, self.state
        ticket = self._ticket = Ticket()
        transfer = Transfer(
            state=state,
            spec=self.spec,
            process=process,
            stdin=self._stdin,
            stdout=self._stdout,
            decoder=self._decoder,
            lines=self._lines,
            limiter=self._limiter,
            eof=self._eof,
            recorded=self.recorded,
            from_session=state.session_id,
        )
        error: Exception | None = None
        try:
            adopt = Adopt(transfer, ticket, request.on_handed)
            await request.to.call(adopt, timeout=request.timeout)
        except Exception as exc:  # cancellation goes to on_stop, which settles the ticket
            error = exc
        self._handing = self._ticket = None
        if error is not None and ticket.abort():
            # Still ours: carry on watching it.
            handing.reply.fail(handoff_error(state.id, error))
            self._start_pump()
            return
        # Taken (even if its answer was lost): the parent owns it now.
        self._handed(request.to_session)
        handing.reply.send(state.info())
        self.ctx.stop()

    def _handed(self, to_session: str) -> None:
        """Let go of everything: the process, its pipes and its state are the parent's."""
        self.handed_to = to_session
        self.finalized = True
        self.process = None
        self._stdin = self._stdout = None

    # -- messages --------------------------------------------------------------------------

    async def handle(self, message: Any) -> Any:
        match message:
            case Output(data=data):
                await self._on_output(data)
            case OutputEnded():
                self._eof = True
                if self._leader_done:
                    await self._end()
            case Exited():
                await self._on_exit()
            case DrainTimeout():
                await self._end()
            case Kill():
                return await self._kill()
            case Write(data=data):
                return await self._write(data)
            case CloseStdin():
                self._require_stdin()
                await self._close_stdin()
                return self.state.info()
            case HandOff():
                await self._handoff(message)
            case Detached():
                await self._detached(message)
            case _:
                log.warning("process %s: unexpected %s", self.state.id, type(message).__name__)
        return None

    async def _stop_helpers(self) -> None:
        pump, self._pump = self._pump, None
        if pump is not None:
            pump.stop()

    async def _on_output(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            await self._take(text)

    async def _take(self, text: str, final: bool = False) -> None:
        state = self.state
        state.buffer.write(text)
        if not state.watching:
            return
        lines = self._lines.feed(text)
        if final:
            lines += self._lines.flush()
        hits = matching(lines, state.watch_patterns)
        if hits:
            await self._matched(hits)

    async def _matched(self, hits: list[str]) -> None:
        state, config = self.state, self.config
        offer = self._limiter.offer(trio.current_time())
        disabled = None
        if offer.disabled is not None:
            disabled = disabled_text(offer.disabled, config)
            state.watching = False
            state.notify_on_complete = True
            state.note(disabled)
        if offer.verdict is Verdict.EMIT:
            lines, more = clip(hits, config.event_lines, config.event_chars)
            state.pattern_notices += 1
            parent = self.ctx.parent
            if parent is not None:
                await parent.cast(PatternHit(state.id, lines, more, offer.suppressed, disabled))

    async def _on_exit(self) -> None:
        process = self.process
        if process is None or self._leader_done:
            return  # a resumed pump reports the exit again; or it was handed over
        pgid = self.state.pgid
        if not group_empty(pgid):
            if live_members(pgid):
                report = await kill_group(
                    process, grace=self.config.kill_grace, kill_wait=self.config.kill_wait
                )
                if not self.kill_requested:
                    self.state.note("processes it left running in its group were stopped")
                self._note_kill(report)
            else:
                reap_group(pgid)  # orphaned members that exited (we are their subreaper)
        self._leader_done = True
        if self._eof:
            await self._end()
        else:
            # Something outside the group (setsid) may hold the pipe: do not wait forever.
            self.ctx.send_after(self.config.drain_timeout, DrainTimeout())

    async def _end(self) -> None:
        if self.finalized:
            return
        tail = self._decoder.decode(b"", final=True)
        if tail or self.state.watching:
            await self._take(tail, final=True)
        process = self.process
        assert process is not None
        status = ProcessStatus.KILLED if self._killed else ProcessStatus.EXITED
        await self._complete(status, exit_status(process.returncode))

    async def _kill(self) -> ProcessInfo | None:
        if self.finalized:
            return self.state.info()
        self._await_kill()  # answered when the end has been recorded
        if self.kill_requested:
            return None
        self.kill_requested = True
        process = self.process
        assert process is not None
        self._killed = process.returncode is None
        report = await kill_group(
            process, grace=self.config.kill_grace, kill_wait=self.config.kill_wait
        )
        self._note_kill(report)
        return None

    # -- stdin -----------------------------------------------------------------------------

    def _require_stdin(self) -> None:
        if self.finalized or self._leader_done:
            raise ProcessNotRunning(
                f"Background process {self.state.id} has finished; it takes no more input."
            )
        if self._stdin is None or not self.state.stdin_open:
            raise StdinClosed(f"The stdin of background process {self.state.id} is closed.")

    async def _write(self, data: bytes) -> int:
        self._require_stdin()
        limit = self.config.max_write
        if len(data) > limit:
            raise ProcessError(
                f"A write may carry at most {limit:,} bytes ({len(data):,} given); "
                "split it into several writes."
            )
        stdin = self._stdin
        assert stdin is not None
        try:
            with trio.fail_after(self.config.write_timeout):
                await stdin.send_all(data)
        except trio.TooSlowError:
            await self._close_stdin()
            raise StdinClosed(
                f"Background process {self.state.id} did not read its input within "
                f"{self.config.write_timeout:g}s, so its stdin was closed."
            ) from None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.state.stdin_open = False
            raise StdinClosed(
                f"Background process {self.state.id} closed its input; nothing more can be "
                "written to it."
            ) from None
        return len(data)

    async def _close_stdin(self) -> None:
        stdin, self._stdin = self._stdin, None
        self.state.stdin_open = False
        if stdin is not None:
            await close_pipe(stdin)

    # -- stop ------------------------------------------------------------------------------

    async def on_stop(self, reason: ExitReason) -> None:
        ticket, self._ticket = self._ticket, None
        handing, self._handing = self._handing, None
        if ticket is not None and not ticket.abort():
            # The parent's registry took it while we were being stopped: its
            # process, pipes and state are not ours to touch any more.
            assert handing is not None
            self._handed(handing.request.to_session)
            handing.reply.send(self.state.info())
        if self.handed_to is not None:
            self._answer_kills()
            return
        if handing is not None:
            handing.reply.fail(
                ProcessNotRunning(
                    f"Background process {self.state.id} was not handed over: its session "
                    "ended first, and it was stopped with it."
                )
            )
        process = self.process
        if process is not None and not self.finalized:
            self.finalized = True
            state = self.state
            status = ProcessStatus.KILLED if self._signalled else ProcessStatus.EXITED
            if process.returncode is None or not group_empty(state.pgid):
                left = self._time_left()
                grace = min(self.config.kill_grace, left * 0.3)
                wait = min(self.config.kill_wait, left * 0.3)
                self._note_kill(await kill_group(process, grace=grace, kill_wait=wait))
                status = ProcessStatus.KILLED
            else:
                reap_group(state.pgid)
            tail = self._decoder.decode(b"", final=True)
            if tail:
                state.buffer.write(tail)
            state.finish(status, exit_status(process.returncode))
            await self._record_finish()
        self._answer_kills()
        await self._close_stdin()
        stdout, self._stdout = self._stdout, None
        if stdout is not None:
            await close_pipe(stdout)
