"""The subagent benchmark's model: the fake provider in a child process, with fixed rules.

``python -m bench.subagents_fake --api-key KEY`` prints the base URL on its first
line and serves until SIGINT or SIGTERM. Rules (``respond``):

- a parent whose final user text holds ``FANOUT N``: ``delegate_task`` with N
  tasks "bench child task i" (``FANOUT_STREAM N``: "bench stream child i");
- a parent with tool results: ``DONE``;
- a stream child (its system prompt names "bench stream child"): first
  ``terminal`` background ``sleep 300``, then an endless stream (a delta every 50 ms);
- any other child: ``CHILD_DONE``.
"""

from __future__ import annotations

import re

from hermes.fake import Endless, MessagesRequest, Reply, ToolUse

from .child import fake_provider_main

FANOUT = "bench:fanout"
FANOUT_STREAM = "bench:fanout-stream"
CHILD_MARK = "# Your task (sa-"
STREAM_GOAL = "bench stream child"
DONE = "done"
CHILD_DONE = "child done"

_NUMBER = re.compile(r"(\d+)")
_DONE = Reply.of(DONE)
_CHILD_DONE = Reply.of(CHILD_DONE)
_SLEEP = Reply.of(ToolUse("terminal", {"command": "sleep 300", "background": True}))
_STREAM = Endless(delta="streaming ", event_delay=0.05)
_cache: dict[tuple[str, int], Reply] = {}


def _system(req: MessagesRequest) -> str:
    system = req.body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system)


def _delegate(goal: str, count: int) -> Reply:
    key = (goal, count)
    if key not in _cache:
        tasks = [{"goal": f"{goal} {i}"} for i in range(count)]
        _cache[key] = Reply.of(ToolUse("delegate_task", {"tasks": tasks}))
    return _cache[key]


def respond(req: MessagesRequest) -> Reply | Endless:
    """The reply to one request (see the module docstring)."""
    system = _system(req)
    if CHILD_MARK in system:
        if STREAM_GOAL in system:
            return _STREAM if req.tool_results() else _SLEEP
        return _CHILD_DONE
    if req.tool_results():
        return _DONE
    text = req.last_user_text()
    found = _NUMBER.search(text)
    count = int(found.group(1)) if found else 1
    if FANOUT_STREAM in text:
        return _delegate(STREAM_GOAL, count)
    if FANOUT in text:
        return _delegate("bench child task", count)
    return _DONE


def main() -> None:
    fake_provider_main("python -m bench.subagents_fake", __doc__, respond, record_limit=100)


if __name__ == "__main__":
    main()
