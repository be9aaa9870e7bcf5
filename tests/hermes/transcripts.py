"""Hypothesis strategies for transcript types: any blocks, and valid transcripts."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

from hermes.model.types import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)

texts = st.text(max_size=60)
ids = st.text(min_size=1, max_size=16)
text_blocks = st.builds(TextBlock, texts, st.booleans())
image_blocks = st.builds(
    ImageBlock,
    st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"]),
    st.text(string.ascii_letters + string.digits + "+/=", max_size=40),
)
thinking_blocks = st.builds(ThinkingBlock, texts, texts)
redacted_blocks = st.builds(RedactedThinkingBlock, texts)
tool_use_blocks = st.builds(ToolUseBlock, ids, ids, json_objects)
tool_result_blocks = st.builds(
    ToolResultBlock,
    ids,
    texts | st.lists(text_blocks | image_blocks, max_size=3).map(tuple),
    st.booleans(),
    st.booleans(),
)
blocks: st.SearchStrategy[ContentBlock] = st.one_of(
    text_blocks, image_blocks, thinking_blocks, redacted_blocks, tool_use_blocks, tool_result_blocks
)
messages = st.builds(
    Message, st.sampled_from(["user", "assistant"]), st.lists(blocks, max_size=5).map(tuple)
)
usages = st.builds(Usage, *(st.integers(min_value=0, max_value=2**40) for _ in range(4)))


@st.composite
def transcripts(draw: st.DrawFn, max_turns: int = 3, max_steps: int = 3) -> list[Message]:
    """A transcript the store accepts: alternating roles, every tool_use answered."""
    out: list[Message] = []
    counter = 0
    for _ in range(draw(st.integers(1, max_turns))):
        prompt = draw(st.lists(text_blocks | image_blocks, min_size=1, max_size=3))
        out.append(Message("user", tuple(prompt)))
        for step in range(max_steps):
            content: list[ContentBlock] = []
            if draw(st.booleans()):
                content.append(draw(thinking_blocks | redacted_blocks))
            content.extend(draw(st.lists(text_blocks, max_size=2)))
            calls = 0 if step == max_steps - 1 else draw(st.integers(0, 3))
            uses = []
            for _ in range(calls):
                counter += 1
                use = ToolUseBlock(f"toolu_{counter:04d}", draw(ids), draw(json_objects))
                uses.append(use)
            content.extend(uses)
            out.append(Message("assistant", tuple(content)))
            if not uses:
                break
            order = draw(st.permutations(uses))
            results: list[ContentBlock] = [
                ToolResultBlock(
                    u.id,
                    draw(texts | st.lists(text_blocks | image_blocks, max_size=2).map(tuple)),
                    draw(st.booleans()),
                )
                for u in order
            ]
            results.extend(draw(st.lists(text_blocks, max_size=1)))
            out.append(Message("user", tuple(results)))
    return out
