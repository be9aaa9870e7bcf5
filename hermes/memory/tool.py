"""The ``memory`` tool: the model's way to save durable facts across sessions.

It writes through whatever ``MemoryService`` the tool context carries: the
live store in an attended session (applied at once), a ``MemoryDraft`` in a
background review (adds drafted, replace/remove staged for a person). Without
a service the tool answers with an error and saves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome

from .entries import FILE_NAMES, MemoryChange, MemoryLimits, check_kind, usage_text
from .errors import MemoryStoreError
from .proposals import Proposal
from .service import MemoryService

ACTIONS = ("add", "replace", "remove")
TARGETS = ("memory", "user")


def describe_tool(limits: MemoryLimits) -> str:
    """The tool description, with the caps of ``limits``."""
    return (
        "Save durable facts to long-term memory, which is put into the system prompt of "
        "every future session. Two stores: 'memory' holds your own notes (facts about the "
        "environment and projects, conventions, tool quirks, lessons learned that will "
        "matter again); 'user' holds what you know about the user (name, role, preferences, "
        "how they like to work and be answered). Save when the user states a preference or "
        "corrects you, or when you learn a stable fact that would save time next session. "
        "Do NOT save task progress, completed-work logs, temporary state or anything easy to "
        "find again: the session history keeps those. Keep each entry short and "
        "self-contained. Space is limited (memory "
        f"{limits.memory_chars:,} chars, user {limits.user_chars:,} chars): when a store is "
        "full, replace or remove outdated entries. Actions: add (content = the new entry); "
        "replace (old_text = a short unique part of the entry to change, content = its new "
        "full text); remove (old_text = a short unique part of the entry). Changes take "
        "effect in the system prompt from the next session on."
    )


INPUT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": list(ACTIONS),
            "description": "add a new entry, replace an entry's text, or remove an entry.",
        },
        "target": {
            "type": "string",
            "enum": list(TARGETS),
            "default": "memory",
            "description": "'memory' for your notes (MEMORY.md), 'user' for the user "
            "profile (USER.md).",
        },
        "content": {
            "type": "string",
            "description": "The entry's full text (add and replace).",
        },
        "old_text": {
            "type": "string",
            "description": "A short part of the existing entry that occurs in no other "
            "entry (replace and remove).",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}


class MemoryTool(Tool):
    """``memory``: add, replace or remove an entry of MEMORY.md or USER.md."""

    name = "memory"
    kind = ToolKind.OTHER
    toolset = "memory"
    input_schema = INPUT_SCHEMA

    def __init__(self, limits: MemoryLimits | None = None) -> None:
        self.description = describe_tool(limits or MemoryLimits())

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        action: str = args["action"]
        target = check_kind(args.get("target", "memory"))
        content: str | None = args.get("content")
        old_text: str | None = args.get("old_text")
        details = {"action": action, "target": target}
        if action in ("add", "replace") and not (content and content.strip()):
            return ToolOutcome.error(
                f"action '{action}' needs content: the entry's full text. Nothing changed.",
                reason="missing_content",
                **details,
            )
        if action in ("replace", "remove") and not (old_text and old_text.strip()):
            return ToolOutcome.error(
                f"action '{action}' needs old_text: a short part of the entry that occurs in "
                "no other entry. Nothing changed.",
                reason="missing_old_text",
                **details,
            )
        try:
            # an ABC as the key is the point (mypy issue 4717 forbids abstract type[T])
            service = ctx.service(MemoryService)  # type: ignore[type-abstract]
        except (LookupError, TypeError):
            return ToolOutcome.error(
                "Memory is not available here (no memory store in this context). Nothing "
                "was saved.",
                reason="no_memory",
                **details,
            )

        def apply() -> tuple[MemoryChange | Proposal, int, int]:
            if action == "add":
                result: MemoryChange | Proposal = service.add(target, content or "")
            elif action == "replace":
                result = service.replace(target, old_text or "", content or "")
            else:
                result = service.remove(target, old_text or "")
            return (result, *service.usage(target))

        try:
            # In a thread: waiting for the file lock must not stall the event loop. A
            # cancel waits for it (bounded by the lock timeout), so no write is cut short.
            result, used, cap = await trio.to_thread.run_sync(apply)
        except MemoryStoreError as exc:
            return ToolOutcome.error(str(exc), reason=exc.reason, **details)
        usage = usage_text(used, cap)
        if isinstance(result, Proposal):
            return ToolOutcome.ok(
                f"Staged as proposal {result.id} for a person to approve: {result.summary()}. "
                f"Nothing changes until it is approved. {FILE_NAMES[target]} usage: {usage}.",
                proposal=result.id,
                used=used,
                cap=cap,
                **details,
            )
        text = f"{result.describe()} {FILE_NAMES[target]} usage: {usage}."
        if result.changed:
            text += f" {service.saved_note}"
        return ToolOutcome.ok(text, changed=result.changed, used=used, cap=cap, **details)
