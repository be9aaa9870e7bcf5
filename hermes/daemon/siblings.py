"""``siblings``: a daemon child's look-up of the actors started beside it."""

from __future__ import annotations

from actors import ActorContext, ActorRef


def siblings(ctx: ActorContext, who: str, *names: str) -> tuple[ActorRef, ...]:
    """The daemon root's children ``names`` (``"store"``, ``"sessions"``...), in order.

    ``who`` names the caller in the error raised when any of them is not running:
    ``RuntimeError: store, sessions must start before cron (missing: sessions)``.
    """
    parent = ctx.parent
    if parent is None:
        raise RuntimeError(f"{who} has no parent to find {', '.join(names)} beside")
    root = parent.path.rsplit("/", 1)[0]
    found = [ctx.system.lookup(f"{root}/{name}") for name in names]
    missing = [name for name, ref in zip(names, found, strict=True) if ref is None]
    if missing:
        raise RuntimeError(
            f"{', '.join(names)} must start before {who} (missing: {', '.join(missing)})"
        )
    return tuple(ref for ref in found if ref is not None)
