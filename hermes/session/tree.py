"""A session's supervision subtree, declared in one place: who its children are, how
each is restarted and stopped, and what each one's crash does to the session.

    session-<id>       SessionActor: owns the transcript (does not trap exits)
    |-- services       Supervisor, one_for_one, at most SERVICES_INTENSITY restarts
    |   |              in SERVICES_PERIOD seconds
    |   `-- processes  ProcessRegistry: permanent
    |-- subagents      the subagents' supervisor (``children.py``), linked
    |-- reviewer       Reviewer task (``TaskChild``): temporary, brutal
    `-- turn-<n>       TurnActor task (``TaskChild``): temporary, brutal
        |-- compressor Compressor task (``TaskChild``): temporary, brutal
        `-- tool-<id>  ToolWorker task (``TaskChild``): temporary, brutal

``POLICY`` says the outcome of each child's crash; ``tests/hermes/session/
test_child_crashes.py`` checks each one. The linked children (``services``,
``subagents``) take the session down when they exit abnormally: the session's
own supervisor (the daemon's ``sessions/sup``, transient) restarts it on the
same transcript, whose repair gives every open tool call a result. The task
children are unlinked: their owner reads how they ended (see ``task_child.py``).
"""

from __future__ import annotations

import functools

import attrs

from actors import ActorContext, ActorRef
from hermes.processes import NoticeSink, ProcessRegistry, ProcessService
from supervisors import ChildSpec, Restart, Strategy, Supervisor, SupervisorClient, SupervisorFlags

from .deps import SessionDeps

SERVICES = "services"
PROCESSES = "processes"
PROCESSES_PATH = f"{SERVICES}/{PROCESSES}"
"""Where a session's process registry lives, relative to the session's own path."""
SERVICES_INTENSITY = 3
SERVICES_PERIOD = 30.0
"""More restarts of the session's services than this in that many seconds fail the session."""

PROCESS_CALL_TIMEOUT = 5.0
"""Default bound of a tool's call to the process registry (``ProcessService``)."""


@attrs.frozen(slots=True, kw_only=True)
class ChildPolicy:
    """One child of a session's subtree and what its crash leads to."""

    path: str
    """Below the session (``turn-<n>/tool-<id>``: a tool worker of the running turn)."""
    restart: Restart
    shutdown: str
    crash: str
    """What a crash of this child does (checked by ``test_child_crashes.py``)."""
    session: str
    """``survives``, or ``fails`` (then the session's supervisor restarts it)."""


POLICY = (
    ChildPolicy(
        path=PROCESSES_PATH,
        restart=Restart.PERMANENT,
        shutdown="stop_budget + 2 s (every process group killed and reaped)",
        crash="restarted in place; its processes go with it (each one's watcher, a child of "
        "the registry, kills and reaps its group first), and the new registry re-adopts any "
        "its checkpoint still lists alive; the tools' ProcessService addresses the slot, so "
        "calls made during the restart wait for the new registry",
        session="survives",
    ),
    ChildPolicy(
        path=SERVICES,
        restart=Restart.PERMANENT,
        shutdown="the processes' shutdown + 1 s",
        crash=f"more than {SERVICES_INTENSITY} restarts in {SERVICES_PERIOD:g} s: it gives up "
        "and the session fails with it",
        session="fails",
    ),
    ChildPolicy(
        path="subagents",
        restart=Restart.PERMANENT,
        shutdown="infinity (every child subtree gone)",
        crash="the session fails (its turn may be waiting on a delegation that is gone)",
        session="fails",
    ),
    ChildPolicy(
        path="turn-<n>",
        restart=Restart.TEMPORARY,
        shutdown="brutal (it settles the transcript in a shielded step)",
        crash="the turn ends failed ('the turn crashed: ...'), the transcript is repaired, "
        "the next queued input runs",
        session="survives",
    ),
    ChildPolicy(
        path="turn-<n>/tool-<id>",
        restart=Restart.TEMPORARY,
        shutdown="brutal (the tool's process group is killed)",
        crash="the call gets an error result (worker_stopped) and the turn goes on",
        session="survives",
    ),
    ChildPolicy(
        path="turn-<n>/compressor",
        restart=Restart.TEMPORARY,
        shutdown="brutal",
        crash="the static summary stands in for the model's; the compaction commits",
        session="survives",
    ),
    ChildPolicy(
        path="reviewer",
        restart=Restart.TEMPORARY,
        shutdown="brutal (its draft is dropped)",
        crash="the review is reported failed (review.completed), nothing is saved",
        session="survives",
    ),
)


def services_supervisor(session_id: str, notify: NoticeSink, deps: SessionDeps) -> Supervisor:
    """The supervisor of a session's long-lived services (see the module docstring)."""
    config = deps.processes
    registry = functools.partial(ProcessRegistry, store=deps.store, config=config)
    processes = ChildSpec(
        PROCESSES,
        registry,
        args=(session_id, notify),
        restart=Restart.PERMANENT,
        shutdown=services_shutdown(deps) - 1.0,
    )
    flags = SupervisorFlags(
        strategy=Strategy.ONE_FOR_ONE, intensity=SERVICES_INTENSITY, period=SERVICES_PERIOD
    )
    return Supervisor([processes], flags)


def services_shutdown(deps: SessionDeps) -> float:
    """How long stopping the services may take (the registry kills its groups)."""
    return deps.processes.stop_budget + 3.0


async def start_services(
    ctx: ActorContext, session_id: str, notify: NoticeSink, deps: SessionDeps
) -> tuple[ActorRef, ProcessService]:
    """Spawn the services supervisor under the session; the process service on its slot."""
    supervisor = services_supervisor(session_id, notify, deps)
    ref = await ctx.spawn(supervisor, name=SERVICES, shutdown=services_shutdown(deps))
    slot = await SupervisorClient(ref).child(PROCESSES)
    service = ProcessService(
        slot, timeout=PROCESS_CALL_TIMEOUT, config=deps.processes, handoff=deps.handoff
    )
    return ref, service
