"""Typed answers to an MCP elicitation's form, through a real session and its approver."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import ModelClient
from hermes.session import (
    InvalidInput,
)
from hermes.session.events import ApprovalRequested
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from ..session.helpers import assert_valid, result_text, results_by_id
from .conftest import OpenSession, StartMcp, ready, stdio, wait_until


async def test_a_form_is_answered_with_typed_content_checked_against_its_schema(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"kb": stdio()}, registry=base_registry)
    await wait_until(mcp.link("kb"), ready)
    session = await open_session()
    fake.enqueue(Reply.of(ToolUse("mcp_kb_ask", {}, id="toolu_ask")), Reply.of("done"))
    asked: list[ApprovalRequested] = []
    with session.subscribe(approvals=True) as sub, trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(session.run, "ask me")
            while not asked:
                event = await sub.receive.receive()
                if isinstance(event.payload, ApprovalRequested):
                    asked.append(event.payload)
            request = asked[0]
            form = request.form
            assert form is not None and form["properties"]["name"]["type"] == "string"
            assert form["required"] == ["name"]
            for bad, why in (
                ({"name": 3}, "name: 3 is not of type 'string'"),
                ({}, "content: 'name' is a required property"),
            ):
                with pytest.raises(InvalidInput) as caught:
                    await session.respond_approval(request.request_id, "once", bad)
                assert why in str(caught.value) and "the request still waits" in str(caught.value)
            with pytest.raises(InvalidInput, match="not with deny"):
                await session.respond_approval(request.request_id, "deny", {"name": "Ada"})
            await session.respond_approval(request.request_id, "once", {"name": "Ada"})
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert result_text(results_by_id(transcript)["toolu_ask"]) == "elicitation: accept, name Ada"
