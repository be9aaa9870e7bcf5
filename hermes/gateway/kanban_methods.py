"""``kanban.*``: the board (``hermes/kanban``), served by the daemon's ``kanban/board``.

``kanban.add`` (``title``; optional ``body``, ``status`` triage or todo,
``parent``, ``depends``, ``goal``), ``kanban.list`` (optional ``status``),
``kanban.get``, ``kanban.edit`` (``card`` and any of ``title``, ``body``,
``goal``, ``depends``), ``kanban.move`` (``card``, ``status``), ``kanban.block``
(``card``, ``reason``), ``kanban.unblock``, ``kanban.run``, ``kanban.specify``,
``kanban.decompose``, ``kanban.rm``. A bad field or move is ``invalid_params``
with the reason, an unknown card ``not_found``, a board between restarts
``unavailable``.
"""

from __future__ import annotations

from typing import Any

from actors import ActorSystem, Call
from hermes.daemon.errors import NotFound, RequestError
from hermes.kanban import (
    AddCard,
    BlockCard,
    CardError,
    CardNotFound,
    DecomposeCard,
    EditCard,
    GetCard,
    KanbanClient,
    ListCards,
    MoveCard,
    RemoveCard,
    RunCard,
    SpecifyCard,
    UnblockCard,
    Wake,
)

from .params import TITLE_LIMIT, Method, Params

ADD_FIELDS = ("title", "body", "status", "parent", "depends", "goal")
EDIT_FIELDS = ("title", "body", "goal", "depends")
CALL_TIMEOUT = 120.0
"""Specify and decompose wait for the auxiliary model."""


def _fields(p: Params, names: tuple[str, ...]) -> dict[str, Any]:
    """The card fields present; texts are checked here, the rest by the board."""
    fields: dict[str, Any] = {}
    for name in names:
        if name in ("title", "status", "parent"):
            value = p.opt_str(name, limit=TITLE_LIMIT)
        elif name == "body":
            value = p.opt_prose(name)
        else:
            p.seen.add(name)
            value = p.params.get(name)
        if value is not None:
            fields[name] = value
    return fields


def kanban_methods(system: ActorSystem, root_path: str) -> dict[str, Method]:
    """The ``kanban.*`` entries of the method table."""

    async def ask(message: Call[Any]) -> Any:
        ref = system.lookup(f"{root_path}/kanban/board")
        if ref is None:
            raise RequestError("the kanban board is not running (restarting?)", "unavailable")
        try:
            return await KanbanClient(ref).call(message, timeout=CALL_TIMEOUT)
        except CardNotFound as error:
            raise NotFound(str(error)) from None
        except CardError as error:
            raise RequestError(str(error), "invalid_params") from None

    async def add(p: Params) -> Any:
        fields = _fields(p, ADD_FIELDS)
        p.done()
        if "title" not in fields:
            raise RequestError("kanban.add: param 'title' is required", "invalid_params")
        return await ask(AddCard(fields))

    async def edit(p: Params) -> Any:
        card = p.text("card")
        fields = _fields(p, EDIT_FIELDS)
        p.done()
        if not fields:
            raise RequestError("kanban.edit: nothing to change", "invalid_params")
        return await ask(EditCard(card, fields))

    async def listed(p: Params) -> Any:
        status = p.opt_str("status")
        p.done()
        return await ask(ListCards(status))

    async def move(p: Params) -> Any:
        card, status = p.text("card"), p.text("status")
        p.done()
        return await ask(MoveCard(card, status))

    async def block(p: Params) -> Any:
        card, reason = p.text("card"), p.prose("reason")
        p.done()
        return await ask(BlockCard(card, reason))

    async def wake(p: Params) -> Any:
        p.done()
        return await ask(Wake())

    def one(kind: type[Call[Any]]) -> Method:
        async def method(p: Params) -> Any:
            card = p.text("card")
            p.done()
            return await ask(kind(card))  # type: ignore[call-arg]

        return method

    return {
        "kanban.add": add,
        "kanban.list": listed,
        "kanban.get": one(GetCard),
        "kanban.edit": edit,
        "kanban.move": move,
        "kanban.block": block,
        "kanban.unblock": one(UnblockCard),
        "kanban.run": one(RunCard),
        "kanban.specify": one(SpecifyCard),
        "kanban.decompose": one(DecomposeCard),
        "kanban.rm": one(RemoveCard),
        "kanban.wake": wake,
    }


def kanban_route(
    verb: str, rest: list[str], body: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """HTTP routes under ``/kanban``: ``GET /kanban``, ``POST /kanban`` (add),
    ``GET /kanban/{card}``, ``POST /kanban/{card}/{edit,move,block,unblock,run,specify,
    decompose,rm}``."""
    if not rest:
        if verb == "GET":
            return "kanban.list", {}
        return ("kanban.add", body) if verb == "POST" else None
    card = rest[0]
    if len(rest) == 1 and verb == "GET":
        return "kanban.get", {"card": card}
    verbs = ("edit", "move", "block", "unblock", "run", "specify", "decompose", "rm")
    if len(rest) == 2 and verb == "POST" and rest[1] in verbs:
        return f"kanban.{rest[1]}", {**body, "card": card}
    return None


__all__ = ["kanban_methods", "kanban_route"]
