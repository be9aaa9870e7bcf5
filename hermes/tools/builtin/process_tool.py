"""The ``process`` tool: list, poll, log, wait, kill, write, submit and close background processes.

It works on the processes of its session, through the ``ProcessService`` in
the tool context; without one it answers with a clear error and does nothing.
A subagent's copy (``for_subagent()``) has one more action, ``handoff``: the
process is given to the parent session and survives the subagent's end.
Output shown to the model has terminal escape sequences removed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from hermes.processes.config import ProcessConfig
from hermes.processes.errors import ProcessError
from hermes.processes.service import ProcessService
from hermes.processes.state import ProcessInfo, ProcessStatus, WaitOutcome
from hermes.text import strip_ansi

from ..base import Tool, ToolKind, ToolOutcome
from ..context import ToolContext

REDIRECTED_WAIT = (
    "[Wait ended: the user redirected the turn; the process keeps running in the background]"
)
"""The head of a ``wait`` a redirect ended (``[processes] background_on_redirect``)."""
ACTIONS = ("list", "poll", "log", "wait", "kill", "write", "submit", "close")
SUBAGENT_ACTIONS = (*ACTIONS, "handoff")
LOG_LIMIT_MAX = 50_000
"""Characters one log page may ask for (a page must fit a tool result)."""

NO_SERVICE = (
    "Background processes are not available in this session (it has no process service). "
    "Nothing was done."
)


def describe(info: ProcessInfo) -> str:
    """One line: id, status, runtime, pid, command."""
    if info.status is ProcessStatus.RUNNING:
        status = "running" + (" (adopted)" if info.adopted else "")
    elif info.status is ProcessStatus.EXITED:
        status = f"exited {info.exit_code}" if info.exit_code is not None else "exited"
    else:
        status = info.status.value
    return f"{info.id}  {status}  {info.runtime:.0f}s  pid {info.pid}  {info.command}"


def _details(info: ProcessInfo) -> str:
    lines = [describe(info)]
    if info.watching:
        lines.append(f"watching for: {', '.join(info.watch_patterns)}")
    if info.notify_on_complete and not info.finished:
        lines.append("will notify when it finishes")
    if info.note:
        lines.append(f"note: {info.note}")
    return "\n".join(lines)


class ProcessTool(Tool):
    """Manage the session's background processes (see the module docstring)."""

    name = "process"
    kind = ToolKind.OTHER
    toolset = "terminal"

    def __init__(self, config: ProcessConfig | None = None, *, handoff: bool = False) -> None:
        self.config = config or ProcessConfig()
        self.handoff = handoff
        self.actions = SUBAGENT_ACTIONS if handoff else ACTIONS
        wait_max = int(self.config.wait_max)
        self.description = (
            "Manage background processes started with terminal(background=true). Actions: "
            "list (every process of this session); poll (status, exit code, last 1,000 "
            "characters of output); log (output page by character offset: offset, limit); "
            f"wait (until it finishes, at most timeout seconds, max {wait_max}); kill (SIGTERM "
            "to its process group, SIGKILL after 1 s); write (send text to its stdin); submit "
            "(text plus a newline); close (close its stdin)."
        )
        if handoff:
            self.description += (
                " handoff: give a running process to the session that started you, so it "
                "keeps running after you finish (a dev server it asked for, say); every "
                "process you do not hand over is killed when you finish."
            )
        self.input_schema: Mapping[str, Any] = {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": list(self.actions)},
                "process_id": {
                    "type": "string",
                    "description": "The id terminal returned (proc_...); all but list need it.",
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "log: first character (absolute); default: the last page.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": LOG_LIMIT_MAX,
                    "default": self.config.log_limit,
                    "description": "log: characters to return.",
                },
                "timeout": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": wait_max,
                    "default": wait_max,
                    "description": "wait: seconds to wait at most.",
                },
                "data": {"type": "string", "description": "write/submit: the text to send."},
            },
            "required": ["action"],
            "additionalProperties": False,
        }

    def for_subagent(self) -> ProcessTool:
        """This tool with the ``handoff`` action (a subagent's sessions get this one)."""
        return ProcessTool(self.config, handoff=True)

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        if args.get("action") == "wait":
            return float(args.get("timeout", self.config.wait_max)) + 15.0
        c = self.config
        return c.kill_grace + 2 * c.kill_wait + c.drain_timeout + c.store_timeout + 15.0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        try:
            service = ctx.service(ProcessService)
        except LookupError:
            return ToolOutcome.error(NO_SERVICE, reason="no_process_service")
        action: str = args["action"]
        process_id = args.get("process_id")
        if action != "list" and not process_id:
            return ToolOutcome.error(f"action {action!r} needs a process_id. Nothing was done.")
        try:
            if action == "list":
                return await self._list(service)
            assert isinstance(process_id, str)
            return await self._act(action, process_id, args, service, ctx)
        except ProcessError as exc:
            return ToolOutcome.error(str(exc), action=action)

    async def _list(self, service: ProcessService) -> ToolOutcome:
        infos = await service.list()
        if not infos:
            return ToolOutcome.ok("No background processes in this session.", count=0)
        running = sum(1 for i in infos if not i.finished)
        text = "\n".join(describe(i) for i in infos)
        return ToolOutcome.ok(f"{text}\n[{running} running, {len(infos)} total]", count=len(infos))

    async def _act(
        self,
        action: str,
        process_id: str,
        args: Mapping[str, Any],
        service: ProcessService,
        ctx: ToolContext,
    ) -> ToolOutcome:
        if action == "poll":
            polled = await service.poll(process_id)
            return _with_output(polled.info, polled.tail, "Recent output")
        if action == "log":
            result = await service.log(process_id, args.get("offset"), args.get("limit"))
            page = result.page
            notes = [f"[characters {page.offset:,}-{page.next_offset:,} of {page.end:,}"]
            if page.skipped:
                notes.append(f"; {page.skipped:,} before these were dropped from the buffer")
            if page.more:
                notes.append(f"; continue with offset={page.next_offset}")
            notes.append("]")
            body = strip_ansi(page.text) or "(no output in this range)"
            return ToolOutcome.ok(
                f"{_details(result.info)}\n{body}\n{''.join(notes)}",
                offset=page.offset,
                next_offset=page.next_offset,
            )
        if action == "wait":
            timeout = float(args.get("timeout", self.config.wait_max))
            # A redirect ends the wait as it moves a foreground command (seeds #8, #13, #220).
            redirect = ctx.redirect if service.config.background_on_redirect else None
            waited = await service.wait(
                process_id, timeout, interrupt=ctx.interrupt, redirect=redirect
            )
            head = {
                WaitOutcome.FINISHED: "Finished.",
                WaitOutcome.TIMEOUT: f"Still running after waiting {timeout:g}s.",
                WaitOutcome.INTERRUPTED: "[Wait interrupted]",
                WaitOutcome.REDIRECTED: REDIRECTED_WAIT,
            }[waited.outcome]
            outcome = _with_output(waited.info, waited.tail, "Recent output", head)
            return ToolOutcome(outcome.content, outcome.is_error, {"outcome": waited.outcome.value})
        if action == "kill":
            started = time.monotonic()
            info = await service.kill(process_id)
            took = time.monotonic() - started
            return ToolOutcome.ok(
                f"{_details(info)}\n[kill took {took:.1f}s]",
                status=info.status.value,
                exit_code=info.exit_code,
            )
        if action in ("write", "submit"):
            data = args.get("data")
            if data is None:
                return ToolOutcome.error(f"action {action!r} needs data. Nothing was sent.")
            send = service.submit if action == "submit" else service.write
            written = await send(process_id, data)
            return ToolOutcome.ok(f"Sent {written} bytes to the stdin of {process_id}.")
        if action == "close":
            info = await service.close_stdin(process_id)
            return ToolOutcome.ok(f"Closed the stdin of {process_id}.\n{_details(info)}")
        if action == "handoff" and self.handoff:
            info = await service.handoff(process_id)
            target = service.handoff_target
            to = target.session_id if target is not None else info.session_id
            return ToolOutcome.ok(
                f"Handed {process_id} over to the session that started you ({to}): it keeps "
                "running after you finish, and you can no longer reach it.\n"
                f"{_details(info)}",
                handed_over=process_id,
                to_session=to,
            )
        return ToolOutcome.error(
            f"Unknown action {action!r}; use one of {', '.join(self.actions)}."
        )


def _with_output(info: ProcessInfo, tail: str, label: str, head: str = "") -> ToolOutcome:
    body = strip_ansi(tail).rstrip("\n") or "(no output yet)"
    lead = f"{head}\n" if head else ""
    return ToolOutcome.ok(
        f"{lead}{_details(info)}\n{label}:\n{body}",
        status=info.status.value,
        exit_code=info.exit_code,
    )
