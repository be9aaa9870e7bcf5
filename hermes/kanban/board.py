"""``Board``: the actor that owns the cards and dispatches them to workers.

It loads every card when it starts (a card left ``running`` by a daemon that
stopped goes back to ``todo``) and then acts only on messages: a request, a
run's end (``TaskEnded``) or a timer while the emergency stop holds work.
After each, one dispatch pass (``_pump``): unless the emergency stop is on, it
starts workers for ``todo`` cards whose dependencies are done (oldest first,
up to ``max_running``; only with ``dispatch`` on) and, with ``auto_decompose``
on, one decomposition task for up to ``auto_decompose_per_tick`` triage cards
(#259). Nothing polls: with no work the board sleeps on its mailbox.

A run is an owned task (``worker.work``); its tools reach the board through
``Handoff``. A failed request is its answer (``KanbanFailed``), never a crash.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from actors import Actor, ActorContext, OwnedTask, TaskEnded, Timer
from hermes import codec
from hermes.store import StoreClient, StoreError
from hermes.store import kanban_queries as q
from hermes.store.kanban_queries import CARD_STATUSES, Card

from .cards import EDITABLE, CardError, CardNotFound, check_fields, check_move, moved, new_card
from .requests import (
    AddCard,
    BlockCard,
    DecomposeCard,
    EditCard,
    GetCard,
    Handoff,
    KanbanFailed,
    ListCards,
    MoveCard,
    RemoveCard,
    RunCard,
    SpecifyCard,
    UnblockCard,
    Wake,
)
from .settings import KanbanSettings
from .tool import CardTool, card_tools
from .triage import TriageWork
from .worker import OpenWorker, RunState, WorkerDeps, work

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

log = logging.getLogger("hermes.kanban")

ESTOP_RECHECK = 60.0
"""Seconds between two looks at the emergency stop while it holds work."""
ESTOP_DETAIL = "the emergency stop is on (hermes resume clears it)"


@attrs.frozen(slots=True, kw_only=True)
class BoardDeps:
    store: StoreClient
    open: OpenWorker
    client: ModelClient | None
    """The auxiliary model's client (specify, decompose, the goal judge)."""
    model: str
    settings: KanbanSettings


Locate = Callable[[ActorContext], Awaitable[BoardDeps]]
"""Called in ``on_start``: what the board works with, found in the actor tree."""


@attrs.define(slots=True)
class _Run:
    task: OwnedTask
    token: str
    state: RunState
    tools: tuple[CardTool, ...] = ()
    stopped: str | None = None
    """Why a person stopped it (its card is already moved)."""


@attrs.frozen(slots=True)
class _Recheck:
    pass


def wall_clock() -> float:
    return time.time()


class Board(TriageWork, Actor):
    def __init__(self, locate: Locate, clock: Callable[[], float] = wall_clock) -> None:
        self.locate = locate
        self.clock = clock
        self.cards: dict[str, Card] = {}
        self.runs: dict[str, _Run] = {}
        self.tasks: dict[OwnedTask, str] = {}
        self.decomposing: OwnedTask | None = None
        self.asking: set[str] = set()
        """Triage cards with an auxiliary call in flight (specify, decompose)."""
        self.tried: set[str] = set()
        """Triage cards auto-decompose gave up on (a person's decompose or edit retries)."""
        self.timer: Timer | None = None
        self.resumed = trio.Event()

    async def on_start(self) -> None:
        deps = await self.locate(self.ctx)
        self.store, self.open, self.settings = deps.store, deps.open, deps.settings
        self.client, self.model = deps.client, deps.model
        for card in await self.store.request(q.ListCards(), timeout=30.0):
            if card.status == "running":
                card = await self._save(
                    attrs.evolve(card, status="todo", updated_at=self.clock()),
                )
                log.warning("kanban card %s was running when the daemon stopped: todo", card.id)
            self.cards[card.id] = card
        await self._pump()

    # -- dispatch ------------------------------------------------------------------------

    def stopped(self) -> bool:
        return self.settings.stopped()

    def _ready(self, card: Card) -> bool:
        if card.status != "todo" or card.id in self.runs:
            return False
        return all(self.cards[d].status == "done" for d in card.depends if d in self.cards)

    async def _pump(self) -> None:
        if self.stopped():
            if self.timer is None and self._waiting():
                self.timer = self.ctx.send_after(ESTOP_RECHECK, _Recheck())
            return
        if not self.resumed.is_set():
            self.resumed.set()
        settings = self.settings
        if settings.dispatch:
            for card in sorted(self.cards.values(), key=lambda c: (c.created_at, c.id)):
                if len(self.runs) >= settings.max_running:
                    break
                if self._ready(card):
                    await self._launch(card)
        if settings.auto_decompose and self.decomposing is None and self.client is not None:
            triage = [
                c.id for c in self.cards.values()
                if c.status == "triage" and c.id not in self.tried
            ][: settings.auto_decompose_per_tick]  # fmt: skip
            if triage:
                self.tried.update(triage)
                self.decomposing = self.ctx.start_task(
                    lambda: self._auto_decompose(triage), name="decompose", notify=True
                )

    def _waiting(self) -> bool:
        return any(self._ready(c) or c.status == "triage" for c in self.cards.values())

    async def hold(self) -> None:
        """Returns once the emergency stop is off (a run waits here between rounds)."""
        while self.stopped():
            self.resumed = trio.Event()
            with trio.move_on_after(ESTOP_RECHECK):
                await self.resumed.wait()

    async def _launch(self, card: Card) -> None:
        now = self.clock()
        card = await self._save(
            attrs.evolve(
                card, status="running", started_at=now, finished_at=None, updated_at=now,
                runs=card.runs + 1, block_reason=None, result=None,
            )
        )  # fmt: skip
        token = secrets.token_hex(8)
        me = self.ctx.self
        judge = (
            None if self.client is None else (self.client, self.model, self.settings.aux_timeout)
        )
        tools = card_tools(card, token, lambda: me, judge)
        state = RunState()
        deps = WorkerDeps(
            open=self.open, client=self.client, judge_model=self.model, settings=self.settings,
            hold=self.hold, started=lambda sid: self._assign(card.id, token, sid),
        )  # fmt: skip

        def status() -> str | None:
            found = self.cards.get(card.id)
            return None if found is None else found.status

        async def body() -> None:
            try:
                await work(card, tools, deps, status, state)
            except Exception as error:  # a failed run blocks its card, never the board
                log.warning("kanban card %s: the worker failed", card.id, exc_info=error)
                state.blocked = f"the worker failed: {type(error).__name__}: {error}"

        task = self.ctx.start_task(body, name=f"work-{card.id}", notify=True)
        self.runs[card.id] = _Run(task, token, state, tools)
        self.tasks[task] = card.id
        log.info("kanban card %s dispatched", card.id)

    async def _assign(self, card_id: str, token: str, session_id: str) -> None:
        """The run's worker session exists: it is the card's assignee."""
        run = self.runs.get(card_id)
        card = self.cards.get(card_id)
        if run is not None and run.token == token and card is not None:
            for tool in run.tools:
                tool.owner[:] = [session_id]
            await self._save(attrs.evolve(card, assignee=session_id))

    async def _ended(self, task: OwnedTask) -> None:
        if task is self.decomposing:
            self.decomposing = None
            return
        card_id = self.tasks.pop(task, None)
        if card_id is None:
            return
        run = self.runs.pop(card_id, None)
        card = self.cards.get(card_id)
        if run is None or card is None:
            return
        card = attrs.evolve(card, assignee=run.state.session_id or card.assignee)
        if card.status == "running":  # the worker did not hand it off: blocked (#235)
            why = run.state.blocked or "the worker stopped before handing off the card"
            card = moved(card, "blocked", now=self.clock(), reason=why[:4000])
            log.info("kanban card %s blocked: %s", card_id, why)
        await self._save(card)

    # -- the mailbox ---------------------------------------------------------------------

    async def receive(self, message: object) -> object:
        match message:
            case _Recheck():
                self.timer = None
            case TaskEnded(task=task):
                await self._ended(task)
            case _:
                try:
                    answer = await self._handle(message)
                except (CardError, CardNotFound, StoreError) as error:
                    return KanbanFailed(error)
                except Exception as error:
                    log.error("the board failed a %s", type(message).__name__, exc_info=error)
                    return KanbanFailed(error)
                await self._pump()
                return answer
        await self._pump()
        return None

    def _card(self, card_id: object) -> Card:
        card = self.cards.get(card_id) if isinstance(card_id, str) else None
        if card is None:
            raise CardNotFound(f"no kanban card with id {card_id!r:.100}")
        return card

    def view(self, card: Card) -> dict[str, Any]:
        shown: dict[str, Any] = codec.to_plain(card)
        shown["depends"] = list(card.depends)
        shown["children"] = [c.id for c in self.cards.values() if c.parent == card.id]
        return shown

    async def _handle(self, message: object) -> Any:
        now = self.clock()
        match message:
            case AddCard(fields=fields):
                card = new_card(fields, now=now)
                self._check_links(card)
                return self.view(await self._save(card, create=True))
            case ListCards(status=status):
                if status is not None and status not in CARD_STATUSES:
                    raise CardError(f"unknown status {status!r:.100} "
                                    f"(statuses: {', '.join(CARD_STATUSES)})")  # fmt: skip
                return [self.view(c) for c in self.cards.values()
                        if status is None or c.status == status]  # fmt: skip
            case GetCard(card_id=card_id):
                return self.view(self._card(card_id))
            case Wake():
                return {"stopped": self.stopped(), "running": len(self.runs)}
        card = self._card(getattr(message, "card_id", None))
        match message:
            case EditCard(fields=fields):
                if card.status == "running":
                    raise CardError(f"card {card.id} is running: block it before editing it")
                changed = attrs.evolve(card, **check_fields(fields, EDITABLE), updated_at=now)
                self._check_links(changed)
                self.tried.discard(card.id)
                return self.view(await self._save(changed))
            case MoveCard(status=status):
                status = check_move(card, status)
                reason = "blocked by the board operator" if status == "blocked" else None
                return self.view(await self._stop_and_move(card, status, reason))
            case BlockCard(reason=reason):
                if not isinstance(reason, str) or not reason.strip():
                    raise CardError("a block needs a reason")
                if card.status == "blocked":
                    raise CardError(f"card {card.id} is already blocked")
                return self.view(await self._stop_and_move(card, "blocked", reason[:4000]))
            case UnblockCard():
                if card.status != "blocked":
                    raise CardError(f"card {card.id} is {card.status}, not blocked")
                return self.view(await self._save(moved(card, "todo", now=now)))
            case RunCard():
                if card.status != "todo":
                    raise CardError(
                        f"card {card.id} is {card.status}: only a todo card runs "
                        "(kanban unblock, specify or move it to todo first)"
                    )
                if self.stopped():
                    raise CardError(f"card {card.id} not run: {ESTOP_DETAIL}")
                await self._launch(card)
                return self.view(self.cards[card.id])
            case SpecifyCard():
                self._triage(card, "specified")
                return self._aside(card, self._specify(card))
            case DecomposeCard(author=author):
                self._triage(card, "decomposed")
                return self._aside(card, self._decompose(card, author))
            case RemoveCard():
                run = self.runs.get(card.id)
                if run is not None:
                    run.task.cancel()
                self.cards.pop(card.id, None)
                await self.store.request(q.DeleteCard(card.id), timeout=10.0)
                return {"removed": card.id, "run_stopped": run is not None}
            case Handoff(token=token, action=action, text=text):
                return await self._handoff(card, token, action, text)
        raise CardError(f"the board does not handle {type(message).__name__}")

    async def _handoff(self, card: Card, token: str, action: str, text: str) -> str:
        run = self.runs.get(card.id)
        if run is None or run.token != token or card.status != "running":
            raise CardError(f"card {card.id} is {card.status}: this worker no longer owns it")
        now = self.clock()
        if action == "block":
            await self._save(moved(card, "blocked", now=now, reason=text[:4000]))
            return f"Card {card.id} is blocked: {text[:200]}. A person will look at it; stop now."
        status = {"complete": "done", "review": "review"}.get(action)
        if status is None:
            raise CardError(f"unknown handoff {action!r}")
        await self._save(attrs.evolve(moved(card, status, now=now), result=text[:20000]))
        if status == "done":
            return f"Card {card.id} is done. Stop now: your work on it is over."
        return f"Card {card.id} is in review. Stop now: a person will check it."

    async def _stop_and_move(self, card: Card, status: str, reason: str | None) -> Card:
        run = self.runs.get(card.id)
        if run is not None:
            run.stopped = reason or f"moved to {status}"
            run.task.cancel()
        return await self._save(moved(card, status, now=self.clock(), reason=reason))

    def _check_links(self, card: Card) -> None:
        for other in (*card.depends, *([card.parent] if card.parent else [])):
            if other == card.id:
                raise CardError(f"card {card.id} cannot depend on itself")
            if other not in self.cards:
                raise CardError(f"no kanban card with id {other!r:.100} (in depends or parent)")

    async def _save(self, card: Card, *, create: bool = False) -> Card:
        stored = await self.store.request(q.SaveCard(card, create=create), timeout=10.0)
        self.cards[card.id] = stored
        return stored
