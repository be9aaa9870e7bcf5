"""Structured exit reasons: why an actor stopped, as a value."""

from __future__ import annotations

import enum
import traceback
from typing import Any

import attrs

from ._tracebacks import CapturedTraceback


class ExitKind(enum.Enum):
    """The kind of an exit. Only ``NORMAL`` is not abnormal."""

    NORMAL = "normal"
    """The actor finished its work and asked to stop."""
    SHUTDOWN = "shutdown"
    """Its owner stopped it gracefully and its stop hook finished in time."""
    CANCELLED = "cancelled"
    """A hard stop: its cancel scope was cancelled (``by`` says who)."""
    ERROR = "error"
    """A handler or hook raised; ``error`` and ``traceback`` say what and where."""
    KILLED = "killed"
    """It did not finish stopping within its shutdown budget and was cancelled."""
    UNKILLABLE = "unkillable"
    """It never reached a checkpoint after being cancelled; its owner moved on."""
    NOPROC = "noproc"
    """The target was already dead when it was monitored or called."""
    STALE = "stale"
    """Its heartbeat went stale and its owner cancelled it."""


@attrs.frozen(slots=True)
class ExitReason:
    """Why an actor exited.

    ``detail`` is a human sentence; ``by`` names who cancelled it; ``error`` and
    ``traceback`` describe a crash; ``cause`` holds the reason this one derives
    from (for example the exit of a linked actor).
    """

    kind: ExitKind
    detail: str = ""
    by: str | None = None
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    _traceback: str | CapturedTraceback | None = attrs.field(
        default=None, eq=False, repr=False, alias="traceback"
    )
    """The text, or a caught crash's capture until first read (``attrs.evolve`` keeps it)."""
    cause: ExitReason | None = None
    heartbeat_age: float | None = None

    @property
    def traceback(self) -> str | None:
        """The formatted traceback of ``error``, formatted on first use.

        Formatting costs tens of microseconds (source lines, caret anchors), so a
        crash-and-restart does not pay for it unless someone looks.
        """
        text = self._traceback
        if isinstance(text, str):
            return text
        if text is not None:
            text = text.format()
        elif self.error is not None:
            text = "".join(traceback.format_exception(self.error))
        else:
            return None
        object.__setattr__(self, "_traceback", text)
        return text

    @property
    def is_normal(self) -> bool:
        """True only for a normal exit, the one exit that never propagates over links."""
        return self.kind is ExitKind.NORMAL

    @property
    def is_abnormal(self) -> bool:
        """True for every exit except ``normal`` and ``shutdown`` (OTP's transient rule)."""
        return self.kind not in (ExitKind.NORMAL, ExitKind.SHUTDOWN)

    @classmethod
    def normal(cls, detail: str = "") -> ExitReason:
        return cls(ExitKind.NORMAL, detail)

    @classmethod
    def shutdown(cls, detail: str = "") -> ExitReason:
        return cls(ExitKind.SHUTDOWN, detail)

    @classmethod
    def cancelled(cls, by: str | None, detail: str = "") -> ExitReason:
        return cls(ExitKind.CANCELLED, detail, by=by)

    @classmethod
    def from_exception(cls, exc: BaseException, where: str = "") -> ExitReason:
        """An ``error`` reason carrying the exception (its traceback is formatted lazily)."""
        detail = f"{type(exc).__name__}: {exc}"
        if where:
            detail = f"{where}: {detail}"
        return cls(ExitKind.ERROR, detail, error=exc)

    @classmethod
    def from_caught(cls, exc: Exception, where: str = "") -> ExitReason:
        """An ``error`` reason for an exception caught for good (it is not raised again).

        The traceback is captured without its frames (code objects and line
        numbers: ~2 us) and detached from the exception and its chain, then
        formatted on first use (``actors/_tracebacks.py``): its frames hold the
        actor (``self``), the actor holds its cell, and the cell holds this
        reason, so a kept traceback made every crashed actor cyclic garbage
        (~17 objects: frames, tracebacks, cell, ref, mailbox, context) that
        only the cyclic collector could free. Formatting it at once cost
        ~100 us per crash, a third of a supervised restart.
        """
        reason = cls.from_exception(exc, where)
        object.__setattr__(reason, "_traceback", CapturedTraceback(exc))
        return reason

    @classmethod
    def killed(cls, detail: str = "", by: str | None = None) -> ExitReason:
        return cls(ExitKind.KILLED, detail, by=by)

    @classmethod
    def unkillable(cls, detail: str = "") -> ExitReason:
        return cls(ExitKind.UNKILLABLE, detail)

    @classmethod
    def noproc(cls, detail: str = "") -> ExitReason:
        return cls(ExitKind.NOPROC, detail)

    @classmethod
    def stale(cls, heartbeat_age: float, by: str | None = None) -> ExitReason:
        return cls(
            ExitKind.STALE,
            f"no heartbeat for {heartbeat_age:.3f}s",
            by=by,
            heartbeat_age=heartbeat_age,
        )

    @classmethod
    def linked(cls, peer_path: str, peer_reason: ExitReason) -> ExitReason:
        """The reason of an actor stopped by the abnormal exit of a linked actor."""
        return cls(
            peer_reason.kind,
            f"linked actor {peer_path} exited: {peer_reason.describe()}",
            cause=peer_reason,
        )

    def describe(self) -> str:
        """One line for logs and snapshots."""
        parts = [self.kind.value]
        if self.by:
            parts.append(f"by {self.by}")
        if self.detail:
            parts.append(f"({self.detail})")
        return " ".join(parts)

    def to_plain(self) -> dict[str, Any]:
        """Plain data for snapshots, events and wire formats."""
        out: dict[str, Any] = {"kind": self.kind.value, "detail": self.detail}
        if self.by is not None:
            out["by"] = self.by
        if self.traceback is not None:
            out["traceback"] = self.traceback
        if self.heartbeat_age is not None:
            out["heartbeat_age"] = self.heartbeat_age
        if self.cause is not None:
            out["cause"] = self.cause.to_plain()
        return out
