"""Supervision trees on ``actors``, with Erlang/OTP supervisor semantics.

A ``Supervisor`` is an actor that starts children from ``ChildSpec``s, traps
their exits and restarts them per their restart type and its strategy
(one_for_one, one_for_all, rest_for_one), within a restart intensity; beyond
it, it gives up: it stops its children and exits ``shutdown`` (OTP), and its
own parent's policy applies. ``DynamicSupervisor`` starts children from
one template at runtime. ``run_application`` runs a tree with signal handling
and a phased shutdown (``Phase``, ``Step``, ``ShutdownReport``).
This package knows nothing about agents.
"""

from ._admin import ChildCounts, ChildInfo, SupervisorClient
from ._application import RUNTIME_PHASE, ExitCode, run, run_application
from ._backoff import Backoff
from ._dynamic import Admission, DynamicSupervisor
from ._errors import (
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
from ._events import (
    AutoShutdownTriggered,
    ChildExited,
    ChildStarted,
    Escalated,
    RestartFailed,
    StaleDetected,
)
from ._events import (
    ChildRestarting as ChildRestartingEvent,
)
from ._handle import ChildHandle, ChildState
from ._intensity import GAVE_UP, gave_up
from ._shutdown import (
    Phase,
    PhaseOutcome,
    RanOver,
    ShutdownReport,
    Step,
    StepOutcome,
    StepStatus,
    run_phases,
)
from ._slots import SlotRemoved, SlotRestarted
from ._spec import (
    BRUTAL,
    IGNORE,
    INFINITY,
    AutoShutdown,
    ChildSpec,
    ChildType,
    Restart,
    Strategy,
    SupervisorFlags,
    task_spec,
)
from ._supervisor import Supervisor

__all__ = [
    "BRUTAL",
    "GAVE_UP",
    "IGNORE",
    "INFINITY",
    "RUNTIME_PHASE",
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
    "Phase",
    "PhaseOutcome",
    "RanOver",
    "Restart",
    "RestartFailed",
    "RestartIntensityExceeded",
    "ShutdownReport",
    "SlotRemoved",
    "SlotRestarted",
    "SpecError",
    "StaleDetected",
    "Step",
    "StepOutcome",
    "StepStatus",
    "Strategy",
    "Supervisor",
    "SupervisorClient",
    "SupervisorError",
    "SupervisorFlags",
    "TooManyChildren",
    "gave_up",
    "run",
    "run_application",
    "run_phases",
    "task_spec",
]
