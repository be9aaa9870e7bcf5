"""The board's mailbox: one frozen attrs ``Call`` per request.

Every answer is plain data (a card as a dict) or ``KanbanFailed``, which
``KanbanClient`` raises: a bad request never crashes the board.
"""

from __future__ import annotations

from typing import Any

import attrs

from actors import Call

CardView = dict[str, Any]


@attrs.frozen(slots=True)
class KanbanFailed:
    error: Exception


@attrs.frozen(slots=True)
class AddCard(Call["CardView | KanbanFailed"]):
    fields: dict[str, Any]
    """``title``; optional ``body``, ``status`` (triage or todo), ``parent``, ``depends``,
    ``goal``."""


@attrs.frozen(slots=True)
class EditCard(Call["CardView | KanbanFailed"]):
    card_id: str
    fields: dict[str, Any]
    """Any of ``title``, ``body``, ``goal``, ``depends`` (not while it runs)."""


@attrs.frozen(slots=True)
class ListCards(Call["list[CardView] | KanbanFailed"]):
    status: str | None = None


@attrs.frozen(slots=True)
class GetCard(Call["CardView | KanbanFailed"]):
    card_id: str


@attrs.frozen(slots=True)
class MoveCard(Call["CardView | KanbanFailed"]):
    card_id: str
    status: str


@attrs.frozen(slots=True)
class BlockCard(Call["CardView | KanbanFailed"]):
    """Block a card with a reason (a running card's worker is stopped)."""

    card_id: str
    reason: str


@attrs.frozen(slots=True)
class UnblockCard(Call["CardView | KanbanFailed"]):
    """A blocked card goes back to todo, where the dispatcher finds it."""

    card_id: str


@attrs.frozen(slots=True)
class RunCard(Call["CardView | KanbanFailed"]):
    """Start a todo card's worker now (dispatch on or off, capacity aside)."""

    card_id: str


@attrs.frozen(slots=True)
class SpecifyCard(Call["CardView | KanbanFailed"]):
    """The auxiliary model writes a triage card's title and body; it moves to todo (#260)."""

    card_id: str


@attrs.frozen(slots=True)
class DecomposeCard(Call["list[CardView] | KanbanFailed"]):
    """The auxiliary model splits a triage card into subcards (#259); answers the parent
    and its new subcards."""

    card_id: str
    author: str = "decomposer"
    """Who the subcards name as their author (``auto-decomposer`` for the dispatcher's)."""


@attrs.frozen(slots=True)
class RemoveCard(Call["dict[str, Any] | KanbanFailed"]):
    """Remove a card (a running worker is stopped)."""

    card_id: str


@attrs.frozen(slots=True)
class Handoff(Call["str | KanbanFailed"]):
    """A worker's tool call: ``complete``, ``review`` or ``block`` its card; answers a line
    for the model. Refused when ``token`` is not the card's running run's."""

    card_id: str
    token: str
    action: str
    text: str


@attrs.frozen(slots=True)
class Wake(Call["dict[str, Any] | KanbanFailed"]):
    """Look at the emergency stop again (``hermes resume`` sends it) and dispatch."""
