from __future__ import annotations

from hermes.compression import CompressionSettings, prune_tool_results
from hermes.model.types import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

from .builders import assistant, result, results, use, user

BIG = "b" * 12_345


def _transcript() -> list[Message]:
    return [
        user("start"),
        assistant("", use("toolu_a", "read_file", path="head.py")),
        results(result("toolu_a", BIG)),  # head (protect_first=3)
        assistant("", use("toolu_b", "shell", command="ls"), use("toolu_c", "grep")),
        results(result("toolu_b", BIG, error=True), result("toolu_c", "small"), text="note"),
        assistant("", use("toolu_d", "read_file")),
        results(result("toolu_d", BIG)),  # index 6: protected tail from here
        assistant("done"),
    ]


def test_prunes_large_results_between_head_and_protect_from() -> None:
    messages = _transcript()
    out = prune_tool_results(messages, 6, CompressionSettings())
    assert out.pruned_count == 1
    pruned = out.messages[4].content[0]
    assert isinstance(pruned, ToolResultBlock)
    assert pruned.content == (
        "[Old tool output pruned to save context: 12,345 characters from shell (call toolu_b).]"
    )
    assert pruned.tool_use_id == "toolu_b" and pruned.is_error
    assert out.saved_chars == 12_345 - len(pruned.content)
    # small result, trailing text, tool uses, head and tail untouched
    assert out.messages[4].content[1:] == messages[4].content[1:]
    assert out.messages[3] is messages[3]
    assert out.messages[:3] == tuple(messages[:3])
    assert out.messages[6:] == tuple(messages[6:])


def test_protect_from_bounds_the_pruning() -> None:
    messages = _transcript()
    out = prune_tool_results(messages, len(messages), CompressionSettings())
    assert out.pruned_count == 2
    text = out.messages[6].content[0]
    assert isinstance(text, ToolResultBlock)
    assert "from read_file (call toolu_d)" in str(text.content)
    none = prune_tool_results(messages, 3, CompressionSettings())
    assert none.pruned_count == 0 and none.messages == tuple(messages)


def test_threshold_and_images() -> None:
    messages = [
        user("go"),
        assistant("x"),
        user("more"),
        assistant("", use("toolu_1", "screenshot"), use("toolu_2", "cat")),
        results(
            ToolResultBlock("toolu_1", (TextBlock("caption"), ImageBlock("image/png", "AAAA"))),
            result("toolu_2", "c" * 2_000),  # exactly at the limit: kept
        ),
        assistant("done"),
    ]
    out = prune_tool_results(messages, 5, CompressionSettings())
    assert out.pruned_count == 1
    shot, cat = out.messages[4].content
    assert isinstance(shot, ToolResultBlock) and isinstance(cat, ToolResultBlock)
    assert shot.content == (
        "[Old tool output pruned to save context: 7 characters and 1 image from screenshot "
        "(call toolu_1).]"
    )
    assert cat.content == "c" * 2_000
    assert all(isinstance(b, ToolUseBlock) for b in out.messages[3].content)


def test_unknown_tool_name() -> None:
    messages = [
        user("a"),
        assistant("b"),
        user("c"),
        assistant("", use("t1")),
        results(result("t1", BIG)),
    ]
    # a result whose use is past protect_from cannot happen in a valid transcript; the
    # name falls back when the use is missing from the scanned range
    out = prune_tool_results([*messages[:3], messages[4]], 4, CompressionSettings())
    block = out.messages[3].content[0]
    assert isinstance(block, ToolResultBlock) and "unknown tool" in str(block.content)
