"""``checkpoint.*`` methods: a working directory's checkpoints, listed, diffed and restored.

The same shadow repositories the sessions' tools write (``<data_dir>/checkpoints``,
``hermes.tools.checkpoint``) and ``hermes checkpoints`` reads. ``dir`` is an
absolute directory on the daemon's machine (a session's working directory);
with ``session``, a restore is refused while that session's turn runs (it
would race the turn's own writes). Git runs in a worker thread, bounded.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from hermes.daemon.errors import RequestError
from hermes.daemon.settings import Settings
from hermes.daemon.workdir import PATH_LIMIT
from hermes.tools.checkpoint import Checkpoint, CheckpointError, ShadowRepo

from .params import Method, Params

MAX_DIFF_CHARS = 200_000
TIMEOUT = 120.0


def checkpoint_methods(
    settings: Settings, lookup: Callable[[Params], Awaitable[Any]]
) -> dict[str, Method]:
    """The method table entries; ``lookup`` finds a session's entry from ``session``."""

    def repo(p: Params) -> ShadowRepo:
        given = p.text("dir", limit=PATH_LIMIT)
        if not os.path.isabs(given):
            raise RequestError(
                f"dir must be an absolute path, got {given[:200]!r}", "invalid_params"
            )
        if not os.path.isdir(given):
            raise RequestError(f"dir {given[:200]!r} is not a directory", "invalid_params")
        root = settings.config.data_dir(settings.paths) / "checkpoints"
        return ShadowRepo.for_dir(root, Path(given))

    async def run(fn: Callable[[], Any]) -> Any:
        with trio.fail_after(TIMEOUT):
            try:
                return await trio.to_thread.run_sync(fn)
            except CheckpointError as exc:
                raise RequestError(str(exc), "checkpoint_error") from exc

    async def listed(p: Params) -> Any:
        shadow = repo(p)
        p.done()
        found: list[Checkpoint] = await run(shadow.list)
        return [_plain(n, c) for n, c in enumerate(found, 1)]

    async def diff(p: Params) -> Any:
        shadow = repo(p)
        number = p.opt_int("number", 1, 1, 10_000) or 1
        p.done()
        text: str = await run(lambda: shadow.diff(number))
        cut = len(text) > MAX_DIFF_CHARS
        return {"diff": text[:MAX_DIFF_CHARS], "truncated": cut, "chars": len(text)}

    async def restore(p: Params) -> Any:
        shadow = repo(p)
        number = p.opt_int("number", 1, 1, 10_000) or 1
        entry = await lookup(p) if p.opt_str("session") is not None else None
        p.done()
        if entry is not None and (await entry.handle.state()).busy:
            raise RequestError(
                f"session {entry.session_id}'s turn is running; stop it before restoring", "busy"
            )
        target, before = await run(lambda: shadow.restore(number))
        return {
            "restored": _plain(number, target),
            "saved": _plain(1, before) if before is not None else None,
        }

    return {"checkpoint.list": listed, "checkpoint.diff": diff, "checkpoint.restore": restore}


def _plain(number: int, checkpoint: Checkpoint) -> dict[str, Any]:
    return {
        "number": number,
        "commit": checkpoint.commit,
        "when": checkpoint.when,
        "reason": checkpoint.reason,
    }
