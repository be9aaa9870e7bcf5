"""Handing a running background process from a subagent's session to its parent's.

A child session (a subagent) may give a process it started to the session
that delegated to it (``process`` tool, action ``handoff``), so that it
survives the child's end; everything it does not hand over dies with it.

The move, step by step (``ProcessWatcher`` drives it; see ``docs/processes.md``):

1. the child's watcher gets ``HandOff`` and detaches its pump: the pump stops
   reading and sends ``Detached`` behind every output chunk it already queued
   (plus the chunk it held, if it was waiting for room), so no output is lost;
2. the watcher packs the live objects (``trio.Process``, stdin and stdout
   streams, decoder, line splitter, pattern limiter, the shared
   ``ProcessState`` with its buffer) into a ``Transfer`` and calls the
   parent's registry with ``Adopt(transfer, ticket)``;
3. the parent's registry *takes* the ``Ticket`` (a synchronous flip, before
   any await) and starts a ``ProcessWatcher`` over the transfer: output,
   stdin, kill, wait and notices keep working there, and the checkpoint row
   is moved to the parent's session;
4. the child's watcher stops *without* killing anything; its registry forgets
   the process (a later lookup says where it went).

Exactly one side owns the process at every moment: the ``Ticket`` is
``pending`` (the child owns it), then either ``taken`` (the parent does) or
``aborted`` (the child keeps it: the hand-off failed, timed out or was
cancelled, and a cancelled child kills it as it would anyway). Both flips
happen without an await, on the one trio thread both registries share.
"""

from __future__ import annotations

import codecs
import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs
import trio

from actors import Call, CallTarget, Reply
from hermes.procgroup import Handover

from .errors import ProcessError, ProcessServiceUnavailable
from .limits import PatternLimiter
from .lines import LineSplitter
from .messages import StartSpec
from .state import ProcessInfo, ProcessState

if TYPE_CHECKING:
    from .service import ProcessService


AdoptTarget = CallTarget
"""Where ``Adopt`` goes: the parent's registry (an ``ActorRef``)."""


HandedSink = Callable[[ProcessInfo], None]
"""Told (in line, must not block) when the parent has taken a process."""


@attrs.frozen(slots=True)
class HandoffTarget:
    """A child session's parent, as its ``ProcessService`` needs it for hand-offs."""

    session_id: str
    """The parent session (the checkpoint row moves to it)."""
    processes: ProcessService
    """The parent's process service (it addresses the registry's supervised slot, so a
    restarted registry is reached too)."""
    on_handed: HandedSink | None = None
    """Told when a hand-off took effect (the subagent's progress records it)."""


class TicketState(enum.Enum):
    PENDING = "pending"
    TAKEN = "taken"
    ABORTED = "aborted"


@attrs.define(slots=True, eq=False)
class Ticket:
    """Who owns a process being handed over; flipped once, without awaiting."""

    state: TicketState = TicketState.PENDING

    @property
    def taken(self) -> bool:
        return self.state is TicketState.TAKEN

    def take(self) -> bool:
        """The parent takes the process; False if the child already gave up."""
        if self.state is not TicketState.PENDING:
            return False
        self.state = TicketState.TAKEN
        return True

    def abort(self) -> bool:
        """The child keeps the process; False if the parent already took it."""
        if self.state is TicketState.PENDING:
            self.state = TicketState.ABORTED
        return self.state is TicketState.ABORTED


@attrs.frozen(slots=True, eq=False, kw_only=True)
class Transfer:
    """Everything a watcher needs to carry on with a running process."""

    state: ProcessState
    spec: StartSpec
    process: trio.Process
    stdin: trio.abc.SendStream | None
    stdout: trio.abc.ReceiveStream | None
    decoder: codecs.IncrementalDecoder
    lines: LineSplitter
    limiter: PatternLimiter
    eof: bool
    """The old pump already saw the end of the output."""
    recorded: bool
    """Its start is in the store (the row is moved, not created)."""
    from_session: str


# -- messages ---------------------------------------------------------------------------


@attrs.frozen(slots=True)
class HandOff(Call[ProcessInfo]):
    """To a child's watcher (a call): move this process to ``to``'s registry."""

    to: AdoptTarget
    to_session: str
    on_handed: HandedSink | None = None
    timeout: float = 15.0
    """Bound on the parent's ``Adopt`` answer."""


@attrs.frozen(slots=True)
class Adopt(Call[ProcessInfo]):
    """To the parent's registry (a call): take ``transfer`` if ``ticket`` is still pending."""

    transfer: Transfer
    ticket: Ticket
    on_handed: HandedSink | None = None


@attrs.frozen(slots=True, kw_only=True)
class TakeForeground(Call[ProcessInfo]):
    """To a session's own registry (a call): a foreground command moved to the background
    on a redirect (``yielded.py``); taken only if ``ticket`` is still pending."""

    handover: Handover
    command: str
    cwd: str
    env: Mapping[str, str]
    ticket: Ticket


@attrs.frozen(slots=True)
class Detached:
    """From a detached pump to its watcher, behind every ``Output`` it queued."""

    pending: bytes | None
    """A chunk it had read but could not queue (the watcher's mailbox was full)."""


@attrs.define(slots=True)
class HandingOff:
    """A watcher's hand-off in progress: the request and the reply it owes its caller."""

    request: HandOff
    reply: Reply


def handoff_error(process_id: str, error: Exception) -> ProcessError:
    """Why a hand-off failed, as the subagent's call sees it (the process is still its own)."""
    if isinstance(error, ProcessError):
        return error
    return ProcessServiceUnavailable(
        f"Background process {process_id} was not handed over (the parent session's "
        f"process registry did not take it: {error}); it is still running in this session."
    )
