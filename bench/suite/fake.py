"""The suite's model: the fake provider in a process of its own, with fixed rules and a log.

``python -m bench.suite.fake --log PATH [--record-dir DIR --record-max N]``
prints the base URL on its first line and serves until SIGINT or SIGTERM.
Replies are keyed on markers in the final user message (a top-level session)
or in the system prompt (a subagent, whose goal is in it):

| marker | reply |
|---|---|
| ``bench:tools`` | a text, ``read_file`` notes.txt and ``terminal`` ``true`` |
| ``bench:slowtools`` | ``terminal`` ``sleep 0.2`` and ``read_file`` notes.txt |
| ``bench:bg`` | ``terminal`` background ``sleep 1`` (a process watcher) |
| ``bench:fanout N`` | ``delegate_task`` with N "bench child task" goals |
| ``bench:chaosfan N`` | ``delegate_task`` with N "bench chaos child" goals |
| ``bench:park N`` | ``delegate_task`` with N "bench parked child" goals |
| ``bench:spawn N`` | ``delegate_task`` with N "bench hot child" goals |
| ``bench:endless`` | an endless text stream (a delta every 20 ms) |
| ``bench:sleep`` | ``terminal`` ``sleep 300`` |
| ``bench:fifo`` | ``terminal`` ``cat steer.fifo`` (blocks until the benchmark writes) |
| anything else (tool results) | ``done`` |

The markers are looked for in the text of the final user message, which may
also hold tool results: a prompt after a cancelled tool call shares the
message with that call's result (roles alternate).

Requests of the daemon's own helpers are told apart first: a memory review
(its ask, "[Background memory review", ends the final user message) gets
"Nothing to save.", a compaction summary (the compressor's system prompt,
"You compress the history") gets a short summary; both after
``--aux-delay`` seconds, so that the chaos scenario finds reviewers and
compressors alive long enough to crash them.

Children: "bench chaos child" runs ``terminal`` ``sleep 0.2`` then answers;
"bench parked child" gets a request that is never answered (``Hang``);
"bench hot child" starts a background ``sleep 300``, then streams endlessly;
any other child answers ``child done``.

The log (JSON lines, appended and flushed): ``{"ev": "open", "tag", "at"}``
when an endless or hanging response starts, ``{"ev": "end", "tag", "o",
"dc"}`` when any request ends (``o`` the outcome, ``dc`` the
``time.monotonic()`` at which the client was seen leaving, or null). A tag is
the ``#word`` in the first user message (or, for a child, its goal), so the
benchmark can tell whose stream closed when; ``time.monotonic`` is
system-wide on Linux, so it compares with the benchmark's own clock.
With ``--record-dir``, the raw bodies of the first ``--record-max`` requests
tagged ``#rec`` are written there (the bare-SDK baseline replays them).
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import time
from pathlib import Path
from typing import IO, Any

import trio

from hermes.fake import Endless, Hang, MessagesRequest, Reply, ToolUse, open_fake_provider
from hermes.fake.records import RequestRecord
from hermes.fake.request import block_text

CHILD_MARK = "# Your task (sa-"
REVIEW_MARK = "[Background memory review"
SUMMARY_MARK = "You compress the history"
RECORD_TAG = "rec"
FIFO_NAME = "steer.fifo"
DONE = "done"
CHILD_DONE = "child done"

_TAG = re.compile(r"#([\w-]+)")
_COUNT = re.compile(r"bench:\w+ (\d+)")
_TOOLS = Reply.of(
    "Reading and running.",
    ToolUse("read_file", {"path": "notes.txt"}),
    ToolUse("terminal", {"command": "true"}),
)
_SLOW_TOOLS = Reply.of(
    ToolUse("terminal", {"command": "sleep 0.2"}),
    ToolUse("read_file", {"path": "notes.txt"}),
)
_BACKGROUND = Reply.of(ToolUse("terminal", {"command": "sleep 1", "background": True}))
_BG_SLEEP = Reply.of(ToolUse("terminal", {"command": "sleep 300", "background": True}))
_SLEEP = Reply.of(ToolUse("terminal", {"command": "sleep 300"}))
_CHILD_SLEEP = Reply.of(ToolUse("terminal", {"command": "sleep 0.2"}))
_FIFO = Reply.of(ToolUse("terminal", {"command": f"cat {FIFO_NAME}"}))
_ENDLESS = Endless(delta="streaming ", event_delay=0.02)
_HANG = Hang()
_DONE = Reply.of(DONE)
_CHILD_DONE = Reply.of(CHILD_DONE)
_DELEGATE = {
    "bench:fanout": "bench child task",
    "bench:chaosfan": "bench chaos child",
    "bench:park": "bench parked child",
    "bench:spawn": "bench hot child",
}


def _system(req: MessagesRequest) -> str:
    system = req.body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))


def tag_of(body: dict[str, Any]) -> str:
    """The ``#tag`` of a request: in a child's system prompt, else in the first user message."""
    system = body.get("system", "")
    if not isinstance(system, str):
        system = "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    if CHILD_MARK in system:
        found = _TAG.search(system.split(CHILD_MARK, 1)[1])
    else:
        messages = body.get("messages") or [{}]
        found = _TAG.search(block_text(messages[0].get("content")))
    return found.group(1) if found else ""


def _delegate(goal: str, count: int, tag: str) -> Reply:
    tasks = [{"goal": f"{goal} {i} #{tag}-{i}"} for i in range(count)]
    return Reply.of(ToolUse("delegate_task", {"tasks": tasks}))


def _child(req: MessagesRequest, system: str) -> Reply | Endless | Hang:
    first = not req.tool_results()
    if "bench parked child" in system:
        return _HANG
    if "bench hot child" in system:
        return _BG_SLEEP if first else _ENDLESS
    if "bench chaos child" in system:
        return _CHILD_SLEEP if first else _CHILD_DONE
    return _CHILD_DONE


def respond(req: MessagesRequest, aux_delay: float = 0.0) -> Reply | Endless | Hang:
    """The reply to one request (see the module docstring)."""
    system = _system(req)
    if SUMMARY_MARK in system:
        return Reply.of("Summary: the benchmark ran its tools; nothing else.", delay=aux_delay)
    if REVIEW_MARK in req.last_user_text():
        return Reply.of("Nothing to save.", delay=aux_delay)
    if CHILD_MARK in system:
        return _child(req, system)
    text = req.last_user_text()  # a prompt may share its message with tool results
    for marker, goal in _DELEGATE.items():
        if marker + " " in text:
            found = _COUNT.search(text[text.index(marker) :])
            return _delegate(goal, int(found.group(1)) if found else 1, tag_of(req.body))
    if "bench:slowtools" in text:
        return _SLOW_TOOLS
    if "bench:tools" in text:
        return _TOOLS
    if "bench:bg" in text:
        return _BACKGROUND
    if "bench:endless" in text:
        return _ENDLESS
    if "bench:sleep" in text:
        return _SLEEP
    if "bench:fifo" in text:
        return _FIFO
    return _DONE


class Log:
    """The JSON-lines log and the body recorder."""

    def __init__(
        self, out: IO[str], record_dir: Path | None, record_max: int, aux_delay: float = 0.0
    ) -> None:
        self.out = out
        self.aux_delay = aux_delay
        self.record_dir = record_dir
        self.record_max = record_max
        self.recorded = 0

    def write(self, line: dict[str, Any]) -> None:
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()

    def respond(self, req: MessagesRequest) -> Reply | Endless | Hang:
        reply = respond(req, self.aux_delay)
        tag = tag_of(req.body)
        if isinstance(reply, Endless | Hang):
            self.write({"ev": "open", "tag": tag, "at": time.monotonic()})
        if self.record_dir is not None and tag == RECORD_TAG and self.recorded < self.record_max:
            self.recorded += 1
            (self.record_dir / f"{self.recorded:05d}.json").write_bytes(req.record.raw_body)
        return reply

    def finished(self, record: RequestRecord) -> None:
        if record.path != "/v1/messages":
            return
        outcome = record.outcome.value if record.outcome is not None else None
        tag = tag_of(record.body) if isinstance(record.body, dict) else ""
        self.write({"ev": "end", "tag": tag, "o": outcome, "dc": record.disconnected_monotonic})


async def serve(log: Log) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with open_fake_provider(port=0, demo=False, record_limit=200) as fake:
            fake.when(log.respond)
            fake.on_finish = log.finished
            print(fake.base_url, flush=True)
            async for _ in signals:
                break


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.suite.fake", description=__doc__)
    parser.add_argument("--log", type=Path, required=True, help="JSON-lines log to append to")
    parser.add_argument("--record-dir", type=Path, default=None)
    parser.add_argument("--record-max", type=int, default=0)
    parser.add_argument("--aux-delay", type=float, default=0.0, help="seconds before reviews")
    args = parser.parse_args()
    from actors import tune_gc

    tune_gc()
    with args.log.open("a") as out:
        trio.run(serve, Log(out, args.record_dir, args.record_max, args.aux_delay))


if __name__ == "__main__":
    main()
