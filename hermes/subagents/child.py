"""What a child session is made of: its tools, its settings, its focused system prompt.

A child is an ordinary ``SessionActor`` with:

- the parent's tools intersected with the task's toolsets (never a tool the
  parent lacks), minus the blocked ones (``delegate_task`` unless it may
  orchestrate, memory, clarify-style interactive tools...);
- a focused system prompt (the goal, the parent's context, the workspace),
  the workspace's project context file (seed #245; never ``SOUL.md``: an
  unattended session keeps the default identity) and no memory;
- its own iteration budget (250, Hermes' ``delegation.max_iterations``) and
  ``unattended`` approvals, so a dangerous command is denied: nobody is there
  to answer;
- its own subagent host one level deeper when it may orchestrate, which code
  decides from depth alone (seed #243; the model's ``orchestrate`` is ignored);
- the ``process`` tool with its ``handoff`` action, and the parent as the
  hand-off target: a process it hands over survives it, the rest die with it.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors import ActorRef
from hermes.processes import HandoffTarget
from hermes.session import ChildHost, ChildOwner, SessionConfig, SessionDeps
from hermes.tools import ToolRegistry
from hermes.tools.builtin.process_tool import ProcessTool

from .config import BLOCKED_TOOLSETS, SubagentConfig
from .driver import ChildPlan
from .output import schema_instructions
from .progress import Progress
from .tasks import TaskSpec

IDENTITY = (
    "You are a subagent of Hermes: a focused worker started by another session to do "
    "exactly one task. Work only on that task with the tools you have. No person is "
    "watching: do not ask questions, and dangerous commands are denied. When you are "
    "done, reply with a final summary for the session that started you: what you did, "
    "what you found (paths, commands, results), and what remains undone."
)


def may_orchestrate(config: SubagentConfig, task: TaskSpec, child_depth: int) -> bool:
    """Whether a child at ``child_depth`` gets to delegate further: orchestrators are
    enabled and the child is above the bottom level (seed #243). ``task.orchestrate``,
    the model's request, is ignored, as Hermes ignores the role the model passes."""
    del task
    return config.orchestrator_enabled and child_depth < config.max_depth


def child_registry(
    parent: ToolRegistry, task: TaskSpec, blocked: frozenset[str], orchestrate: bool
) -> ToolRegistry:
    """The parent's tools, narrowed to the task's toolsets, minus the blocked ones."""
    if task.toolsets is None:
        base = list(parent)
    else:
        wanted = set(task.toolsets)
        base = [t for t in parent if t.name in wanted or t.toolset in wanted]
    refused = set(blocked)
    if orchestrate:
        refused.discard("delegate_task")
    else:
        refused.add("delegate_task")
    return ToolRegistry(
        t.for_subagent() if isinstance(t, ProcessTool) else t
        for t in base
        if t.name not in refused and t.toolset not in BLOCKED_TOOLSETS
    )


def focused_prompt(subagent_id: str, task: TaskSpec, parent: SessionConfig) -> str:
    """The caller tier of the child's system prompt (the stable tier is ``IDENTITY``)."""
    parts = [f"# Your task ({subagent_id})\n\n{task.goal}"]
    if task.context:
        parts.append(f"# Context from the session that started you\n\n{task.context}")
    parts.append(f"# Workspace\n\n{parent.cwd}")
    if task.output_schema is not None:
        parts.append(schema_instructions(task.output_schema))
    return "\n\n".join(parts)


def child_config(
    parent: SessionConfig, config: SubagentConfig, subagent_id: str, task: TaskSpec
) -> SessionConfig:
    """The child session's settings, derived from its parent's."""
    title = task.goal if len(task.goal) <= 80 else task.goal[:79] + "…"
    return attrs.evolve(
        parent,
        model=config.model or parent.model,
        title=f"{subagent_id}: {title}",
        system=f"{IDENTITY}\n\n{focused_prompt(subagent_id, task, parent)}",
        memory_snapshot=None,
        max_iterations=config.max_iterations,
        load_context_files=True,
        unattended=True,
        scheduled=False,  # a child of a cron run is a subagent: warned, not halted (#190)
    )


def child_deps(
    parent: SessionDeps,
    registry: ToolRegistry,
    subagents: ChildHost | None,
    handoff: HandoffTarget | None = None,
) -> SessionDeps:
    """The child's collaborators: the parent's, with its own tools, subagent host and
    hand-off target (never its grandparent's)."""
    return attrs.evolve(parent, registry=registry, subagents=subagents, handoff=handoff)


def handoff_target(owner: ChildOwner, progress: Progress) -> HandoffTarget | None:
    """Where the child's hand-offs go: the owner's process registry; ``progress`` hears."""
    if owner.processes is None:
        return None
    return HandoffTarget(owner.session_id, owner.processes, progress.handed)


def first_prompt(task: TaskSpec) -> str:
    """The child's first user message."""
    return f"Begin your task: {task.goal}"


def child_plan(
    *,
    owner: ChildOwner,
    config: SubagentConfig,
    depth: int,
    subagent_id: str,
    task: TaskSpec,
    progress: Progress,
    supervisor: ActorRef,
    host_for: Callable[[int], ChildHost],
) -> ChildPlan:
    """What the driver of one task gets: the child at ``depth + 1``, fully prepared."""
    child_depth = depth + 1
    orchestrate = may_orchestrate(config, task, child_depth)
    registry = child_registry(owner.deps.registry, task, config.blocked_tools, orchestrate)
    host = host_for(child_depth) if orchestrate else None
    return ChildPlan(
        subagent_id=subagent_id,
        parent_session_id=owner.session_id,
        supervisor=supervisor,
        task=task,
        config=child_config(owner.config, config, subagent_id, task),
        deps=child_deps(owner.deps, registry, host, handoff_target(owner, progress)),
        progress=progress,
        prompt=first_prompt(task),
        schema_retries=config.schema_retries,
        close_timeout=config.close_timeout,
    )
