from __future__ import annotations

from hermes.compression import ContextMeter, estimate_tokens, message_tokens
from hermes.model.types import ImageBlock, Message, TextBlock, ToolSpec, Usage

from .builders import assistant, result, results, session, use, user


def test_about_four_chars_per_token() -> None:
    small = estimate_tokens([user("x")])
    big = estimate_tokens([user("x" * 4001)])
    assert big - small == 1000


def test_tool_inputs_count_and_estimate_is_deterministic() -> None:
    plain = assistant("", use("toolu_1", "write_file", path="a.py"))
    heavy = assistant("", use("toolu_1", "write_file", path="a.py", content="y" * 8000))
    assert message_tokens(heavy) - message_tokens(plain) >= 2000
    transcript = session(3)
    assert estimate_tokens(transcript) == estimate_tokens(list(transcript))


def test_additive_and_counts_system_and_tools() -> None:
    transcript = session(2)
    total = estimate_tokens(transcript)
    assert total == estimate_tokens(transcript[:3]) + estimate_tokens(transcript[3:])
    tool = ToolSpec("shell", "runs a command " * 100, {"type": "object"})
    assert estimate_tokens(transcript, system=(TextBlock("s" * 400),)) == total + 104
    assert estimate_tokens(transcript, system="s" * 400) == total + 100
    assert estimate_tokens(transcript, tools=(tool,)) > total + 300


def test_images_cost_a_fixed_amount() -> None:
    small = Message("user", (ImageBlock("image/png", "A" * 100),))
    huge = Message("user", (ImageBlock("image/png", "A" * 1_000_000),))
    assert message_tokens(small) == message_tokens(huge)
    assert 1_500 < message_tokens(small) < 1_700


def test_meter_estimates_everything_before_first_reply() -> None:
    meter = ContextMeter()
    transcript = session(1)
    system = (TextBlock("system " * 50),)
    assert meter.estimate(transcript, system) == estimate_tokens(transcript, system)


def test_meter_adds_estimate_of_messages_since_the_reply() -> None:
    meter = ContextMeter()
    transcript = [user("hi"), assistant("", use("toolu_1")), results(result("toolu_1", "z" * 400))]
    meter.observe(Usage(input_tokens=1000, cache_read_input_tokens=500, output_tokens=50), 2)
    assert meter.estimate(transcript[:2]) == 1550
    assert meter.estimate(transcript) == 1550 + message_tokens(transcript[2])
    # a rewritten (shorter) transcript drops the anchor
    assert meter.estimate(transcript[:1]) == estimate_tokens(transcript[:1])
    meter.reset()
    assert meter.estimate(transcript) == estimate_tokens(transcript)
