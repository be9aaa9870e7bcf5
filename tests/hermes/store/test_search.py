"""Full-text search across sessions: ranking, snippets, what is indexed, bad queries."""

from __future__ import annotations

import pytest
import trio

from hermes.model.types import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from hermes.store import InvalidRequest, StoreClient

from .helpers import reply


async def fill(store: StoreClient) -> dict[str, str]:
    ids = {}
    for name, texts in {
        "ops": [
            "How do I deploy the service?",
            "Deploy with kubectl apply; the kubernetes deploy step runs after the deploy check.",
        ],
        "notes": [
            "Write release notes for version 2.",
            "Release notes drafted. Nothing about deploying yet.",
        ],
        "misc": [
            "What is the weather like?",
            "Sunny. If you deploy today, do it in the morning.",
        ],
    }.items():
        info = await store.create_session(model="m", session_id=name)
        await store.append(info.id, [Message.user(texts[0]), reply(texts[1])])
        ids[name] = info.id
    return ids


async def test_search_ranks_across_sessions(store: StoreClient) -> None:
    with trio.fail_after(10):
        await fill(store)
        hits = await store.search("deploy")
    # The message that is mostly about deploying comes first; every session is searched.
    assert [(h.session_id, h.seq) for h in hits] == [("ops", 1), ("ops", 0), ("misc", 1)]
    assert hits[0].role == "assistant" and hits[1].role == "user"
    assert hits[0].score > hits[1].score > 0
    assert hits[0].score >= hits[-1].score
    assert "[Deploy] with kubectl apply" in hits[0].snippet
    assert "[deploy]" in hits[2].snippet


async def test_all_words_must_match_in_any_order(store: StoreClient) -> None:
    with trio.fail_after(10):
        await fill(store)
        hits = await store.search("kubernetes deploy")
        assert [(h.session_id, h.seq) for h in hits] == [("ops", 1)]
        assert "[kubernetes] [deploy]" in hits[0].snippet
        assert await store.search("kubernetes weather") == []


async def test_snippets_cut_long_text_around_the_match(store: StoreClient) -> None:
    filler = " ".join(f"word{i}" for i in range(200))
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user(f"{filler} needle {filler}"))
        (hit,) = await store.search("needle", markers=("<b>", "</b>"))
    assert "<b>needle</b>" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 200


async def test_tool_results_are_indexed_but_not_thinking_or_tool_input(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id,
            [
                Message.user("check the disk"),
                Message(
                    "assistant",
                    (
                        ThinkingBlock("secretthought about quotas", "sig"),
                        ToolUseBlock("t1", "terminal", {"command": "df --inputflag"}),
                        ToolUseBlock("t2", "read_file", {"path": "/etc/fstab"}),
                    ),
                ),
                Message(
                    "user",
                    (
                        ToolResultBlock("t1", "filesystem overlay 93% used"),
                        ToolResultBlock("t2", (TextBlock("UUID=abc mountpoint /srv"),)),
                    ),
                ),
            ],
        )
        assert [h.seq for h in await store.search("overlay")] == [2]
        assert [h.seq for h in await store.search("mountpoint")] == [2]
        assert await store.search("secretthought") == []
        assert await store.search("inputflag") == []


async def test_search_within_one_session(store: StoreClient) -> None:
    with trio.fail_after(10):
        await fill(store)
        hits = await store.search("deploy", session_id="misc")
        assert [(h.session_id, h.seq) for h in hits] == [("misc", 1)]
        assert await store.search("deploy", session_id="notes") == []


async def test_limit(store: StoreClient) -> None:
    with trio.fail_after(10):
        await fill(store)
        assert [(h.session_id, h.seq) for h in await store.search("deploy", limit=1)] == [
            ("ops", 1)
        ]


async def test_plain_queries_treat_syntax_as_words(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user('error: "NEAR" AND (x OR y) -- café'))
        assert len(await store.search('"NEAR" AND (x')) == 1
        assert len(await store.search("cafe")) == 1  # diacritics folded
        assert len(await store.search("CAFÉ")) == 1


async def test_raw_queries(store: StoreClient) -> None:
    with trio.fail_after(10):
        await fill(store)
        hits = await store.search("weather OR kubectl", raw=True)
        assert sorted((h.session_id, h.seq) for h in hits) == [("misc", 0), ("ops", 1)]
        assert {h.session_id for h in await store.search("releas*", raw=True)} == {"notes"}
        assert await store.search("deploy NOT kubernetes", raw=True) != []
        with pytest.raises(
            InvalidRequest, match=r"bad full-text query 'deploy AND \(': fts5: syntax error"
        ):
            await store.search("deploy AND (", raw=True)
        # The store is still serving.
        assert len(await store.search("deploy")) == 3


@pytest.mark.parametrize("query", ["", "   "])
async def test_empty_query_is_refused(store: StoreClient, query: str) -> None:
    with (
        trio.fail_after(10),
        pytest.raises(InvalidRequest, match="search failed: the search query is empty"),
    ):
        await store.search(query)


async def test_index_follows_rewrites_and_truncation(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id, [Message.user("go"), Message("assistant", (ToolUseBlock("t1", "x", {}),))]
        )
        await store.append(info.id, Message("user", (ToolResultBlock("t1", "partial alpha"),)))
        await store.replace_last(
            info.id, 2, Message("user", (ToolResultBlock("t1", "final beta"),))
        )
        assert await store.search("alpha") == []
        assert [h.seq for h in await store.search("beta")] == [2]
        await store.truncate(info.id, 1)
        assert await store.search("beta") == []
