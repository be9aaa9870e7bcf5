"""The rules of a card's fields and statuses, with precise errors.

Statuses: ``triage`` (a rough idea: specify or decompose it first), ``todo``
(ready for a worker once its dependencies are done), ``running`` (a worker
session has it), ``review`` (the worker handed it to a person), ``blocked``
(waiting for a person: ``block_reason`` says why) and ``done``. ``running`` is
entered only by the dispatcher; a person moves a card along ``MOVES``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import attrs

from hermes.store.kanban_queries import CARD_STATUSES, Card

TITLE_LIMIT = 200
BODY_LIMIT = 100_000
REASON_LIMIT = 4000
FIELDS = ("title", "body", "status", "parent", "depends", "goal")
"""What a person may set when adding a card (``edit`` takes title, body, goal, depends)."""
EDITABLE = ("title", "body", "goal", "depends")

MOVES: Mapping[str, tuple[str, ...]] = {
    "triage": ("todo", "blocked", "done"),
    "todo": ("triage", "blocked", "done"),
    "running": ("blocked",),
    "review": ("done", "todo", "blocked"),
    "blocked": ("todo", "triage", "done"),
    "done": ("todo",),
}
"""Where a person may move a card from each status (``running`` only by ``run`` or the
dispatcher; moving a running card to ``blocked`` stops its worker)."""


class CardError(ValueError):
    """A field or a move that cannot be used; the message names it."""


class CardNotFound(LookupError):
    pass


def new_id() -> str:
    return "card-" + secrets.token_hex(4)


def text(name: str, value: object, limit: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise CardError(f"{name} must be a non-empty string, got {value!r:.100}")
    if len(value) > limit:
        raise CardError(f"{name} is {len(value)} characters, more than {limit}")
    return value


def _depends(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) and d for d in value):
        raise CardError(f"depends must be a list of card ids, got {value!r:.100}")
    return tuple(dict.fromkeys(value))


def check_fields(fields: object, allowed: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``fields`` (each checked); an unknown one is named."""
    if not isinstance(fields, Mapping):
        raise CardError(f"fields must be a mapping, got {type(fields).__name__}")
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise CardError(f"unknown card field {unknown[0]!r} (fields: {', '.join(allowed)})")
    out: dict[str, Any] = {}
    if "title" in fields:
        out["title"] = text("title", fields["title"], TITLE_LIMIT).strip()
    if "body" in fields:
        out["body"] = text("body", fields["body"], BODY_LIMIT, empty=True)
    if "goal" in fields:
        if not isinstance(fields["goal"], bool):
            raise CardError(f"goal must be true or false, got {fields['goal']!r:.100}")
        out["goal"] = fields["goal"]
    if "depends" in fields:
        out["depends"] = _depends(fields["depends"])
    if "parent" in fields and fields["parent"] is not None:
        out["parent"] = text("parent", fields["parent"], 100)
    if "status" in fields:
        status = fields["status"]
        if status not in ("triage", "todo"):
            raise CardError(f"a new card's status is triage or todo, got {status!r:.100}")
        out["status"] = status
    return out


def new_card(fields: object, *, now: float, author: str = "user") -> Card:
    """A new card from ``fields`` (``title`` required; status ``todo`` unless given)."""
    checked = check_fields(fields, FIELDS)
    if "title" not in checked:
        raise CardError("a card needs a title")
    return Card(
        id=new_id(),
        title=checked["title"],
        body=checked.get("body", ""),
        status=checked.get("status", "todo"),
        parent=checked.get("parent"),
        depends=checked.get("depends", ()),
        goal=checked.get("goal", False),
        author=author,
        created_at=now,
        updated_at=now,
    )


def check_move(card: Card, status: object) -> str:
    """``status`` if a person may move ``card`` there, else a ``CardError`` saying why."""
    if status not in CARD_STATUSES:
        raise CardError(f"unknown status {status!r:.100} (statuses: {', '.join(CARD_STATUSES)})")
    assert isinstance(status, str)
    if status == card.status:
        raise CardError(f"card {card.id} is already {status}")
    if status == "running":
        raise CardError(
            f"a card becomes running only when a worker takes it (kanban run {card.id})"
        )
    allowed = MOVES[card.status]
    if status not in allowed:
        raise CardError(
            f"card {card.id} cannot move from {card.status} to {status} "
            f"(from {card.status}: {', '.join(allowed)})"
        )
    return status


def moved(card: Card, status: str, *, now: float, reason: str | None = None) -> Card:
    """``card`` in ``status``; a block keeps its reason, any other status clears it."""
    finished = now if status in ("done", "review", "blocked") else card.finished_at
    return attrs.evolve(
        card,
        status=status,
        block_reason=reason if status == "blocked" else None,
        updated_at=now,
        finished_at=finished,
    )


__all__ = [
    "EDITABLE",
    "FIELDS",
    "MOVES",
    "Card",
    "CardError",
    "CardNotFound",
    "check_fields",
    "check_move",
    "moved",
    "new_card",
]
