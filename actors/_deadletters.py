"""Dead letters: messages that could not be delivered are counted and published."""

from __future__ import annotations

import logging
from collections import Counter, deque
from typing import Any

from ._events import DeadLetter, EventBus

log = logging.getLogger("actors.deadletters")


class DeadLetters:
    """Counts undeliverable messages, keeps the most recent ones and publishes each."""

    def __init__(self, bus: EventBus, keep: int = 1000) -> None:
        self._bus = bus
        self.total = 0
        self.by_reason: Counter[str] = Counter()
        self.recent: deque[DeadLetter] = deque(maxlen=keep)

    def record(self, recipient: str, message: Any, reason: str, sender: str | None) -> None:
        """Count, remember and publish one dead letter."""
        letter = DeadLetter(recipient, message, reason, sender)
        self.total += 1
        self.by_reason[reason] += 1
        self.recent.append(letter)
        self._bus.publish(letter)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("dead letter to %s (%s): %r", recipient, reason, message)
