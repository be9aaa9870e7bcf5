"""The board's triage work: specify and decompose through the auxiliary model (#259, #260).

A mixin of ``Board`` (it reads and writes the board's own state). A person's
request runs its model call in a task of the board's with a deferred reply, so
the mailbox stays free meanwhile; the dispatcher's auto-decompose runs in its
own task. After the model answers, the card is looked up again: one that
moved or went meanwhile is left as it is now.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from actors import ActorContext
from hermes.store import StoreError
from hermes.store.kanban_queries import Card

from . import aux
from .cards import CardError, CardNotFound, new_card
from .requests import KanbanFailed
from .settings import KanbanSettings

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

log = logging.getLogger("hermes.kanban")


class TriageWork:
    cards: dict[str, Card]
    asking: set[str]
    client: ModelClient | None
    model: str
    settings: KanbanSettings
    clock: Callable[[], float]

    ctx: ActorContext

    if TYPE_CHECKING:

        def stopped(self) -> bool: ...

        async def _pump(self) -> None: ...

        def view(self, card: Card) -> dict[str, Any]: ...

        async def _save(self, card: Card, *, create: bool = False) -> Card: ...

    # -- the auxiliary model -------------------------------------------------------------

    async def _auto_decompose(self, card_ids: Sequence[str]) -> None:
        for card_id in card_ids:
            card = self.cards.get(card_id)
            if card is None or card.status != "triage" or self.stopped():
                continue
            if card.id in self.asking:
                continue
            self.asking.add(card.id)
            try:  # the task's own call: the board's mailbox stays free meanwhile
                await self._decompose(card, "auto-decomposer")
            except (CardError, StoreError) as error:
                log.warning("kanban card %s: auto-decompose failed: %s", card_id, error)
            finally:
                self.asking.discard(card.id)

    def _triage(self, card: Card, what: str) -> None:
        if card.status != "triage":
            raise CardError(f"card {card.id} is {card.status}: only a triage card is {what}")
        if card.id in self.asking:
            raise CardError(f"card {card.id} is being specified or decomposed already")
        self._aux()

    def _aside(self, card: Card, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` (an auxiliary-model call) in a task: the mailbox stays free; the
        caller's reply is sent when it ends."""
        reply = self.ctx.defer_reply() if self.ctx.handling_call else None
        self.asking.add(card.id)

        async def body() -> None:
            try:
                answer: Any = await work
            except (CardError, CardNotFound, StoreError) as error:
                answer = KanbanFailed(error)
            except Exception as error:
                log.error("kanban card %s: the auxiliary call failed", card.id, exc_info=error)
                answer = KanbanFailed(error)
            finally:
                self.asking.discard(card.id)
            if reply is not None:
                reply.send(answer)
            await self._pump()

        self.ctx.start_task(body, name=f"aux-{card.id}")

    def _still_triage(self, card_id: str, what: str) -> Card:
        """The card after the model's answer: it may have moved or gone meanwhile."""
        card = self.cards.get(card_id)
        if card is None or card.status != "triage":
            now = "removed" if card is None else card.status
            raise CardError(f"card {card_id} not {what}: it is {now} now")
        return card

    async def _specify(self, card: Card) -> dict[str, Any]:
        try:
            spec = await aux.specify(
                self._aux(), self.model, card.title, card.body, self.settings.aux_timeout
            )
        except aux.AuxFailed as error:
            raise CardError(f"card {card.id} not specified: {error}") from None
        card = self._still_triage(card.id, "specified")
        changed = attrs.evolve(
            card, title=spec.title, body=spec.body, status="todo", updated_at=self.clock()
        )
        return self.view(await self._save(changed))

    async def _decompose(self, card: Card, author: str) -> list[dict[str, Any]]:
        try:
            parts = await aux.decompose(
                self._aux(), self.model, card.title, card.body, self.settings.aux_timeout
            )
        except aux.AuxFailed as error:
            raise CardError(f"card {card.id} not decomposed: {error}") from None
        card = self._still_triage(card.id, "decomposed")
        now = self.clock()
        made: list[Card] = []
        for part in parts:
            depends = tuple(made[i].id for i in part.parents)
            child = new_card({"title": part.title, "body": part.body}, now=now, author=author)
            made.append(attrs.evolve(child, parent=card.id, depends=depends))
        for child in made:
            await self._save(child, create=True)
        parent = attrs.evolve(
            card, status="todo", depends=(*card.depends, *(c.id for c in made)), updated_at=now
        )
        return [self.view(c) for c in [await self._save(parent), *made]]

    def _aux(self) -> ModelClient:
        if self.client is None:
            raise CardError("no auxiliary model is available to this board")
        return self.client
