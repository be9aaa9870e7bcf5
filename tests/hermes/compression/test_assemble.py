from __future__ import annotations

import itertools

import pytest

from hermes.compression import SUMMARY_MARKER, assemble, find_previous_summary, validate_transcript
from hermes.model.types import Message, TextBlock, ToolResultBlock

from .builders import assistant, result, results, use, user

HEAD_USER = (user("start"), assistant("", use("h1")), results(result("h1"), text="steer"))
HEAD_ASSISTANT = (user("start"), assistant("ok"))
TAIL_USER = (user("latest request"), assistant("answer"))
TAIL_ASSISTANT = (assistant("", use("t1")), results(result("t1")), assistant("answer"))


def _summary_blocks(messages: tuple[Message, ...]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, m in enumerate(messages)
        for j, b in enumerate(m.content)
        if isinstance(b, TextBlock) and b.text.startswith(SUMMARY_MARKER)
    ]


@pytest.mark.parametrize(
    ("head", "tail", "where"),
    [
        # head ends user, tail starts user: its own assistant message
        (HEAD_USER, TAIL_USER, "own assistant"),
        # head ends user, tail starts assistant: appended to the head's last message
        (HEAD_USER, TAIL_ASSISTANT, "head"),
        # head ends assistant, tail starts assistant: its own user message
        (HEAD_ASSISTANT, TAIL_ASSISTANT, "own user"),
        # head ends assistant, tail starts user: first in the tail's first message
        (HEAD_ASSISTANT, TAIL_USER, "tail"),
        ((), TAIL_USER, "tail"),
        ((), TAIL_ASSISTANT, "own user"),
        (HEAD_USER, (), "head"),
        (HEAD_ASSISTANT, (), "own user"),
    ],
)
def test_roles_alternate_for_every_combination(
    head: tuple[Message, ...], tail: tuple[Message, ...], where: str
) -> None:
    out = assemble(head, "BODY", tail, "model")
    assert validate_transcript(out) == []
    assert out[0].role == "user"
    assert all(a.role != b.role for a, b in itertools.pairwise(out))
    assert find_previous_summary(out) == "BODY"
    [(i, j)] = _summary_blocks(out)
    text = out[i].content[j]
    assert isinstance(text, TextBlock) and "(model summary)" in text.text
    if where == "own assistant":
        assert out == (*head, Message("assistant", (text,)), *tail)
    elif where == "own user":
        assert out == (*head, Message("user", (text,)), *tail)
    elif where == "head":
        assert i == len(head) - 1 and j == len(out[i].content) - 1
        assert out[i].content[:-1] == head[-1].content
        assert out[len(head) :] == tail
    else:
        assert i == len(head) and j == 0
        assert out[i].content[1:] == tail[0].content
        assert out[: len(head)] == head and out[i + 1 :] == tail[1:]


def test_summary_goes_after_tool_results_in_a_user_message() -> None:
    # assemble is general: a tail starting with results (split never makes one) still works
    head = (user("a"), assistant("", use("x1")))
    tail = (results(result("x1"), text="and this"), assistant("done"))
    out = assemble(head, "S", tail, "static")
    first = out[2].content
    assert isinstance(first[0], ToolResultBlock)
    assert isinstance(first[1], TextBlock) and first[1].text.startswith(SUMMARY_MARKER)
    assert first[2] == TextBlock("and this")
    assert validate_transcript(out) == []


def test_validate_reports_problems() -> None:
    assert validate_transcript([]) == []
    assert "first message must be the user's" in validate_transcript([assistant("x")])[0]
    assert "roles must alternate" in validate_transcript([user("a"), user("b")])[0]
    missing = [user("a"), assistant("", use("u1")), user("no result"), assistant("b")]
    assert "have no tool_result" in validate_transcript(missing)[0]
    stray = [user("a"), assistant("b"), results(result("nope"))]
    assert "answers no tool_use" in validate_transcript(stray)[0]
    reused = [
        user("a"),
        assistant("", use("u1")),
        results(result("u1")),
        assistant("", use("u1")),
        results(result("u1")),
    ]
    assert "used before" in validate_transcript(reused)[0]
    text_first = [
        user("a"),
        assistant("", use("u1")),
        Message("user", (TextBlock("hi"), ToolResultBlock("u1", "r"))),
    ]
    assert "tool_result comes after other content" in validate_transcript(text_first)[0]
