"""The ``kanban_cards`` table: the board's cards (issue 27, kanban; migration 14).

A card is one row (``Card``); the board (``hermes/kanban``) owns the rules of
its fields and statuses and writes whole rows with ``SaveCard``. The store
checks only what the table needs (ids, a known status, texts, numbers).
Registered with ``operation``; callers send these with ``StoreClient.request``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite

CARD_STATUSES = ("triage", "todo", "running", "review", "blocked", "done")
MAX_CARDS = 10_000


@attrs.frozen(slots=True, kw_only=True)
class Card:
    """One card as stored (times are wall-clock seconds since the epoch)."""

    id: str
    title: str
    body: str = ""
    """The card's spec: what the worker is asked to do."""
    status: str = "todo"
    parent: str | None = None
    """The card this one was decomposed from."""
    depends: tuple[str, ...] = ()
    """Cards that must be done before this one is dispatched."""
    assignee: str | None = None
    """The worker session that runs (or last ran) the card."""
    goal: bool = False
    """Goal mode: a judge decides after each round whether the worker goes on (seed #224)."""
    block_reason: str | None = None
    result: str | None = None
    """What the worker said when it completed the card or handed it to review."""
    author: str = "user"
    """Who made the card: ``user``, ``auto-decomposer``, ``decomposer``."""
    created_at: float = 0.0
    updated_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    runs: int = 0


@attrs.frozen(slots=True)
class SaveCard(SideWrite[Card]):
    """Insert or replace a card's row; answers the row stored."""

    op: ClassVar[str] = "save_kanban_card"

    card: Card
    create: bool = False
    """Refuse an id that exists (a new card) instead of replacing it."""


@attrs.frozen(slots=True)
class DeleteCard(SideWrite[bool]):
    """Remove a card; answers whether it existed."""

    op: ClassVar[str] = "delete_kanban_card"

    card_id: str


@attrs.frozen(slots=True)
class ListCards(Read[list[Card]]):
    """Every card, oldest first."""

    op: ClassVar[str] = "list_kanban_cards"


_COLUMNS = (
    "id, title, body, status, parent, depends, assignee, goal, block_reason, result, author, "
    "created_at, updated_at, started_at, finished_at, runs"
)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _card(row: Sequence[Any]) -> Card:
    return Card(
        id=row[0], title=row[1], body=row[2], status=row[3], parent=row[4],
        depends=tuple(json.loads(row[5])), assignee=row[6], goal=bool(row[7]),
        block_reason=row[8], result=row[9], author=row[10], created_at=float(row[11]),
        updated_at=float(row[12]), started_at=_opt_float(row[13]),
        finished_at=_opt_float(row[14]), runs=int(row[15]),
    )  # fmt: skip


def _check(op: str, card: object) -> Card:
    if not isinstance(card, Card):
        raise InvalidRequest(op, f"card must be a Card, got {type(card).__name__}")
    for field in ("id", "title", "author"):
        value = getattr(card, field)
        if not isinstance(value, str) or not value:
            raise InvalidRequest(op, f"{field} must be a non-empty str, got {value!r}")
    if card.status not in CARD_STATUSES:
        raise InvalidRequest(
            op, f"status must be one of {', '.join(CARD_STATUSES)}, got {card.status!r}"
        )
    if not all(isinstance(d, str) and d for d in card.depends):
        raise InvalidRequest(op, f"depends must be card ids, got {card.depends!r}")
    for field in ("parent", "assignee", "block_reason", "result"):
        value = getattr(card, field)
        if value is not None and not isinstance(value, str):
            raise InvalidRequest(op, f"{field} must be a str or None, got {value!r}")
    return card


def get_card(conn: apsw.Connection, card_id: str) -> Card | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM kanban_cards WHERE id = ?", (card_id,)).get
    return None if row is None else _card(row)


@operation(SaveCard)
def save_card(conn: apsw.Connection, req: SaveCard, abort: Abort) -> Card:
    card = _check(req.op, req.card)
    if req.create and get_card(conn, card.id) is not None:
        raise InvalidRequest(req.op, f"a card with id {card.id!r} already exists")
    conn.execute(
        f"INSERT OR REPLACE INTO kanban_cards ({_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            card.id, card.title, card.body, card.status, card.parent,
            json.dumps(list(card.depends)), card.assignee, int(card.goal), card.block_reason,
            card.result, card.author, card.created_at, card.updated_at, card.started_at,
            card.finished_at, card.runs,
        ),
    )  # fmt: skip
    stored = get_card(conn, card.id)
    assert stored is not None
    return stored


@operation(DeleteCard)
def delete_card(conn: apsw.Connection, req: DeleteCard, abort: Abort) -> bool:
    if not isinstance(req.card_id, str) or not req.card_id:
        raise InvalidRequest(req.op, f"card_id must be a non-empty str, got {req.card_id!r}")
    conn.execute("DELETE FROM kanban_cards WHERE id = ?", (req.card_id,))
    return bool(conn.changes())


@operation(ListCards)
def list_cards(conn: apsw.Connection, req: ListCards, abort: Abort) -> list[Card]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM kanban_cards ORDER BY created_at, id LIMIT ?", (MAX_CARDS,)
    )
    return [_card(row) for row in rows]
