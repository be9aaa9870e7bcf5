"""The session benchmark's model: the fake provider in a child process, with fixed rules.

``python -m bench.session_fake --api-key KEY`` prints the base URL on its first
line and serves until SIGINT or SIGTERM, like ``hermes fake-provider``. A
child process cannot be scripted with ``enqueue`` from the parent, so the rules
live here, keyed on markers in the final user message (``respond``):

| final user message holds | reply |
|---|---|
| ``STEER_NOTE`` (a steer delivered with tool results) | ``STEER_ACK`` |
| ``THREE_TOOLS`` | a text and ``read_file`` a.txt, ``terminal`` ``true``, ``read_file`` b.txt |
| ``SLEEP`` | ``terminal`` ``sleep 30`` |
| ``STREAM`` | an endless text stream (a delta every 5 ms) |
| ``WAIT_FIFO`` | ``terminal`` ``cat steer.fifo`` (blocks until the benchmark writes to the FIFO) |
| only tool results | ``DONE`` |
| anything else | ``DONE`` |
"""

from __future__ import annotations

from hermes.fake import Endless, MessagesRequest, Reply, ToolUse

from .child import fake_provider_main

THREE_TOOLS = "bench:three-tools"
SLEEP = "bench:sleep"
STREAM = "bench:stream"
WAIT_FIFO = "bench:wait-fifo"
STEER_NOTE = "bench:steer-note"
FIFO_NAME = "steer.fifo"
STEER_ACK = "steer received"
DONE = "done"

_THREE = Reply.of(
    "Running three tools.",
    ToolUse("read_file", {"path": "a.txt"}),
    ToolUse("terminal", {"command": "true"}),
    ToolUse("read_file", {"path": "b.txt"}),
)
_SLEEP = Reply.of(ToolUse("terminal", {"command": "sleep 30"}))
_STREAM = Endless(delta="streaming ", event_delay=0.005)
_FIFO = Reply.of(ToolUse("terminal", {"command": f"cat {FIFO_NAME}"}))
_ACK = Reply.of(STEER_ACK)
_DONE = Reply.of(DONE)


def respond(req: MessagesRequest) -> Reply | Endless:
    """The reply to one request (see the module docstring)."""
    text = req.last_user_text()
    if STEER_NOTE in text:
        return _ACK
    if THREE_TOOLS in text:
        return _THREE
    if SLEEP in text:
        return _SLEEP
    if STREAM in text:
        return _STREAM
    if WAIT_FIFO in text:
        return _FIFO
    return _DONE


def main() -> None:
    fake_provider_main("python -m bench.session_fake", __doc__, respond, record_limit=1000)


if __name__ == "__main__":
    main()
