"""Sampling: a real server asks the daemon's model (the fake provider) through the client."""

from __future__ import annotations

from pathlib import Path

from hermes.fake import FakeProvider, Reply
from hermes.mcp.sampling import Sampler
from hermes.model import ModelClient
from hermes.tools import ToolCall, ToolContext, ToolRegistry, run_batch

from .conftest import StartMcp, ready, stdio, wait_until


async def call(registry: ToolRegistry, tmp_path: Path, args: dict[str, object]) -> str:
    ctx = ToolContext.create(tmp_path, tmp_path / "spill")
    [result] = await run_batch([ToolCall("toolu_s", "mcp_t_sample", args)], registry, ctx)
    return result.outcome.content


async def test_a_sampling_request_runs_on_the_daemons_model_within_the_limits(
    start_mcp: StartMcp, client: ModelClient, fake: FakeProvider, tmp_path: Path
) -> None:
    mcp = await start_mcp(
        {"t": stdio(sampling={"max_rpm": 2, "max_tokens_cap": 50})},
        sampler=Sampler(client, "claude-test"),
    )
    await wait_until(mcp.link("t"), ready)
    fake.enqueue(Reply.of("forty-two"))
    text = await call(mcp.registry, tmp_path, {"prompt": "the answer?", "max_tokens": 500})
    assert text == "sampled (claude-test, endTurn): forty-two"
    [request] = fake.message_requests
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 50  # capped at max_tokens_cap
    assert "Answer briefly." in str(request.body["system"])
    assert request.body["messages"][0]["role"] == "user"
    assert "the answer?" in str(request.body["messages"][0]["content"])

    fake.enqueue(Reply.of("again"))
    assert (await call(mcp.registry, tmp_path, {"prompt": "2"})).endswith(": again")
    # The third in the same minute is refused, and the model is not asked.
    text = await call(mcp.registry, tmp_path, {"prompt": "3"})
    assert text == "sampling error: sampling refused: more than 2 sampling requests in a minute"
    assert len(fake.message_requests) == 2


async def test_a_model_outside_allowed_models_and_disabled_sampling_are_refused(
    start_mcp: StartMcp, client: ModelClient, fake: FakeProvider, tmp_path: Path
) -> None:
    mcp = await start_mcp(
        {"t": stdio(sampling={"allowed_models": ["claude-haiku"]})},
        sampler=Sampler(client, "claude-test"),
    )
    await wait_until(mcp.link("t"), ready)
    text = await call(mcp.registry, tmp_path, {"prompt": "x", "model": "gpt-5"})
    assert text == (
        "sampling error: sampling refused: model 'gpt-5' is not in allowed_models (claude-haiku)"
    )
    fake.enqueue(Reply.of("haiku it is"))
    text = await call(mcp.registry, tmp_path, {"prompt": "x", "model": "claude-haiku"})
    assert text == "sampled (claude-test, endTurn): haiku it is"
    await mcp.ref.stop()

    off = await start_mcp(
        {"t": stdio(sampling={"enabled": False})}, sampler=Sampler(client, "claude-test")
    )
    await wait_until(off.link("t"), ready)
    assert (await call(off.registry, tmp_path, {"prompt": "x"})).startswith("sampling error: ")
    assert len(fake.message_requests) == 1
