"""What a session builds when it starts, as functions of its settings and collaborators.

The session actor (``session.py``) calls these from ``on_start``: load or create
its transcript (closing tool calls a crash left open), read its recorded yolo
switch, build its approval session, its tools' services, its ``ContextKeeper``
and its ``ReviewHost``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import attrs

from hermes.memory import LiveMemory, MemoryService
from hermes.model import Message, Usage
from hermes.processes import (
    ForegroundLedger,
    ProcessService,
    describe_leftovers,
)
from hermes.procgroup import GroupLedger
from hermes.skills import SkillManageTool
from hermes.stopgates import LateChecks
from hermes.store import SessionEnded, SessionNotFound, StoreClient, StoreError, flag_queries
from hermes.tools import (
    ApprovalMode,
    ApprovalSession,
    CheckpointService,
    ModelJudge,
    ToolSnapshot,
    Unattended,
)

from . import events as ev
from .config import SessionConfig
from .context_keeper import ContextKeeper, SystemBuilder
from .conversation import Conversation, open_tool_uses
from .deps import SessionDeps
from .reviews import ReviewHost

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class Opened:
    """A session's transcript as it starts: created, or resumed and repaired."""

    conversation: Conversation
    usage: Usage


async def open_conversation(
    store: StoreClient, config: SessionConfig, session_id: str | None
) -> Opened:
    """Resume ``session_id`` (reopened if it had ended) or create the session.

    Tool calls a crash left without a result get a synthetic one (what became of
    a foreground command a dead daemon left is said in it), so the next request
    is valid.
    """
    writer: int | None = None
    if session_id is not None:
        # Claimed first, then read: a turn an earlier incarnation left running can no
        # longer write, so what is read is the transcript it carries on with. One claim
        # and one load (an ended session is reopened first; a missing one is created).
        try:
            try:
                writer = await store.claim_writer(session_id)
            except SessionEnded:
                await store.reopen_session(session_id)
                writer = await store.claim_writer(session_id)
        except SessionNotFound:
            writer = None
    usage = Usage()
    if writer is None:
        info = await store.create_session(
            model=config.model, title=config.title, session_id=session_id
        )
        session_id = info.id
        writer = 0  # a row made just now: its first epoch, and no writer left behind
        messages: tuple[Message, ...] = ()
    else:
        assert session_id is not None
        transcript = await store.load(session_id)
        messages = transcript.messages
        usage = transcript.session.usage
    conversation = Conversation(store, session_id, messages, writer=writer)
    leftovers = await describe_leftovers(  # foreground commands a dead daemon left
        store, session_id, (use.id for use in open_tool_uses(messages))
    )
    if await conversation.close_open_uses(
        "the session restarted while it was running", leftovers.texts
    ):
        await leftovers.forget(store)
    return Opened(conversation, usage)


async def recorded_yolo(store: StoreClient, session_id: str, timeout: float) -> bool:
    """The yolo switch a person set on this session before (it survives restarts)."""
    try:
        return await store.request(flag_queries.GetYolo(session_id), timeout=timeout)
    except StoreError as error:
        log.warning("session %s: its yolo switch could not be read: %s", session_id, error)
        return False


async def record_yolo(store: StoreClient, session_id: str, on: bool, timeout: float) -> None:
    """Keep the switch in the store, so a restarted session has it (a failure is logged)."""
    try:
        await store.request(flag_queries.SetYolo(session_id, on), timeout=timeout)
    except StoreError as error:
        log.warning("session %s: its yolo switch was not saved: %s", session_id, error)


def approval_session(
    config: SessionConfig, deps: SessionDeps, recorded: bool = False
) -> ApprovalSession:
    """The approval gate's state for this session (``recorded``: its saved yolo switch)."""
    mode = ApprovalMode(config.approval_mode)
    judge = (
        ModelJudge(
            client=deps.client, model=config.judge_model or config.model, cwd=str(config.cwd)
        )
        if mode is ApprovalMode.SMART
        else None
    )
    return ApprovalSession(
        yolo=config.yolo or recorded,
        timeout=config.approval_timeout,
        allowlist=set(deps.allowlist),
        allowlist_source=deps.allowlist_source,
        save_always=deps.save_always,
        mode=mode,
        judge=judge,
        # approvals.unattended; a subagent is denied whatever it says (seed #117)
        unattended=Unattended.DENY
        if config.unattended
        else Unattended(config.unattended_approvals),
    )


def tool_services(
    config: SessionConfig, deps: SessionDeps, session_id: str, processes: ProcessService
) -> dict[type, object]:
    """The services the session's tools find in their ``ToolContext``."""
    ledger = ForegroundLedger(deps.store, session_id, timeout=deps.processes.store_timeout)
    services: dict[type, object] = {ProcessService: processes, GroupLedger: ledger}
    if deps.memory is not None and not config.unattended:
        services[MemoryService] = LiveMemory(deps.memory)
    services[LateChecks] = LateChecks()  # late checker verdicts (seed #239)
    if config.checkpoint_dir is not None:
        services[CheckpointService] = CheckpointService(root=config.checkpoint_dir)
    return services


def context_keeper(
    config: SessionConfig,
    deps: SessionDeps,
    tools: ToolSnapshot,
    hub: ev.EventHub,
    build_system: SystemBuilder,
) -> ContextKeeper:
    """The keeper of the session's system prompt, context meter and compaction policy."""
    return ContextKeeper(
        config.compression,
        client=deps.client,
        model=config.model,
        context_window=config.context_window,
        max_tokens=config.max_tokens,
        tools=tools,
        hub=hub,
        build_system=build_system,
        commit_timeout=config.store_timeout,
    )


def review_host(
    config: SessionConfig,
    deps: SessionDeps,
    hub: ev.EventHub,
    charge: Callable[[Usage], Awaitable[object]],
) -> ReviewHost:
    """The session's background reviews (never in an unattended session)."""
    settings = (
        config.review if not config.unattended else attrs.evolve(config.review, enabled=False)
    )
    manage = deps.registry.get("skill_manage")
    skills = manage.library if isinstance(manage, SkillManageTool) else None
    return ReviewHost(settings, deps.memory, deps.client, hub, charge=charge, skills=skills)
