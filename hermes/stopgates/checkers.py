"""The built-in ``LateChecks`` filler: configured checker commands (seed #239).

``[session] late_checks`` lists shell commands (``ruff check {files}``,
``mypy {files}``); empty, the default, runs none. At a final answer of a turn
that edited code files (``write_file``/``patch``, prose left out as
verify-on-stop does), each command runs with ``{files}`` replaced by those
paths, shell-quoted, through ``/bin/sh -c`` in the session's working
directory, in its own process group, with the tools' scrubbed environment,
all at once and each within ``late_check_timeout`` seconds. Each takes a
ticket from the session's ``LateChecks`` and delivers its verdict: exit 0 is
none, another exit the last lines of its output; the stop gate then feeds the
problems back as it does any late verdict. A command that timed out or could
not start gives no verdict (it is given up on and logged).
A final answer with no edit since the last run is not checked again: the
verdict is fed back once, and a fix (a new edit) is checked anew.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import trio

from hermes.model import Message
from hermes.procgroup import run_command

from .late import LateChecks
from .verify import EDIT_TOOLS, edited_paths

log = logging.getLogger(__name__)

PROBLEM_LINES = 20
"""Lines of a failing checker's output fed back."""


def checker_name(command: str) -> str:
    """The program the command runs (``ruff``, ``mypy``), for the nudge: its first word
    past a ``!``, ``env``, ``exec`` or a ``NAME=value``."""
    for word in command.split():
        if word not in ("!", "env", "exec") and "=" not in word:
            return Path(word).name
    return "checker"


def expand(command: str, paths: Sequence[str]) -> str:
    """``command`` with ``{files}`` replaced by the quoted paths (appended when absent)."""
    files = " ".join(shlex.quote(p) for p in paths)
    return command.replace("{files}", files) if "{files}" in command else f"{command} {files}"


class Checkers:
    """One turn's checker runs: the commands and what they last checked."""

    def __init__(
        self,
        commands: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
    ) -> None:
        self.commands = tuple(commands)
        self.cwd = cwd
        self.env = env
        self.timeout = timeout
        self._edits = 0
        """Edit calls the turn had made at the last run."""

    async def run(self, messages: Sequence[Message], checks: LateChecks) -> None:
        """Run every command on the code files the turn edited, unless no edit came since
        the last run (an answer the model left as it was is not checked again)."""
        edits = sum(
            1
            for m in messages
            if m.role == "assistant"
            for use in m.tool_uses()
            if use.name in EDIT_TOOLS
        )
        paths = edited_paths(messages)
        if not self.commands or not paths or edits == self._edits:
            return
        self._edits = edits
        async with trio.open_nursery() as nursery:
            for command in self.commands:
                ticket = checks.expect(checker_name(command), ", ".join(paths))
                nursery.start_soon(self._one, expand(command, paths), ticket.deliver)

    async def _one(self, command: str, deliver: Callable[[Sequence[str]], None]) -> None:
        try:
            done = await run_command(
                ["/bin/sh", "-c", command], cwd=self.cwd, env=self.env, timeout=self.timeout
            )
        except OSError as error:
            log.warning("late check %r could not start: %s", command, error)
            deliver([])  # given up on: no verdict, and nothing left to wait for
            return
        if done.timed_out:
            log.warning("late check %r timed out after %g s", command, self.timeout)
            deliver([])
            return
        lines = [line for line in done.output.splitlines() if line.strip()]
        problems = (
            []
            if done.exit_code == 0
            else lines[-PROBLEM_LINES:]
            or [f"exited with code {done.exit_code} and printed nothing"]
        )
        deliver(problems)
