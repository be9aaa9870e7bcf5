"""Snapshots of actors and their subtrees as plain data (JSON-ready)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ._exits import ExitReason

if TYPE_CHECKING:
    from ._cell import ActorCell


def recent_exits(entries: Iterable[tuple[str, ExitReason, float]], now: float) -> list[Any]:
    """(path, reason, when) entries as plain data with their age."""
    return [{"path": p, "reason": r.to_plain(), "age": now - t} for p, r, t in entries]


def snapshot(cell: ActorCell, now: float) -> dict[str, Any]:
    """One actor and its subtree: state, mailbox, heartbeat, children, recent exits."""
    state = "unkillable" if cell.unkillable and cell.exit_reason is None else cell.state.value
    out: dict[str, Any] = {
        "path": cell.path,
        "id": cell.id,
        "class": cell.actor_class,
        "state": state,
        "mailbox": attrs.asdict(cell.mailbox.stats()),
        "restarts": cell.restarts,
        "heartbeat_age": now - cell.last_beat,
        "uptime": now - cell.started_at,
        "trap_exits": cell.trap_exits,
        "children": [snapshot(c, now) for c in (cell.children or {}).values()],
        "recent_exits": recent_exits(cell.recent_exits or (), now),
    }
    if cell.registered_name is not None:
        out["name"] = cell.registered_name
    if cell.last_activity is not None:
        out["last_activity"] = cell.last_activity
    if cell.exit_reason is not None:
        out["exit_reason"] = cell.exit_reason.to_plain()
    return out


def trio_task_count() -> int:
    """Tasks alive in the calling trio run, the root task included (for leak checks)."""
    root = trio.lowlevel.current_root_task()
    if root is None:
        raise RuntimeError("trio_task_count must be called inside a trio run")
    count = 0
    stack = [root]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count
