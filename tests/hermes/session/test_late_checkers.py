"""The built-in late-check filler (seed #239): ``[session] late_checks`` commands run at a
final answer on the code the turn edited, through a real session and real processes."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.stopgates import StopSettings
from hermes.stopgates.checkers import checker_name, expand

from .conftest import SessionFactory
from .helpers import payloads
from .test_stop_gates import _drain, last_user_texts

TODO_CHECK = "! grep -Hn TODO {files}"
"""A checker: fails, naming each line, while an edited file holds a TODO."""


async def test_a_failing_checker_sends_the_answer_back_once_and_a_fix_is_checked_again(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(stops=StopSettings(late_checks=(TODO_CHECK, "true {files}")))
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "app.py", "content": "x = 1  # TODO fix\n"})),
        Reply.of(ToolUse("write_file", {"path": "NOTES.md", "content": "TODO prose\n"})),
        Reply.of("Done."),
        Reply.of(ToolUse("write_file", {"path": "app.py", "content": "x = 1\n"})),
        Reply.of("Fixed: no TODO left."),
    )
    with session.subscribe() as sub, trio.fail_after(30):
        result = await session.run("write app.py")
        events = [e async for e in _drain(sub)]
    assert result.text == "Fixed: no TODO left."  # the fix was checked and passed
    nudge = last_user_texts(fake)[3]
    assert "- grep on app.py: app.py:1:x = 1  # TODO fix" in nudge
    assert "NOTES.md" not in nudge  # prose is not checked
    assert [n.gate for n in payloads(events, "StopNudged")] == ["late_checks"]


async def test_an_answer_with_no_new_edit_is_not_checked_again(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(stops=StopSettings(late_checks=(TODO_CHECK,)))
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "app.py", "content": "# TODO later\n"})),
        Reply.of("Done."),
        Reply.of("The TODO stays on purpose."),
    )
    with session.subscribe() as sub, trio.fail_after(30):
        result = await session.run("write app.py")
        events = [e async for e in _drain(sub)]
    assert result.text == "The TODO stays on purpose."
    assert len(payloads(events, "StopNudged")) == 1  # fed back once


async def test_a_checker_past_its_deadline_is_killed_and_gives_no_verdict(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    stops = StopSettings(late_checks=("sleep 30; false",), late_check_timeout=0.3)
    session = await open_session(stops=stops)
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "app.py", "content": "x = 1\n"})),
        Reply.of("Done."),
    )
    started = trio.current_time()
    with trio.fail_after(30):
        assert (await session.run("write app.py")).text == "Done."
    assert trio.current_time() - started < 10  # the deadline, not the 30 s sleep
    assert len(fake.message_requests) == 2


async def test_no_checker_runs_unless_configured(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session()
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "app.py", "content": "# TODO\n"})),
        Reply.of("Done."),
    )
    with trio.fail_after(30):
        assert (await session.run("write app.py")).text == "Done."
    assert len(fake.message_requests) == 2


def test_files_are_quoted_into_the_command_or_appended() -> None:
    assert expand("ruff check {files}", ["a b.py", "c.py"]) == "ruff check 'a b.py' c.py"
    assert expand("mypy", ["x;rm -rf y.py"]) == "mypy 'x;rm -rf y.py'"


def test_the_checker_is_named_by_the_program_it_runs() -> None:
    assert checker_name("! grep -Hn TODO {files}") == "grep"
    assert checker_name("env PYTHONPATH=src /usr/bin/mypy {files}") == "mypy"


def test_the_session_config_keys_reach_the_stop_settings(tmp_path: Path) -> None:
    from hermes.daemon.config import ConfigError, load_config
    from hermes.daemon.session_settings import stop_settings

    path = tmp_path / "config.toml"
    path.write_text('[session]\nlate_checks = ["ruff check {files}"]\nlate_check_timeout = 9\n')
    stops = stop_settings(load_config(path, {}))
    assert stops.late_checks == ("ruff check {files}",) and stops.late_check_timeout == 9
    assert stop_settings(load_config(None, {})).late_checks == ()  # off unless configured
    path.write_text('[session]\nlate_checks = "ruff check"\n')
    with pytest.raises(ConfigError, match=r"late_checks: expected a list of shell commands"):
        load_config(path, {})
