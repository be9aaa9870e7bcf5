"""A foreground ``terminal`` command moved to the background on a redirect.

Hermes' redirect during tools (seeds #8, #13, #220) does not kill a running
foreground command: the command is handed to the session's background
registry, keeps running, and the tool answers at once with its process id,
so the turn can take the correction (``[processes] background_on_redirect``).

The move, step by step:

1. ``hermes.procgroup.run_command`` sees its ``yield_to`` event, stops reading
   the output pipe (a cancelled read consumed nothing) and offers the live
   process as a ``Handover`` (the ``trio.Process``, its stdout, the output so
   far);
2. the tool's side (``ProcessService.take_foreground``) calls the session's own
   registry with ``TakeForeground`` and a ``Ticket``;
3. the registry *takes* the ticket (a synchronous flip, before any await) and
   starts a ``ProcessWatcher`` over a ``Transfer`` built here: the output so far
   is its buffer's start, it records the process in the checkpoint as a
   background process, and notifies on completion; the foreground group's row
   is then dropped by ``run_command`` (the watcher's row replaces it);
4. a ticket the caller aborted first (it gave up waiting, or was cancelled)
   stays the caller's, and ``run_command`` kills the command as on an
   interrupt; so does a registry that refuses (full: ``max_processes``).
"""

from __future__ import annotations

import codecs
import time

import trio

from actors import ActorContext, ActorRef, StartFailed
from hermes.procgroup import exit_status, kill_group

from .buffer import OutputBuffer
from .checkpoint import Checkpoint
from .config import ProcessConfig
from .errors import ProcessError
from .handoff import TakeForeground, Transfer
from .limits import PatternLimiter
from .lines import LineSplitter
from .messages import StartSpec
from .procfs import start_time
from .state import ProcessState, ProcessStatus
from .watcher import ProcessWatcher

NOTE = "moved from the foreground to the background when the user redirected the turn"


def transfer_of(
    message: TakeForeground, process_id: str, session_id: str, config: ProcessConfig
) -> Transfer:
    """The watcher's live objects for a handed-over foreground command."""
    h = message.handover
    process = h.process
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    head, tail = h.capture.parts()
    if h.capture.dropped:
        text = head.decode("utf-8", errors="replace")
        text += f"\n[... {h.capture.dropped:,} bytes of output omitted ...]\n"
        text += decoder.decode(tail)
    else:
        text = decoder.decode(head + tail)  # a character cut at the end is finished later
    buffer = OutputBuffer(config.buffer_chars)
    buffer.write(text)
    ran = max(0.0, trio.current_time() - h.started)
    state = ProcessState(
        id=process_id,
        session_id=session_id,
        command=message.command,
        cwd=message.cwd,
        buffer=buffer,
        notify_on_complete=True,
        started_at=time.time() - ran,
        started_clock=h.started,
        pid=process.pid,
        pgid=process.pid,
        start_time=start_time(process.pid) or 0,  # our child, not reaped: readable
        stdin_open=False,
    )
    state.note(NOTE)
    spec = StartSpec(
        command=message.command,
        cwd=message.cwd,
        env=dict(message.env),
        notify_on_complete=True,
        close_stdin=True,
    )
    return Transfer(
        state=state,
        spec=spec,
        process=process,
        stdin=None,
        stdout=h.stdout,
        decoder=decoder,
        lines=LineSplitter(config.max_line),
        limiter=PatternLimiter(
            config.pattern_interval, config.pattern_strikes, config.pattern_lifetime
        ),
        eof=False,
        recorded=False,
        from_session=session_id,
    )


async def take_foreground(
    ctx: ActorContext,
    message: TakeForeground,
    process_id: str,
    session_id: str,
    config: ProcessConfig,
    checkpoint: Checkpoint | None,
) -> tuple[ProcessState, ActorRef, ProcessWatcher]:
    """The registry's half: take the command under a new watcher (see the module).

    From the take on the process is ours: if its watcher does not start, it is
    killed and the error raised."""
    if not message.ticket.take():
        raise ProcessError("The foreground command's move was abandoned by the tool.")
    transfer = transfer_of(message, process_id, session_id, config)
    state = transfer.state
    watcher = ProcessWatcher(state, transfer.spec, config, checkpoint, transfer=transfer)
    try:
        ref = await ctx.spawn(
            watcher,
            name=state.id,
            shutdown=config.stop_budget,
            start_timeout=config.store_timeout + 5.0,
        )
    except BaseException as exc:
        with trio.CancelScope(shield=True), trio.move_on_after(config.stop_budget):
            if transfer.process.returncode is None:
                await kill_group(
                    transfer.process, grace=config.kill_grace, kill_wait=config.kill_wait
                )
        state.finish(ProcessStatus.KILLED, exit_status(transfer.process.returncode))
        if isinstance(exc, StartFailed):
            raise ProcessError(
                f"The command could not be moved to the background ({exc.reason.describe()}); "
                "it was stopped."
            ) from exc
        raise
    return state, ref, watcher
