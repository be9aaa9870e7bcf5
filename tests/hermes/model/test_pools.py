"""SdkPools: requests fill small connection pools in order (issue 23, item 3)."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
import trio

from hermes.fake import Reply, open_fake_provider
from hermes.model import Message, ModelClient, ModelRequest
from hermes.model.pools import SdkPools


def _pools(per_pool: int = 2, pools: int = 3) -> SdkPools:
    return SdkPools(
        api_key="k",
        base_url="http://127.0.0.1:9",
        trust_env=False,
        connect_timeout=1.0,
        per_pool=per_pool,
        pools=pools,
    )


async def test_a_quiet_client_keeps_to_its_first_pool() -> None:
    pools = _pools()
    for _ in range(5):
        with pools.lease() as client:
            assert client is pools.clients[0]
    assert len(pools.clients) == 1
    assert pools.busy == [0]
    await pools.aclose()


async def test_busy_pools_open_the_next_and_past_the_last_take_the_least_busy() -> None:
    pools = _pools(per_pool=2, pools=3)
    with ExitStack() as stack:
        taken = [stack.enter_context(pools.lease()) for _ in range(6)]
        assert taken == [pools.clients[i] for i in (0, 0, 1, 1, 2, 2)]
        assert pools.busy == [2, 2, 2]
        with pools.lease() as extra:
            assert extra is pools.clients[0]  # all full: the least busy, the first of them
            assert pools.busy == [3, 2, 2]
    assert pools.busy == [0, 0, 0]
    with pools.lease() as again:
        assert again is pools.clients[0]
    await pools.aclose()


def test_a_pool_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="per_pool and pools must be at least 1, got 0, 3"):
        _pools(per_pool=0)


async def test_concurrent_streams_spread_over_pools_and_each_answers() -> None:
    request = ModelRequest(model="claude-test", messages=(Message.user("hi"),))
    async with open_fake_provider(api_key="k") as fake:
        fake.when(Reply.of("hello", delay=0.2))  # all 20 in flight at once
        async with ModelClient(api_key="k", base_url=fake.base_url, trust_env=False) as client:
            texts: list[str] = []

            async def one() -> None:
                texts.append((await client.complete(request)).message.text())

            with trio.fail_after(30):
                async with trio.open_nursery() as nursery:
                    for _ in range(20):
                        nursery.start_soon(one)
            pools = client._sdk
            assert len(pools.clients) >= 3  # 20 in flight at once, 8 a pool
            assert pools.busy == [0] * len(pools.clients)
    assert texts == ["hello"] * 20
