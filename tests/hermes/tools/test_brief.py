"""A tool call's arguments in one short line (``tool.started``'s ``arguments``)."""

from __future__ import annotations

from hermes.tools.brief import BRIEF_CHARS, brief_arguments


def test_a_lone_string_argument_is_shown_bare_on_one_line() -> None:
    assert brief_arguments({"command": "ls -la\n  | head"}) == "ls -la | head"


def test_several_arguments_are_key_value_pairs_in_order() -> None:
    args = {"path": "a.py", "offset": 10, "all": True, "edits": [1, 2], "opts": {"x": 1}}
    assert brief_arguments(args) == 'path="a.py" offset=10 all=True edits=[2] opts={…}'


def test_long_values_and_lines_are_cut_with_an_ellipsis() -> None:
    line = brief_arguments({"path": "p", "content": "x" * 500})
    assert 'content="' + "x" * 59 + '…"' in line
    long = brief_arguments({"command": "y" * 500})
    assert len(long) == BRIEF_CHARS and long.endswith("…")
