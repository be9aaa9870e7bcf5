"""The session's system prompt, in three cache tiers, built once per session.

- **stable**: identity (``SOUL.md`` when the session has one), tool guidance
  and the skills index with any pinned skills (``hermes.skills``; cache
  breakpoint after it);
- **context**: the project context file found from the working directory and
  the caller's own system text (cache breakpoint after it);
- **volatile**: memory snapshot and date (no breakpoint: it may change between
  sessions, never within one).

The session builds it once and keeps the returned blocks byte-identical for
its whole life (rebuilt only after compression), so the cached prefix holds.
Project context files follow Hermes' precedence: the first kind found wins among
``.hermes.md`` / ``HERMES.md`` (nearest, up to the git root), the ``AGENTS.md``
chain from the git root down to the working directory, ``CLAUDE.md``, then
``.cursorrules``. The file found is threat-scanned (``hermes.skills.scan``):
a dangerous verdict puts a one-line ``[BLOCKED: ...]`` notice, naming the
finding, in its place.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from pathlib import Path

import attrs
import trio

from hermes.memory import MemoryStore
from hermes.model.types import Message, TextBlock
from hermes.skills import (
    Blocked,
    BlockReport,
    SkillLibrary,
    SkillViewTool,
    blocked_notice,
    scan_text,
    system_parts,
    told_index,
    user_text,
)
from hermes.tools import ToolRegistry

from .config import SessionConfig
from .events import ContextBlocked, EventHub

log = logging.getLogger(__name__)

DEFAULT_IDENTITY = (
    "You are Hermes, an AI agent running as a daemon on the user's workstation. "
    "You work in their files with the tools you are given, say plainly what you did "
    "and what you could not do, and never claim a command ran when it did not."
)

SOUL_LIMIT = 20_000
"""Characters of SOUL.md that become the identity (the rest is cut, with a note)."""

CONTEXT_FILE_LIMIT = 32_000
"""Characters of a project context file that enter the prompt (the rest is cut, with a note)."""


@attrs.frozen(slots=True)
class PromptParts:
    """Everything the system prompt is made of, gathered by the session at start."""

    cwd: Path
    today: datetime.date
    identity: str = DEFAULT_IDENTITY
    tool_guidance: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    """The skills index, then pinned skills (``hermes.skills.system_parts``)."""
    caller_system: str | None = None
    memory_snapshot: str | None = None
    load_context_files: bool = True
    report: BlockReport | None = attrs.field(default=None, eq=False)
    """Told of the context file when the threat scan blocks it."""


def build_system_prompt(parts: PromptParts) -> tuple[TextBlock, ...]:
    """The system prompt blocks: stable tier, context tier (if any), volatile tier."""
    stable = "\n\n".join(
        [
            parts.identity.strip(),
            *(g.strip() for g in parts.tool_guidance if g),
            *(s.strip() for s in parts.skills if s),
        ]
    )
    blocks = [TextBlock(stable, cache=True)]
    context: list[str] = []
    if parts.load_context_files:
        found = find_context_file(parts.cwd)
        if found is not None:
            path, text = found
            scan = scan_text(text)
            if scan.blocked:  # seed #21: the whole file gives way to a one-line notice
                log.warning("context file %s blocked: %s", path, scan.reason())
                text = blocked_notice(str(path), scan)
                if parts.report is not None:
                    parts.report(Blocked("context file", str(path), scan.reason(), text, "blocked"))
            context.append(f"# Project context ({path.name}, from {path.parent})\n\n{text}")
    if parts.caller_system and parts.caller_system.strip():
        context.append(parts.caller_system.strip())
    if context:
        blocks.append(TextBlock("\n\n".join(context), cache=True))
    volatile = []
    if parts.memory_snapshot and parts.memory_snapshot.strip():
        volatile.append(f"# Memory\n\n{parts.memory_snapshot.strip()}")
    volatile.append(f"Today is {parts.today.isoformat()}. Working directory: {parts.cwd}")
    blocks.append(TextBlock("\n\n".join(volatile)))
    return tuple(blocks)


def _git_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _read(path: Path) -> str | None:
    """The file's text, cut to the limit; None if it is missing, unreadable or empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    text = text.strip()
    if not text:
        return None
    if len(text) > CONTEXT_FILE_LIMIT:
        cut = len(text) - CONTEXT_FILE_LIMIT
        text = f"{text[:CONTEXT_FILE_LIMIT]}\n\n[... {cut} more characters of {path.name} cut]"
    return text


def find_context_file(cwd: Path) -> tuple[Path, str] | None:
    """The project context to load for ``cwd``: (path of the file used, text), or None."""
    cwd = cwd.resolve()
    root = _git_root(cwd)
    # Inside a repo: the working directory up to the git root; outside: itself only.
    upward = [cwd, *cwd.parents][: [cwd, *cwd.parents].index(root) + 1] if root else [cwd]
    for directory in upward:
        for name in (".hermes.md", "HERMES.md"):
            text = _read(directory / name)
            if text is not None:
                return directory / name, text
    chain = []
    for directory in reversed(upward):  # git root first, working directory last
        text = _read(directory / "AGENTS.md")
        if text is not None:
            chain.append((directory / "AGENTS.md", text))
    if chain:
        last_path = chain[-1][0]
        return last_path, "\n\n".join(text for _, text in chain)
    for name in ("CLAUDE.md", ".cursorrules"):
        text = _read(cwd / name)
        if text is not None:
            return cwd / name, text
    return None


def read_soul(path: Path | None, report: BlockReport | None = None) -> str:
    """The identity: ``path``'s text (``SOUL.md``) when it exists and is not empty, else the
    built-in one. The person's own file is threat-scanned, and a hit only logged (seed #19)
    and, when dangerous, told to ``report`` (it loads anyway)."""
    if path is None:
        return DEFAULT_IDENTITY
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return DEFAULT_IDENTITY
    if not text:
        return DEFAULT_IDENTITY
    scan = scan_text(text)
    if scan.findings:
        log.warning(
            "%s: the threat scan found %s (loaded: it is your own file)", path, scan.reason()
        )
    if scan.blocked and report is not None:
        report(Blocked("identity", str(path), scan.reason(), "", "loaded anyway"))
    if len(text) > SOUL_LIMIT:
        cut = len(text) - SOUL_LIMIT
        text = f"{text[:SOUL_LIMIT]}\n\n[... {cut} more characters of {path.name} cut]"
    return text


def session_system_prompt(
    config: SessionConfig,
    registry: ToolRegistry,
    memory: MemoryStore | None,
    report: BlockReport | None = None,
) -> tuple[TextBlock, ...]:
    """A session's system prompt: its settings, its tools' guidance, the memory snapshot.

    The snapshot is read here, so at session start and after each compaction,
    never in between. Unattended sessions (subagents) get none: they never see
    the memory files. ``report`` is told of each thing the threat scan kept out
    (``ContextBlocked`` events, ``BlockedNotices``).
    """
    guidance = tuple(
        f"Tool {tool.name}: {tool.description.splitlines()[0]}"
        for tool in registry
        if tool.description
    )
    snapshot = config.memory_snapshot
    if memory is not None and not config.unattended:
        snapshot = memory.snapshot(report)
    library = skill_library(registry)
    skills = (
        system_parts(
            library, config.cwd, tools=registry.names(), pin=not config.unattended, report=report
        )
        if library is not None
        else ()
    )
    return build_system_prompt(
        PromptParts(
            cwd=config.cwd,
            today=datetime.date.today(),
            identity=read_soul(None if config.unattended else config.soul_file, report),
            tool_guidance=guidance,
            skills=skills,
            caller_system=config.system,
            memory_snapshot=snapshot,
            load_context_files=config.load_context_files,
            report=report,
        )
    )


class BlockedNotices:
    """Publishes a ``ContextBlocked`` event for each block a prompt build reports, once per
    session (a rebuild after a compaction does not repeat what the person was told)."""

    def __init__(self, hub: EventHub) -> None:
        self.hub = hub
        self.told: set[Blocked] = set()

    def __call__(self, blocked: Blocked) -> None:
        if blocked in self.told:
            return
        self.told.add(blocked)
        self.hub.publish(
            ContextBlocked(
                blocked.what, blocked.path, blocked.finding, blocked.notice, blocked.effect
            )
        )


def skill_library(registry: ToolRegistry) -> SkillLibrary | None:
    """The skill library behind the registry's ``skill_view`` tool, if it has one."""
    tool = registry.get("skill_view")
    return tool.library if isinstance(tool, SkillViewTool) else None


async def turn_text(
    config: SessionConfig,
    registry: ToolRegistry,
    system: Sequence[TextBlock],
    messages: Sequence[Message],
    text: str,
    *,
    from_person: bool,
) -> str:
    """The user message a turn sends for ``text``: ``/skill-name args`` expanded (a
    person's only) and the skills delta note prefixed when the set changed."""
    library = skill_library(registry)
    if library is None:
        return text
    told = told_index(
        system[0].text if system else "",
        (m.text() for m in messages if m.role == "user"),
    )
    return await trio.to_thread.run_sync(
        lambda: user_text(
            library,
            config.cwd,
            text,
            told=told,
            from_person=from_person,
            tools=registry.names(),
        )
    )
