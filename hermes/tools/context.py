"""What a tool run can see: working directory, child environment, approvals, progress.

One ``ToolContext`` is built per turn (or per subagent) by the session; the
batch executor derives a per-call copy with ``for_call`` that knows the call id
and can pause the call's deadline while a person is asked for approval.

Services that later tools need (the background-process registry, the subagent
spawner, the memory store) travel in ``services``, keyed by their type, so the
context does not grow a field per feature: ``ctx.service(ProcessService)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import attrs

from hermes.bell import Bell

from .approval import ApprovalCallback, ApprovalSession
from .base import ProgressKind, ToolProgress
from .env import scrub_env
from .guard.policy import PathPolicy
from .guard.reads import ReadLedger

T = TypeVar("T")

ProgressCallback = Callable[[ToolProgress], None]
"""Receives progress reports. Must not block: forward with ``send_nowait`` and drop on overflow."""


@attrs.frozen(slots=True, kw_only=True)
class ToolContext:
    """Everything a tool run may use besides its arguments."""

    cwd: Path
    """Working directory; relative paths in arguments resolve against it."""
    env: Mapping[str, str]
    """Environment for child processes, already scrubbed of the daemon's secrets."""
    spill_dir: Path
    """Where results too large for the transcript are saved."""
    approvals: ApprovalSession = attrs.field(factory=ApprovalSession)
    ask_approval: ApprovalCallback | None = None
    """Asks the attached surfaces; ``None`` means unattended (dangerous commands are denied)."""
    progress: ProgressCallback | None = None
    interrupt: Bell | None = None
    """Rung on a soft interrupt: running commands stop (exit 130), unstarted calls are
    skipped."""
    redirect: Bell | None = None
    """Rung when the user redirects the turn while this batch runs: a foreground
    ``terminal`` command moves to the background (``[processes] background_on_redirect``)."""
    services: Mapping[type[Any], object] = attrs.field(factory=dict)
    guard: PathPolicy = attrs.field(factory=PathPolicy.from_environment)
    """The path policy every file-touching tool applies (``guard/``)."""
    files: ReadLedger = attrs.field(factory=ReadLedger)
    """What this session has read and written: shared by every turn's context."""
    call_id: str = ""
    tool_name: str = ""
    pause_deadline: Callable[[], AbstractContextManager[None]] = nullcontext
    """Entered while waiting for a person: the call's deadline stops counting."""

    @classmethod
    def create(
        cls,
        cwd: Path | str,
        spill_dir: Path | str,
        *,
        environ: Mapping[str, str] | None = None,
        keep_env: Iterable[str] = (),
        extra_env: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> ToolContext:
        """A context whose child environment is ``environ`` (default: ours) minus secrets."""
        env = scrub_env(os.environ if environ is None else environ, keep=keep_env, extra=extra_env)
        return cls(cwd=Path(cwd), env=env, spill_dir=Path(spill_dir), **kwargs)

    def for_call(
        self,
        call_id: str,
        tool_name: str,
        pause_deadline: Callable[[], AbstractContextManager[None]] | None = None,
    ) -> ToolContext:
        return attrs.evolve(
            self,
            call_id=call_id,
            tool_name=tool_name,
            pause_deadline=pause_deadline or nullcontext,
        )

    def resolve(self, path: str) -> Path:
        """``path`` made absolute: ``~`` expanded, relative to ``cwd``; links not resolved."""
        p = Path(os.path.expanduser(path))
        return p if p.is_absolute() else self.cwd / p

    def service(self, kind: type[T]) -> T:
        """The service registered under ``kind``; ``LookupError`` naming it when absent."""
        try:
            found = self.services[kind]
        except KeyError:
            raise LookupError(f"no {kind.__name__} service in this tool context") from None
        if not isinstance(found, kind):
            raise TypeError(f"service registered as {kind.__name__} is {type(found).__name__}")
        return found

    def report(self, kind: ProgressKind, text: str = "") -> None:
        """Send a progress report for the current call (no-op without a callback)."""
        if self.progress is not None:
            self.progress(ToolProgress(self.call_id, self.tool_name, kind, text))

    @property
    def interrupted(self) -> bool:
        return self.interrupt is not None and self.interrupt.is_set()
