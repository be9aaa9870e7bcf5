"""A session's system prompt across restarts: reused byte for byte while it still fits.

A session with history that resumes sends the system prompt it stored, not a
fresh build, while the model and the working directory it was built for still
match (seed #18; the session is the row's key): the provider's cached prefix
then survives a daemon restart. A mismatch, or no stored prompt, keeps the
fresh build, which is stored in its place. After a turn, a prompt that changed
(a compaction rebuilt it, an MCP server was switched) is stored again. A store
failure is only logged: the session then runs on the prompt it has.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hermes.model import Message, TextBlock
from hermes.store import StoreClient, StoreError
from hermes.store.prompt_queries import GetPrompt, SavePrompt

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

    async def restore(self, messages: Sequence[Message]) -> tuple[TextBlock, ...] | None:
        """The stored prompt, when the session has history and it was built for the same
        model and working directory; else None (build afresh)."""
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
        self.saved = stored.blocks
        return stored.blocks

    async def keep(self, system: tuple[TextBlock, ...]) -> None:
        """Store ``system`` unless the store already holds it."""
        if system == self.saved or not system:
            return
        request = SavePrompt(self.session_id, self.model, self.cwd, tuple(system))
        try:
            await self.store.request(request, timeout=self.timeout)
        except StoreError as error:
            log.warning("session %s: its system prompt was not stored: %s", self.session_id, error)
            return
        self.saved = tuple(system)
