"""A session's system prompt and tool list across restarts: reused while they still fit.

A session with history that resumes sends the system prompt it stored, not a
fresh build, while the model and the working directory it was built for still
match (seed #18; the session is the row's key): the provider's cached prefix
then survives a daemon restart. A mismatch, or no stored prompt, keeps the
fresh build, which is stored in its place. After a turn, a prompt that changed
(a compaction rebuilt it, an MCP server was switched) is stored again. A store
failure is only logged: the session then runs on the prompt it has.

The tool list sent beside the prompt is recorded with it and, on the same
conditions, pins the order a resumed session offers its tools in
(``pinned_order``): the stored order, so a registry filled in another order
after the restart (MCP servers connect as they come) sends the same bytes
while the tools are the same; a tool no longer offered drops out, a new one is
appended, and each is sent as it is defined now (a changed definition is sent
changed: the model calls what runs).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hermes.model import Message, TextBlock, ToolSpec
from hermes.store import StoreClient, StoreError
from hermes.store.prompt_queries import GetPrompt, SavePrompt, StoredPrompt

log = logging.getLogger(__name__)


class PromptRecord:
    """The stored system prompt of one session (see the module docstring)."""

    def __init__(
        self, store: StoreClient, session_id: str, model: str, cwd: str, timeout: float
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.model = model
        self.cwd = cwd
        self.timeout = timeout
        self.saved: tuple[TextBlock, ...] | None = None
        """What the store holds, as far as this session knows."""
        self.saved_tools: tuple[ToolSpec, ...] | None = None
        """The tool list the store holds beside it."""

    async def restore(self, messages: Sequence[Message]) -> StoredPrompt | None:
        """The stored prompt (and tool list), when the session has history and it was
        built for the same model and working directory; else None (build afresh)."""
        if not messages:
            return None
        try:
            stored = await self.store.request(GetPrompt(self.session_id), timeout=self.timeout)
        except StoreError as error:
            log.warning(
                "session %s: its system prompt could not be read: %s", self.session_id, error
            )
            return None
        if stored is None or not stored.blocks:
            return None
        if (stored.model, stored.cwd) != (self.model, self.cwd):
            log.info(
                "session %s: its stored prompt was built for %s in %s: rebuilt",
                self.session_id,
                stored.model,
                stored.cwd,
            )
            return None
        self.saved, self.saved_tools = stored.blocks, stored.tools
        return stored

    async def keep(self, system: tuple[TextBlock, ...], tools: tuple[ToolSpec, ...]) -> None:
        """Store ``system`` and ``tools`` unless the store already holds them."""
        if (system, tools) == (self.saved, self.saved_tools) or not system:
            return
        request = SavePrompt(self.session_id, self.model, self.cwd, tuple(system), tuple(tools))
        try:
            await self.store.request(request, timeout=self.timeout)
        except StoreError as error:
            log.warning("session %s: its system prompt was not stored: %s", self.session_id, error)
            return
        self.saved, self.saved_tools = tuple(system), tuple(tools)


def pinned_order(order: Sequence[str], live: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """``live`` in the stored ``order``: the tools still offered where they were, those
    no longer offered left out, new ones after them in their live order; ``live``
    itself when that is its own order (so its encoding is reused)."""
    by_name = {tool.name: tool for tool in live}
    kept = [by_name.pop(name) for name in order if name in by_name]
    arranged = (*kept, *by_name.values())
    if all(a is b for a, b in zip(arranged, live, strict=True)):
        return live
    return arranged
