"""The chat's pure parts: Markdown block cutting, the Ctrl+C clock, command matching,
completion (prompt_toolkit's own ``Document`` and ``CompleteEvent``)."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from hermes.cli.chat_commands import COMMANDS, closest, help_text
from hermes.cli.chat_input import _completer
from hermes.cli.chat_render import BlockSplitter
from hermes.cli.chat_state import ChatState


def test_blocks_are_cut_at_blank_lines_but_never_inside_a_code_fence() -> None:
    blocks = BlockSplitter()
    assert blocks.feed("# Title\n\nSome ") == "# Title\n\n"
    assert blocks.feed("text.\n```py\nx = 1\n\ny = 2\n") == ""  # the blank line is fenced
    assert blocks.feed("```\nafter") == "Some text.\n```py\nx = 1\n\ny = 2\n```\n"
    assert blocks.flush() == "after"
    assert blocks.flush() == ""


def test_ctrl_c_interrupts_then_cancels_within_a_second_then_exits() -> None:
    state = ChatState(session="s")
    assert state.ctrl_c(now=10.0) == "interrupt"
    assert state.ctrl_c(now=10.5) == "cancel"
    assert state.ctrl_c(now=10.9) == "exit"
    later = ChatState(session="s")
    assert later.ctrl_c(now=10.0) == "interrupt"
    assert later.ctrl_c(now=11.5) == "interrupt"  # not within a second: soft again
    assert later.ctrl_c(now=20.0) == "interrupt"  # the clock forgets old presses


def test_a_press_just_after_the_turn_ended_still_belongs_to_it() -> None:
    """The interrupt can end the turn before the chat reads a quick second press: that
    press still cancels (it must not count towards leaving the chat)."""
    state = ChatState(session="s")
    state.apply("turn.started", {"turn": 1, "prompt": "p"})
    assert state.ctrl_c(now=10.0) == "interrupt"
    state.apply("turn.completed", {"turn": 1, "reason": "interrupted"})
    assert state.turn is None
    assert state.pressed_lately(now=10.3)
    assert state.ctrl_c(now=10.3) == "cancel"
    assert not state.pressed_lately(now=11.4)  # over a second later: an idle press again
    state.apply("turn.started", {"turn": 2, "prompt": "p"})
    assert not state.pressed_lately(now=10.4)  # a new turn starts its own count


def test_state_follows_a_turn_and_its_tools() -> None:
    state = ChatState(session="s", model="m")
    state.apply("turn.started", {"turn": 3, "prompt": "p"})
    state.apply("tool.started", {"call_id": "c1", "name": "terminal"})
    state.apply("tool.output", {"call_id": "c1", "name": "terminal", "text": "a\nb\n"})
    assert "turn 3: running terminal" in state.live_line()
    state.apply(
        "usage.updated",
        {
            "total": {"input_tokens": 100, "output_tokens": 7},
            "context_tokens": 1500,
            "context_percent": 0.75,
        },
    )
    assert state.status_line() == "m · context 1% (1,500 tok) · in 100 / out 7 tok"
    run = state.finish_tool("c1")
    assert run is not None and run.head == ["a", "b"]
    assert state.last_outputs == [("terminal", "a\nb\n")]
    state.apply("turn.completed", {"turn": 3, "reason": "completed"})
    assert state.turn is None and state.live_line() == ""


def test_a_mistyped_command_gets_the_closest_one() -> None:
    assert closest("/hepl") == "/help"
    assert closest("/sesions") == "/sessions"
    assert closest("/zzzzzzzz") is None
    assert all(name in help_text() for name in COMMANDS)


def _complete(text: str, sessions: list[tuple[str, str]] | None = None) -> list[str]:
    completer = _completer(lambda: sessions or [])
    found = completer.get_completions(Document(text, len(text)), CompleteEvent())
    return [c.text for c in found]


def test_completion_of_commands_session_ids_and_paths(tmp_path: Path) -> None:
    assert _complete("/he") == ["/help"]
    assert _complete("/re") == ["/resume", "/redirect", "/refine"]
    ids = [("20260101-000000-aaaa1111", "first"), ("20260102-000000-bbbb2222", "second")]
    assert _complete("/resume 20260102", ids) == ["20260102-000000-bbbb2222"]
    (tmp_path / "notes.md").write_text("x")
    assert _complete(f"read @{tmp_path}/no") == ["tes.md"]
    assert _complete("plain words") == []


def test_only_a_near_typo_gets_a_hint_anything_else_is_the_sessions() -> None:
    assert closest("/usag") == "/usage"
    assert closest("/commit-message") is None  # a skill's name: sent to the session
    assert closest("/write-a-skill") is None
    assert "/learn" in COMMANDS and "/NAME" in help_text()
