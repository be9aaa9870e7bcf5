"""The ``Actor`` base class: a message handler with lifecycle hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ._errors import UnhandledMessage
from ._mailbox import MailboxConfig

if TYPE_CHECKING:
    from ._context import ActorContext
    from ._exits import ExitReason


class Actor:
    """Subclass and override ``receive`` (and the hooks you need).

    The runtime sets ``self.ctx`` before ``on_start`` runs. Messages are handled
    one at a time, in order, with system notices (``Down``, ``Exit``, ``Stale``)
    ahead of ordinary messages, but never ahead of one sent by the actor a
    ``Down`` or ``Exit`` reports on (per-pair order). For a ``call``, the value
    ``receive`` returns is the reply (or use ``ctx.defer_reply()`` to answer
    later). An exception from
    any hook or handler stops the actor with an ``error`` exit reason that its
    owner sees.

    Class attributes set the defaults; ``spawn`` arguments override them.
    """

    mailbox: ClassVar[MailboxConfig] = MailboxConfig()
    """Capacity and overflow policy of the mailbox."""
    shutdown_budget: ClassVar[float] = 5.0
    """Seconds a graceful stop may take (stop hook included) before the actor is killed."""
    trap_exits: ClassVar[bool] = False
    """If true, exits of linked actors and children arrive as ``Exit`` messages."""
    stop_children_concurrently: ClassVar[bool] = False
    """On stop, stop all children at once instead of one by one in reverse start order."""
    serve_queued_on_stop: ClassVar[bool] = False
    """On a graceful stop, first handle the ordinary messages already queued when the
    stop is reached (an OTP mailbox would have them in order before it), within the
    shutdown budget; a kill still drops them. For an owner of state that others write
    to without waiting for an answer (the store)."""

    ctx: ActorContext

    async def on_start(self) -> None:
        """Runs before the first message; ``spawn`` returns once it has finished."""

    async def receive(self, message: Any) -> Any:
        """Handle one message; for a call, the return value is the reply."""
        raise UnhandledMessage(self.ctx.path, message)

    def child_stop_order(self, names: list[str]) -> list[str]:
        """Names of the live children in the order a graceful stop stops them.

        ``names`` is in start order; the default is its reverse. A supervisor
        returns the reverse of its spec order, which a restart does not change.
        Names left out are stopped after, in reverse start order.
        """
        return names[::-1]

    def on_stop_requested(self, reason: ExitReason) -> None:
        """Called at once, synchronously, when a graceful stop is asked for, before the
        stop is served after the current message; the default does nothing. A
        ``Task`` cancels its body here."""

    async def on_stop(self, reason: ExitReason) -> None:
        """Runs once when the actor stops, shielded and bounded by its shutdown budget.

        Children have already been stopped when it runs.
        """
