"""A session's yolo switch survives the session's restart (stored in ``session_flags``)."""

from __future__ import annotations

from pathlib import Path

import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import TurnEnd
from hermes.store import StoreClient
from hermes.store.flag_queries import GetYolo

from .conftest import SessionFactory
from .helpers import result_text, results_by_id


async def test_yolo_set_by_a_person_is_back_after_the_session_restarts(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "build").mkdir()
    session = await open_session()
    with trio.fail_after(10):
        assert await session.set_yolo(True) is True
        assert await store.request(GetYolo(session.id)) is True
        await session.close("restart")
        resumed = await open_session(session_id=session.id)
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "rm -rf build"}, id="rm")), Reply.of("ok")
    )
    with trio.fail_after(20):
        result = await resumed.run("clean")  # unattended: only yolo lets it run
    assert result.reason is TurnEnd.COMPLETED
    rm = results_by_id(await store.load(session.id))["rm"]
    assert not rm.is_error, result_text(rm)
    assert not await trio.Path(workdir / "build").exists()
    with trio.fail_after(10):
        assert await resumed.set_yolo(False) is False
        assert await store.request(GetYolo(session.id)) is False


async def test_a_new_session_starts_with_yolo_off(
    open_session: SessionFactory, store: StoreClient
) -> None:
    session = await open_session()
    with trio.fail_after(10):
        assert await store.request(GetYolo(session.id)) is False
