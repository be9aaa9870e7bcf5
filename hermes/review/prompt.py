"""What a review asks the model, and the digest of a transcript for a different model."""

from __future__ import annotations

from collections.abc import Sequence

from hermes.model import Message, TextBlock, ToolResultBlock, ToolUseBlock

REVIEW_PROMPT = (
    "[Background memory review; the user is not reading this.] Look back over the "
    "conversation above. Is there anything durable worth keeping for future sessions: "
    "the user's preferences, corrections they made, facts about their environment or "
    "projects, lessons learned about how to work with them? Use the memory tool to add "
    "such entries (agent notes to target 'memory', facts about the user to 'user'), or to "
    "replace or remove entries that are now wrong. Do not save task progress, logs or "
    "anything only this conversation needs. If nothing is worth saving, answer "
    "'Nothing to save.' without calling tools."
)

SKILL_REVIEW_PROMPT = (
    "[Background skill review; the user is not reading this.] Look back over the work "
    "above. Was a procedure worked out that will come back: a hard task solved, a "
    "sequence of steps that finally worked, a trap found and avoided? If so, save it as a "
    "skill with skill_manage so a later session can repeat it: check the Skills list "
    "first (skill_view any that looks close) and patch or extend an existing skill rather "
    "than writing a near-duplicate; otherwise create one (SKILL.md with front matter: "
    "name, a one-line description saying when to use it; then the steps, the traps and "
    "how to check the result). Leave out secrets, personal data and what only this run "
    "needs. If nothing is worth a skill, answer 'Nothing to save.' without calling tools."
)

COMBINED_REVIEW_PROMPT = (
    "[Background memory and skill review; the user is not reading this.] Look back over "
    "the conversation above. First, memory: is there anything durable worth keeping (the "
    "user's preferences and corrections, facts about their environment, lessons about "
    "working with them)? Add such entries with the memory tool, or replace or remove "
    "ones now wrong; no task progress or logs. Second, skills: was a procedure worked out "
    "that will come back? Save it with skill_manage, patching a close existing skill "
    "(skill_view it first) rather than writing a near-duplicate. If nothing is worth "
    "saving, answer 'Nothing to save.' without calling tools."
)


ATTENDED_NOTE = (
    "The person asked for this review: memory replacements and removals you make are "
    "applied when it completes, not only proposed."
)


def review_prompt(*, memory: bool, skills: bool, focus: str = "", attended: bool = False) -> str:
    """The ask for a review of memory, skills or both; ``focus`` is the person's (/refine),
    ``attended`` says the person asked for it (its memory edits are written)."""
    if memory and skills:
        ask = COMBINED_REVIEW_PROMPT
    else:
        ask = SKILL_REVIEW_PROMPT if skills else REVIEW_PROMPT
    if attended and memory:
        ask += f"\n\n{ATTENDED_NOTE}"
    if focus:
        ask += f"\n\nThe person asked for this review; give priority to: {focus}"
    return ask


DIGEST_CHARS = 1_500
"""Characters kept of each message in a digest."""


def review_messages(
    transcript: Sequence[Message], *, digest: int | None = None, ask: str = REVIEW_PROMPT
) -> tuple[Message, ...]:
    """The review's opening messages: the transcript (or a digest of its tail) and ``ask``.

    The full transcript keeps the session's cached prefix (same model, same
    system prompt); ``digest`` (a count of trailing messages) is for a
    different model, which has no cache to reuse.
    """
    if digest is not None:
        return (Message.user(f"{render_digest(transcript[-digest:])}\n\n{ask}"),)
    block = TextBlock(ask)
    if transcript and transcript[-1].role == "user":
        last = transcript[-1]
        return (*transcript[:-1], Message("user", (*last.content, block)))
    return (*transcript, Message("user", (block,)))


def render_digest(messages: Sequence[Message]) -> str:
    """The messages as plain text, each cut to ``DIGEST_CHARS``."""
    lines = ["[A digest of the latest part of a conversation]"]
    for message in messages:
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.append(f"(called {block.name} with {block.input})")
            elif isinstance(block, ToolResultBlock):
                text = block.content if isinstance(block.content, str) else "(blocks)"
                parts.append(f"(tool result: {text})")
        text = " ".join(parts)
        if len(text) > DIGEST_CHARS:
            text = text[:DIGEST_CHARS] + " [...]"
        lines.append(f"{message.role}: {text}")
    return "\n".join(lines)
