"""The transcript of one session, in memory and in the store, kept in step.

A ``Conversation`` belongs to one actor. The session has its own; a turn gets a
working copy (``copy``) it owns while it runs, and gives its messages back as
part of its task's value, which the session ``adopt``s. Writes carry the
session's writer epoch (``hermes.store`` refuses an old one with
``StaleWriter``): when the session leaves a turn behind (reported
unkillable) it ``claim``s a new one, so that turn's copy can no longer write.
Every change is written to the store first and applied in
memory only once the store has it, so memory never holds a row the database
lacks. A write that failed or was cancelled half-way leaves the two possibly
apart: the conversation is then *dirty* and ``resync()`` reloads it.

Roles alternate in the transcript. User input that arrives when the last
message is already the user's (a prompt after a cancelled turn, a steer after
tool results) is merged into that message as further text blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from hermes.model.types import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from hermes.store import CompactionRecord, StoreClient


class Conversation:
    """A session's messages, with the store as the source of truth."""

    def __init__(
        self,
        store: StoreClient,
        session_id: str,
        messages: Sequence[Message] = (),
        *,
        writer: int | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.messages: list[Message] = list(messages)
        self.writer = writer
        """The writer epoch its writes carry (``StoreClient.claim_writer``; None: unchecked)."""
        self.dirty = False
        """A write may have half-happened: ``resync()`` before trusting ``messages``."""

    def copy(self) -> Conversation:
        """A working copy with its own messages (the same store, session and epoch): the
        running turn's, which it owns and writes through while it runs."""
        twin = Conversation(self.store, self.session_id, self.messages, writer=self.writer)
        twin.dirty = self.dirty
        return twin

    def adopt(self, messages: Sequence[Message] | None, *, dirty: bool) -> None:
        """Take on the messages a turn left (its copy's, as a value); None when it left
        none (it never settled): then only a ``resync`` can be trusted."""
        if messages is None:
            self.dirty = True
            return
        self.messages = list(messages)
        self.dirty = dirty

    async def claim(self) -> None:
        """A new writer epoch: every copy made before can no longer write (a turn left
        behind, still settling, cannot write over what this one carries on with)."""
        self.writer = await self.store.claim_writer(self.session_id)
        self.dirty = True  # what it wrote before the claim is in the store, maybe not here

    @property
    def next_seq(self) -> int:
        return len(self.messages)

    @property
    def last(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    def ends_with(self, role: str) -> bool:
        return bool(self.messages) and self.messages[-1].role == role

    # -- writes --------------------------------------------------------------------------

    async def append(self, message: Message, *, usage: Usage | None = None) -> int:
        """Persist and keep ``message``; returns its seq."""
        seq = self.next_seq
        try:
            await self.store.append(
                self.session_id, message, expected_seq=seq, usage=usage, writer=self.writer
            )
        except BaseException:
            self.dirty = True
            raise
        self.messages.append(message)
        return seq

    def submit_append(self, message: Message) -> int | None:
        """Keep ``message`` and queue its write without waiting (``StoreClient.submit``):
        for a turn killed from outside its session. Its seq, or None if
        the write could not be queued (nothing changed then: ``append`` it)."""
        seq = self.next_seq
        submitted = self.store.submit_append(
            self.session_id, message, expected_seq=seq, writer=self.writer
        )
        if not submitted:
            return None
        self.messages.append(message)
        return seq

    async def replace_last(self, message: Message, *, usage: Usage | None = None) -> int:
        """Persist ``message`` in place of the last one; returns its seq."""
        seq = self.next_seq - 1
        try:
            await self.store.replace_last(
                self.session_id, seq, message, usage=usage, writer=self.writer
            )
        except BaseException:
            self.dirty = True
            raise
        self.messages[-1] = message
        return seq

    async def add_user_blocks(self, blocks: Sequence[ContentBlock]) -> int:
        """Append user content: a new message, or merged into a trailing user message."""
        last = self.last
        if last is not None and last.role == "user":
            return await self.replace_last(Message("user", (*last.content, *blocks)))
        return await self.append(Message("user", tuple(blocks)))

    async def truncate(self, keep: int) -> int:
        """Drop the messages from seq ``keep`` on; returns how many went."""
        try:
            removed = await self.store.truncate(self.session_id, keep, writer=self.writer)
        except BaseException:
            self.dirty = True
            raise
        del self.messages[keep:]
        return removed

    async def rollback_to(self, length: int, last: Message | None) -> None:
        """Undo a turn: keep ``length`` messages, the last of them as it was (``last``).

        A turn's prompt may have been merged into the trailing user message, so
        truncating alone is not enough: that message is restored too.
        """
        await self.truncate(length)
        if last is not None and self.last != last:
            await self.replace_last(last)

    async def compact(
        self,
        messages: Sequence[Message],
        *,
        method: str,
        focus: str | None = None,
        tokens_before: int = 0,
        tokens_after: int = 0,
        usage: Usage | None = None,
    ) -> CompactionRecord:
        """Replace the whole transcript with its compacted form (the store archives the old)."""
        try:
            record = await self.store.compact(
                self.session_id,
                self.next_seq,
                messages,
                method=method,
                focus=focus,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                usage=usage,
                writer=self.writer,
            )
        except BaseException:
            self.dirty = True
            raise
        self.messages = list(messages)
        return record

    async def resync(self) -> None:
        """Reload from the store (after a write that may have half-happened)."""
        transcript = await self.store.load(self.session_id)
        self.messages = list(transcript.messages)
        self.dirty = False

    async def close_open_uses(self, reason: str, known: Mapping[str, str] | None = None) -> int:
        """Give every tool_use without a result a synthetic error result; returns how many.

        ``known``: what is known of some of them (tool use id -> text, such as
        what became of a foreground command's process group), said instead of
        the generic "may not have run". Only the last assistant message can have
        open uses (the store refuses an assistant message while earlier uses are open).
        """
        missing = open_tool_uses(self.messages)
        if not missing:
            return 0
        known = known or {}
        blocks = [lost_result(use, reason, known.get(use.id)) for use in missing]
        last = self.last
        assert last is not None
        if last.role == "user":
            await self.replace_last(_with_results(last, blocks))
        else:
            await self.append(Message("user", tuple(blocks)))
        return len(blocks)


def open_tool_uses(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """The tool_use blocks of the last assistant message that have no result yet."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            uses = list(messages[index].tool_uses())
            if index + 1 < len(messages):
                answered = {
                    b.tool_use_id
                    for b in messages[index + 1].content
                    if isinstance(b, ToolResultBlock)
                }
                uses = [u for u in uses if u.id not in answered]
            return uses
    return []


def lost_result(use: ToolUseBlock, reason: str, known: str | None = None) -> ToolResultBlock:
    if known is not None:
        return ToolResultBlock(use.id, f"[Tool call {use.name} has no result: {known}.]", True)
    return ToolResultBlock(
        use.id,
        f"[Tool call {use.name} has no result: {reason}. It may not have run, or may have "
        "partly completed.]",
        is_error=True,
    )


def _with_results(message: Message, results: Sequence[ToolResultBlock]) -> Message:
    """``message`` (a user message) with ``results`` after its existing tool results."""
    content = list(message.content)
    cut = 0
    for i, block in enumerate(content):
        if isinstance(block, ToolResultBlock):
            cut = i + 1
    return attrs.evolve(message, content=(*content[:cut], *results, *content[cut:]))


def text_of(blocks: Sequence[ContentBlock]) -> str:
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))
