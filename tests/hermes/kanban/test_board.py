"""The board through its mailbox: real worker sessions on the fake provider, a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.kanban import (
    AddCard,
    BlockCard,
    CardError,
    CardNotFound,
    DecomposeCard,
    EditCard,
    GetCard,
    ListCards,
    MoveCard,
    RemoveCard,
    RunCard,
    SpecifyCard,
    UnblockCard,
    Wake,
)
from hermes.kanban.worker import FINALIZE, STOP_NUDGE
from hermes.store import StoreClient
from hermes.store.kanban_queries import Card, SaveCard
from hermes.store.kanban_queries import ListCards as StoredCards

from .conftest import AUX, BoardFactory, aux_says, until, until_status, verdict


def worker_texts(fake: FakeProvider) -> list[str]:
    """The last user text of each worker request that ends in text (not tool results)."""
    out = []
    for record in fake.message_requests:
        if record.body["model"] == AUX:
            continue
        content = record.body["messages"][-1]["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            texts = [b["text"] for b in content if b.get("type") == "text"]
            if texts:
                out.append(texts[-1])
    return out


def aux_calls(fake: FakeProvider) -> int:
    return sum(1 for r in fake.message_requests if r.body["model"] == AUX)


async def test_a_worker_completes_its_card_and_its_session_is_closed(
    open_board: BoardFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("kanban_complete", {"summary": "added the flag; 12 tests pass"})),
        Reply.of("Finished."),
    )
    _, board, opened = await open_board()
    card = await board.call(AddCard({"title": "add a --json flag", "body": "to hermes x"}))
    done = await until_status(board, card["id"], "done", "blocked")
    assert done["status"] == "done" and done["result"] == "added the flag; 12 tests pass"
    assert done["assignee"] == opened.sessions[0] and done["runs"] == 1
    assert "add a --json flag" in worker_texts(fake)[0]
    await until(lambda: opened.closed)
    (row,) = await store.request(StoredCards())
    assert row.status == "done" and row.assignee == opened.sessions[0]


async def test_a_worker_that_never_hands_off_is_nudged_twice_then_blocked(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("I looked."), Reply.of("Still looking."), Reply.of("Done, I think."))
    _, board, _ = await open_board()
    card = await board.call(AddCard({"title": "tidy the docs"}))
    blocked = await until_status(board, card["id"], "blocked", "done")
    assert "without calling kanban_complete" in blocked["block_reason"]
    assert worker_texts(fake)[1:] == [STOP_NUDGE, STOP_NUDGE]
    again = await board.call(UnblockCard(card["id"]))  # a person decides (#235)
    assert again["status"] in ("todo", "running") and again["block_reason"] is None


async def test_goal_mode_continues_on_the_judges_note_until_done_and_completes(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of("Wrote the parser."),
        Reply.of("All 9 tests pass."),
        Reply.of(ToolUse("kanban_complete", {"summary": "parser; 9 tests pass"})),
        Reply.of("Closed."),
    )
    aux_says(
        fake,
        verdict("continue", "the tests were not run"),
        verdict("done", "9 tests pass"),
        verdict("done", "the evidence shows it"),  # the handoff gate (#225)
    )
    _, board, _ = await open_board(stop_nudge=False)
    card = await board.call(AddCard({"title": "a parser", "body": "tests pass", "goal": True}))
    done = await until_status(board, card["id"], "done", "blocked")
    assert done["status"] == "done", done
    texts = worker_texts(fake)
    assert "the tests were not run" in texts[1] and texts[2] == FINALIZE.format(note="9 tests pass")
    assert aux_calls(fake) == 3


async def test_the_goal_gate_refuses_a_handoff_and_the_judge_blocks_the_card(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("kanban_complete", {"summary": "done"})),
        Reply.of("I need the deploy key to go on."),
    )
    aux_says(
        fake,
        verdict("continue", "no evidence that it works"),
        verdict("blocked", "the worker needs a deploy key"),
    )
    _, board, _ = await open_board(stop_nudge=False)
    card = await board.call(AddCard({"title": "deploy", "goal": True}))
    blocked = await until_status(board, card["id"], "blocked", "done")
    assert (
        blocked["block_reason"] == "the goal judge ruled it blocked: the worker needs a deploy key"
    )
    results = [
        b
        for r in fake.message_requests
        if r.body["model"] != AUX
        for m in r.body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert "no evidence that it works" in json.dumps(results)


async def test_goal_mode_blocks_the_card_when_the_turn_budget_is_spent(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("Working on it."))
    aux_says(fake, verdict("continue", "more to do"))
    _, board, _ = await open_board(stop_nudge=False, goal_max_turns=1)
    card = await board.call(AddCard({"title": "big job", "goal": True}))
    blocked = await until_status(board, card["id"], "blocked", "done")
    assert blocked["block_reason"] == "the turn budget of 1 rounds is spent"


async def test_specify_rewrites_a_triage_card_and_moves_it_to_todo(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    aux_says(
        fake,
        Reply.of('{"title": "Add retries to the fetcher", "body": "3 retries; a test shows it"}'),
        Reply.of("Just make it faster."),
    )
    _, board, _ = await open_board(dispatch=False)
    card = await board.call(AddCard({"title": "retries?", "status": "triage"}))
    specified = await board.call(SpecifyCard(card["id"]))
    assert specified["status"] == "todo" and specified["title"] == "Add retries to the fetcher"
    assert specified["body"] == "3 retries; a test shows it"
    other = await board.call(AddCard({"title": "speed", "status": "triage"}))
    plain = await board.call(SpecifyCard(other["id"]))
    assert plain["title"] == "speed" and plain["body"] == "Just make it faster."
    with pytest.raises(CardError, match="only a triage card is specified"):
        await board.call(SpecifyCard(card["id"]))


async def test_the_dispatcher_decomposes_triage_cards_on_its_own(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    tasks = [
        {"title": "schema", "body": "add the table", "assignee": "nobody"},
        {"title": "api", "body": "serve it", "parents": [0, 7, 1]},
    ]
    aux_says(fake, Reply.of(json.dumps({"tasks": tasks})))
    _, board, _ = await open_board(dispatch=False, auto_decompose=True)
    card = await board.call(AddCard({"title": "a settings page", "status": "triage"}))
    parent = await until_status(board, card["id"], "todo")
    schema, api = parent["children"]
    assert parent["depends"] == [schema, api]
    shown = {c["id"]: c for c in await board.call(ListCards())}
    assert shown[schema]["author"] == "auto-decomposer" and shown[schema]["parent"] == card["id"]
    assert shown[api]["depends"] == [schema]  # the bad links (7, itself) dropped
    assert shown[schema]["status"] == "todo"


async def test_a_card_waits_for_its_dependencies(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    _, board, _ = await open_board(dispatch=False)
    first = await board.call(AddCard({"title": "first"}))
    second = await board.call(AddCard({"title": "second", "depends": [first["id"]]}))
    fake.enqueue(Reply.of(ToolUse("kanban_complete", {"summary": "first done"})), Reply.of("ok"))
    await board.call(RunCard(first["id"]))
    await until_status(board, first["id"], "done")
    await board.call(MoveCard(second["id"], "blocked"))
    assert (await board.call(GetCard(second["id"])))["block_reason"] == (
        "blocked by the board operator"
    )


async def test_bad_requests_get_precise_errors(open_board: BoardFactory) -> None:
    _, board, _ = await open_board(dispatch=False)
    with pytest.raises(CardNotFound, match="no kanban card with id 'card-nope'"):
        await board.call(GetCard("card-nope"))
    with pytest.raises(CardError, match="unknown card field 'colour'"):
        await board.call(AddCard({"title": "x", "colour": "red"}))
    with pytest.raises(CardError, match="a card needs a title"):
        await board.call(AddCard({"body": "x"}))
    with pytest.raises(CardError, match="goal must be true or false"):
        await board.call(AddCard({"title": "x", "goal": "yes"}))
    card = await board.call(AddCard({"title": "x"}))
    with pytest.raises(CardError, match="cannot move from todo to review"):
        await board.call(MoveCard(card["id"], "review"))
    with pytest.raises(CardError, match="unknown status 'doing'"):
        await board.call(MoveCard(card["id"], "doing"))
    with pytest.raises(CardError, match="only when a worker takes it"):
        await board.call(MoveCard(card["id"], "running"))
    with pytest.raises(CardError, match="a block needs a reason"):
        await board.call(BlockCard(card["id"], " "))
    with pytest.raises(CardError, match="no kanban card with id 'card-zz'"):
        await board.call(EditCard(card["id"], {"depends": ["card-zz"]}))
    with pytest.raises(CardError, match="not blocked"):
        await board.call(UnblockCard(card["id"]))
    triage = await board.call(AddCard({"title": "t", "status": "triage"}))
    with pytest.raises(CardError, match="only a todo card runs"):
        await board.call(RunCard(triage["id"]))
    with pytest.raises(CardError, match="only a triage card is decomposed"):
        await board.call(DecomposeCard(card["id"]))
    gone = await board.call(RemoveCard(card["id"]))
    assert gone == {"removed": card["id"], "run_stopped": False}


async def test_the_emergency_stop_holds_dispatch_until_resume(
    open_board: BoardFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("")
    fake.enqueue(Reply.of(ToolUse("kanban_complete", {"summary": "ok"})), Reply.of("ok"))
    _, board, opened = await open_board(estop=estop)
    card = await board.call(AddCard({"title": "held"}))
    with pytest.raises(CardError, match="the emergency stop is on"):
        await board.call(RunCard(card["id"]))
    await trio.sleep(0.3)
    assert (await board.call(GetCard(card["id"])))["status"] == "todo" and not opened.sessions
    estop.unlink()
    assert (await board.call(Wake()))["stopped"] is False
    await until_status(board, card["id"], "done")


async def test_blocking_a_running_card_stops_its_worker(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("slow", delay=30))
    _, board, opened = await open_board()
    card = await board.call(AddCard({"title": "slow one"}))
    await until_status(board, card["id"], "running")
    await until(lambda: opened.sessions)
    blocked: dict[str, Any] = await board.call(BlockCard(card["id"], "wrong approach"))
    assert blocked["status"] == "blocked" and blocked["block_reason"] == "wrong approach"
    await until(lambda: opened.closed)
    assert (await board.call(GetCard(card["id"])))["block_reason"] == "wrong approach"


async def test_a_worker_hands_its_card_to_review_and_a_person_closes_it(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("kanban_request_review", {"summary": "please check the wording"})),
        Reply.of("Handed off."),
    )
    _, board, _ = await open_board()
    card = await board.call(AddCard({"title": "write the release note"}))
    review = await until_status(board, card["id"], "review", "blocked", "done")
    assert review["status"] == "review" and review["result"] == "please check the wording"
    with pytest.raises(CardError, match="cannot move from review to triage"):
        await board.call(MoveCard(card["id"], "triage"))
    done = await board.call(MoveCard(card["id"], "done"))
    assert done["status"] == "done"


async def test_the_board_answers_while_the_auxiliary_model_thinks(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    aux_says(fake, Reply.of('{"title": "T", "body": "B"}', delay=1.0))
    _, board, _ = await open_board(dispatch=False)
    card = await board.call(AddCard({"title": "slow spec", "status": "triage"}))
    async with trio.open_nursery() as nursery:
        specified: dict[str, Any] = {}

        async def specify() -> None:
            specified.update(await board.call(SpecifyCard(card["id"])))

        nursery.start_soon(specify)
        await until(lambda: aux_calls(fake) == 1)
        with trio.fail_after(0.5):  # answered before the model's reply, not after it
            assert (await board.call(GetCard(card["id"])))["status"] == "triage"
        with pytest.raises(CardError, match="being specified or decomposed already"):
            await board.call(DecomposeCard(card["id"]))
    assert specified["status"] == "todo" and specified["title"] == "T"


async def test_a_card_left_running_by_a_stopped_daemon_goes_back_to_todo(
    open_board: BoardFactory, store: StoreClient
) -> None:
    left = Card(id="card-left", title="was running", status="running", assignee="s-1", runs=1)
    await store.request(SaveCard(left, create=True))
    _, board, _ = await open_board(dispatch=False)
    shown = await board.call(GetCard("card-left"))
    assert shown["status"] == "todo" and shown["assignee"] == "s-1" and shown["runs"] == 1
    edited = await board.call(EditCard("card-left", {"title": "try again", "goal": True}))
    assert edited["title"] == "try again" and edited["goal"] is True
    (row,) = await store.request(StoredCards())
    assert row.status == "todo" and row.title == "try again" and row.goal


async def test_goal_mode_blocks_a_card_judged_done_that_the_worker_never_completes(
    open_board: BoardFactory, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("It is done."), Reply.of("Yes, it is done."))
    aux_says(fake, verdict("done", "the file exists"))
    _, board, _ = await open_board(stop_nudge=False)
    card = await board.call(AddCard({"title": "make a file", "goal": True}))
    blocked = await until_status(board, card["id"], "blocked", "done")
    assert "never called kanban_complete" in blocked["block_reason"]
    assert worker_texts(fake)[-1] == FINALIZE.format(note="the file exists")
    assert aux_calls(fake) == 1
