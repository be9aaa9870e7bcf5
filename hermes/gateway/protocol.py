"""Session events as wire frames ``{type, session, path, seq, payload}``.

Payloads are turned into plain data by ``hermes.codec`` (the one converter).
Request and response frames are in ``frames.py``.
"""

from __future__ import annotations

import re
from typing import Any

from hermes import codec
from hermes.session import SessionEvent
from hermes.session.events import EventsLost

from .frames import (
    JSON,
    MSGPACK,
    SUBPROTOCOLS,
    ProtocolError,
    decode,
    encode,
    error_frame,
    notice,
    result_frame,
)

__all__ = [
    "JSON",
    "MSGPACK",
    "SUBPROTOCOLS",
    "ProtocolError",
    "decode",
    "encode",
    "error_frame",
    "event_frame",
    "event_type",
    "notice",
    "result_frame",
    "type_name",
]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def event_type(payload: object) -> str:
    """``TextDelta`` -> ``text.delta``; ``EventsLost`` -> ``events.dropped``."""
    return type_name(type(payload).__name__)


def type_name(class_name: str) -> str:
    """A payload class's name as an event type: ``TextDelta`` -> ``text.delta``."""
    if class_name == EventsLost.__name__:
        return "events.dropped"
    return _CAMEL.sub(".", class_name).lower()


def event_frame(event: SessionEvent, path: str) -> dict[str, Any]:
    payload = codec.to_plain(event.payload)
    return {
        "type": event_type(event.payload),
        "session": event.session,
        "path": path,
        "seq": event.seq,
        "payload": payload,
    }
