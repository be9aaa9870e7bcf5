"""Supervision trees on ``actors``, with Erlang/OTP supervisor semantics.

A ``Supervisor`` is an actor that starts children from ``ChildSpec``s, traps
their exits and restarts them per their restart type and its strategy
(one_for_one, one_for_all, rest_for_one), within a restart intensity; beyond
it, it gives up: it stops its children and exits ``shutdown`` (OTP), and its
own parent's policy applies. ``DynamicSupervisor`` starts children from
one template at runtime. ``run_application`` runs a tree with signal handling.
This package knows nothing about agents.
"""

from .admin import ChildCounts, ChildInfo, SupervisorClient
from .application import ExitCode, run, run_application
from .backoff import Backoff
from .dynamic import Admission, DynamicSupervisor
from .errors import (
    AlreadyPresent,
    AlreadyStarted,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    ChildStartFailed,
    RestartIntensityExceeded,
    SpecError,
    SupervisorError,
    TooManyChildren,
)
from .events import (
    AutoShutdownTriggered,
    ChildExited,
    ChildStarted,
    Escalated,
    RestartFailed,
    StaleDetected,
)
from .events import (
    ChildRestarting as ChildRestartingEvent,
)
from .handle import ChildHandle, ChildState
from .intensity import GAVE_UP, gave_up
from .slots import SlotRemoved, SlotRestarted
from .spec import (
    BRUTAL,
    IGNORE,
    INFINITY,
    AutoShutdown,
    ChildSpec,
    ChildType,
    Restart,
    Strategy,
    SupervisorFlags,
)
from .supervisor import Supervisor

__all__ = [
    "BRUTAL",
    "GAVE_UP",
    "IGNORE",
    "INFINITY",
    "Admission",
    "AlreadyPresent",
    "AlreadyStarted",
    "AutoShutdown",
    "AutoShutdownTriggered",
    "Backoff",
    "ChildCounts",
    "ChildExited",
    "ChildHandle",
    "ChildInfo",
    "ChildNotFound",
    "ChildRestarting",
    "ChildRestartingEvent",
    "ChildRunning",
    "ChildSpec",
    "ChildStartFailed",
    "ChildStarted",
    "ChildState",
    "ChildType",
    "DynamicSupervisor",
    "Escalated",
    "ExitCode",
    "Restart",
    "RestartFailed",
    "RestartIntensityExceeded",
    "SlotRemoved",
    "SlotRestarted",
    "SpecError",
    "StaleDetected",
    "Strategy",
    "Supervisor",
    "SupervisorClient",
    "SupervisorError",
    "SupervisorFlags",
    "TooManyChildren",
    "gave_up",
    "run",
    "run_application",
]
