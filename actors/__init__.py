"""Actors on trio: bounded mailboxes, refs, call/cast, monitors, links, liveness.

This package knows nothing about agents. Start with ``open_system()`` and
subclass ``Actor``::

    class Counter(Actor):
        async def on_start(self) -> None:
            self.n = 0

        async def receive(self, message):
            self.n += message
            return self.n

    async with open_system() as system:
        ref = await system.spawn(Counter(), name="counter")
        await ref.cast(1)
        assert await ref.call(2) == 3
"""

from .actor import Actor
from .calls import Call, CallTarget
from .checks import is_count, is_number
from .context import ActorContext, Reply
from .current import current_path
from .deadletters import DeadLetters
from .errors import (
    ActorError,
    ActorExited,
    CallTimeout,
    CallToSelf,
    MailboxFull,
    NameTaken,
    NotRunning,
    StartFailed,
    UnhandledMessage,
)
from .events import (
    ActorExitedEvent,
    ActorStarted,
    DeadLetter,
    EventBus,
    LoopStall,
    Subscription,
    UnkillableFinished,
    UnkillableReported,
)
from .exits import ExitKind, ExitReason
from .gc_tuning import tune_gc
from .introspect import trio_task_count
from .liveness import LivenessSpec
from .mailbox import MailboxConfig, MailboxStats, Overflow
from .messages import Down, Exit, MonitorRef, Stale, TaskEnded
from .ref import ActorRef, kill_all
from .stall import LoopStallDetector, StallReport
from .system import ActorSystem, open_system
from .tasks import OwnedTask
from .timers import Timer
from .watchable import Watchable

__all__ = [
    "Actor",
    "ActorContext",
    "ActorError",
    "ActorExited",
    "ActorExitedEvent",
    "ActorRef",
    "ActorStarted",
    "ActorSystem",
    "Call",
    "CallTarget",
    "CallTimeout",
    "CallToSelf",
    "DeadLetter",
    "DeadLetters",
    "Down",
    "EventBus",
    "Exit",
    "ExitKind",
    "ExitReason",
    "LivenessSpec",
    "LoopStall",
    "LoopStallDetector",
    "MailboxConfig",
    "MailboxFull",
    "MailboxStats",
    "MonitorRef",
    "NameTaken",
    "NotRunning",
    "Overflow",
    "OwnedTask",
    "Reply",
    "Stale",
    "StallReport",
    "StartFailed",
    "Subscription",
    "TaskEnded",
    "Timer",
    "UnhandledMessage",
    "UnkillableFinished",
    "UnkillableReported",
    "Watchable",
    "current_path",
    "is_count",
    "is_number",
    "kill_all",
    "open_system",
    "trio_task_count",
    "tune_gc",
]
