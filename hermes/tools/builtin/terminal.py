"""``terminal``: run a shell command in the foreground, in its own process group.

Hermes' defaults: 180 s by default, at most 600 s in the foreground (a
``timeout`` over that starts the command in the background instead, with a
completion notice and a note saying so), a timeout is exit code 124 with
``[Command timed out after Ns]``, an interrupt is exit code 130 with
``[Command interrupted]``. Every command passes the approval gate first; a
refused command never starts and the model is told so plainly. A foreground
command that would detach (``nohup``, a trailing ``&``, a dev server:
``detach.py``) is started in the background too, with a note
(``promote.py``).

The command runs as ``bash -c COMMAND`` with stdin from ``/dev/null``, stdout
and stderr merged, the context's scrubbed environment, in its own process
group. When the command ends, anything it left running in the background of
its group is killed; cancellation kills the whole group (SIGTERM, 1 s grace,
SIGKILL) and reaps it. With a ``GroupLedger`` in the context (every session
has one) the group is recorded before the command runs, so a daemon that
restarts after ``kill -9`` finds it (``docs/processes.md``); a command whose
group cannot be recorded is not run.

Background modes go through the session's ``ProcessService``
(``background.py``, on ``hermes.processes``): ``background=true`` starts the command
under a watcher and returns its process id at once; ``on_timeout="background"``
runs a foreground command that, instead of being killed at its timeout, is
left running in the background (the model is told its process id and notified
when it ends). Without a process service in the context both answer with a
clear error and run nothing.

A redirect (``ctx.redirect`` set while a foreground command runs) moves the
command to the background instead of waiting for it, as Hermes does, when
``[processes] background_on_redirect`` is on (the default): it keeps running,
and the answer is its output so far and its process id. A plain command is
handed over (``hermes/processes/yielded.py``); an ``on_timeout="background"``
one, under a watcher from its start, is no longer waited for. A soft
interrupt still kills either. A promoted command is a background one already.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from hermes.procgroup import (
    CommandResult,
    GroupLedger,
    GroupNotRecorded,
    OutputCapture,
    run_command,
)
from hermes.text import strip_ansi

from ..approval import Verdict, decide
from ..base import Tool, ToolKind, ToolOutcome
from ..checkpoint.service import checkpoint_before_command
from ..context import ToolContext
from ..detach import Detach, detaches
from ..guard.commands import Hit, command_hits, floor, guarded_refusal, hit_finding
from ..guard.policy import Action, PathPolicy
from ..sudo import SUDO_REFUSAL, SudoPassword, runs_sudo_stdin
from .promote import promotion

FOREGROUND_DEFAULT_TIMEOUT = 180
FOREGROUND_MAX_TIMEOUT = 600
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130


class TerminalTool(Tool):
    """Foreground shell commands (see the module docstring)."""

    name = "terminal"
    kind = ToolKind.OTHER
    toolset = "terminal"

    def __init__(
        self,
        *,
        default_timeout: int = FOREGROUND_DEFAULT_TIMEOUT,
        max_timeout: int = FOREGROUND_MAX_TIMEOUT,
        output_limit: int = 200_000,
        grace: float = 1.0,
        progress_interval: float = 0.5,
    ) -> None:
        self.default_timeout = default_timeout
        self.max_timeout = max_timeout
        self.output_limit = output_limit
        self.grace = grace
        self.progress_interval = progress_interval
        self.description = (
            "Run a shell command with bash in the working directory and return its combined "
            "stdout/stderr and exit code. Non-interactive: stdin is empty, so never run "
            "commands that wait for input (use flags such as -y). Commands left running in the "
            f"background when the command exits are stopped. Default timeout "
            f"{default_timeout} s, at most {max_timeout} s in the foreground (a longer timeout "
            "runs the command in the background); a timeout gives exit code 124. "
            "Destructive commands need the user's approval and some are always refused. "
            "Prefer read_file, write_file, patch and search_files for files. "
            "For servers, watchers and long builds use background=true (returns a process id "
            "at once; manage it with the process tool), or on_timeout='background' to keep a "
            "command running past its timeout instead of stopping it."
        )
        self.input_schema: Mapping[str, Any] = {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The command line, run with bash -c.",
                },
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "default": default_timeout,
                    "description": f"Seconds before the command is stopped (over {max_timeout}: "
                    "it runs in the background instead).",
                },
                "workdir": {
                    "type": "string",
                    "description": "Directory to run in (default: the working directory).",
                },
                "background": {
                    "type": "boolean",
                    "default": False,
                    "description": "Run in the background and return a process id at once.",
                },
                "watch_patterns": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "description": "Background only: notify me of output lines containing any "
                    "of these strings (rate limited).",
                },
                "notify_on_complete": {
                    "type": "boolean",
                    "default": False,
                    "description": "Background only: notify me when the process finishes.",
                },
                "on_timeout": {
                    "type": "string",
                    "enum": ["kill", "background"],
                    "default": "kill",
                    "description": "Foreground only: at the timeout, stop the command (kill) "
                    "or leave it running in the background and notify me when it ends.",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        # The command's own timeout plus room to kill and reap it before the batch gives up.
        if args.get("background"):
            return 30.0  # answers once started (a start waits for its checkpoint write)
        timeout = min(int(args.get("timeout", self.default_timeout)), self.max_timeout)
        moved = 20.0 if args.get("on_timeout") == "background" else 0.0  # start + collect output
        return timeout + self.grace + 10.0 + moved

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        command: str = args["command"]
        timeout = int(args.get("timeout", self.default_timeout))
        background = bool(args.get("background", False))
        workdir = ctx.resolve(args["workdir"]) if args.get("workdir") else ctx.cwd
        inspected = await trio.to_thread.run_sync(
            _inspect, command, workdir, ctx.guard, not background
        )
        if inspected is None:
            return ToolOutcome.error(
                f"workdir {workdir} is not a directory. Nothing was run.", reason="bad_workdir"
            )
        sudo_stdin, hits, detach = inspected
        if sudo_stdin and SudoPassword not in ctx.services:
            return ToolOutcome.error(SUDO_REFUSAL, ran=False, verdict="sudo_stdin")
        decision = await decide(
            command,
            session=ctx.approvals,
            ask=ctx.ask_approval,
            call_id=ctx.call_id,
            pause=ctx.pause_deadline,
            extra=tuple(hit_finding(h) for h in hits),
        )
        if not decision.allowed:
            refused = [h for h in hits if h.ruling.action is Action.REFUSE]
            if refused and decision.verdict is Verdict.HARDLINE and not floor(decision):
                return ToolOutcome.error(
                    guarded_refusal(refused),
                    ran=False,
                    verdict="guarded",
                    guard=refused[0].ruling.key,
                )
            return ToolOutcome.error(decision.refusal(), ran=False, verdict=decision.verdict.value)
        await checkpoint_before_command(ctx, workdir, command)
        promoted = None if background else promotion(command, detach, timeout, self.max_timeout)
        if promoted is not None:
            from . import background as bg  # loads hermes.processes (and the store): late

            outcome = await bg.start_background(
                promoted.command, workdir, promoted.args(args), ctx, decision.verdict.value
            )
            return promoted.noted(outcome)
        if background or args.get("on_timeout") == "background":
            from . import background as bg  # loads hermes.processes (and the store): late

            verdict = decision.verdict.value
            if background:
                return await bg.start_background(command, workdir, args, ctx, verdict)
            return await bg.run_movable(
                command, workdir, timeout, ctx, verdict, self.progress_interval
            )
        bash = shutil.which("bash", path=ctx.env.get("PATH")) or shutil.which("bash") or "bash"
        last_report = -float("inf")

        def on_output(capture: OutputCapture) -> None:
            nonlocal last_report
            now = trio.current_time()
            if now - last_report >= self.progress_interval:
                last_report = now
                ctx.report("output", strip_ansi(capture.recent(1000)))

        move = None
        if ctx.redirect is not None:
            from . import background as bg  # loads hermes.processes (and the store): late

            move = bg.redirect_move(command, workdir, ctx)
        ledger = ctx.services.get(GroupLedger)
        slot = (
            ledger.slot(ctx.call_id, command, str(workdir))
            if isinstance(ledger, GroupLedger)
            else None
        )
        try:
            result = await run_command(
                [bash, "-c", command],
                cwd=workdir,
                env=ctx.env,
                timeout=timeout,
                interrupt=ctx.interrupt,
                capture=OutputCapture(self.output_limit),
                on_output=on_output,
                grace=self.grace,
                slot=slot,
                yield_to=ctx.redirect if move is not None else None,
                hand_over=move,
            )
        except OSError as exc:
            return ToolOutcome.error(
                f"Could not start the command ({type(exc).__name__}: {exc}). Nothing was run.",
                ran=False,
            )
        except GroupNotRecorded as exc:
            return ToolOutcome.error(f"{exc}. Nothing was run.", ran=False)
        verdict = decision.verdict.value
        if move is not None and result.handed_over:
            return move.moved(result.output, verdict, result.duration)
        note = move.refusal() if move is not None and move.error is not None else None
        return _format(result, timeout, verdict, note)


def _inspect(
    command: str, workdir: Path, guard: PathPolicy, foreground: bool
) -> tuple[bool, list[Hit], Detach | None] | None:
    """What the line does beyond the gate's reading: ``sudo -S``, the path guard's hits, and
    (in the foreground) whether it would detach; None if ``workdir`` is not a directory.
    One worker-thread hop for both (each hop was ~3 % of a busy daemon's loop)."""
    if not workdir.is_dir():
        return None
    detach = detaches(command) if foreground else None
    return runs_sudo_stdin(command), command_hits(command, workdir, guard), detach


def _format(
    result: CommandResult, timeout: int, verdict: str, refused: str | None = None
) -> ToolOutcome:
    output = strip_ansi(result.output).rstrip("\n")
    notes: list[str] = [refused] if refused else []
    if result.timed_out:
        exit_code = EXIT_TIMEOUT
        notes.append(f"[Command timed out after {timeout}s]")
    elif result.interrupted:
        exit_code = EXIT_INTERRUPTED
        notes.append("[Command interrupted]")
    else:
        exit_code = result.exit_code if result.exit_code is not None else -1
        if result.kill is not None:
            notes.append(
                "[Processes the command left running in the background were stopped; use "
                "background mode for long-lived processes.]"
            )
    if result.kill is not None and result.kill.survivors:
        notes.append(f"[Warning: processes {list(result.kill.survivors)} could not be killed]")
    notes.append(f"[exit code: {exit_code}]")
    text = (output or "(no output)") + "\n" + "\n".join(notes)
    return ToolOutcome(
        text,
        exit_code != 0,
        {
            "exit_code": exit_code,
            "timed_out": result.timed_out,
            "interrupted": result.interrupted,
            "duration": result.duration,
            "output_bytes": result.output_bytes,
            "approval": verdict,
        },
    )
