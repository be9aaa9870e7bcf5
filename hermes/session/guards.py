"""Turn-loop guardrails: repeated identical tool calls, and batches of unknown tools.

Hermes' numbers: the same call with the same result 3 times in a turn gets a
warning appended to its result; 5 times halts the turn with a clear reason.
Three batches in a row that name only unknown tools end the turn.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

WARN_AT = 3
HALT_AT = 5
UNKNOWN_BATCHES_LIMIT = 3


class Verdict(enum.Enum):
    OK = "ok"
    WARN = "warn"
    HALT = "halt"


@attrs.frozen(slots=True)
class RepeatCheck:
    verdict: Verdict
    count: int
    message: str = ""


def _fingerprint(name: str, args: Mapping[str, Any], result: str) -> tuple[str, str, str]:
    return name, json.dumps(args, sort_keys=True, default=str), result


class RepeatGuard:
    """Counts identical (tool, arguments, result) triples within one turn."""

    def __init__(self, warn_at: int = WARN_AT, halt_at: int = HALT_AT) -> None:
        if not 1 <= warn_at < halt_at:
            raise ValueError(f"need 1 <= warn_at < halt_at, got {warn_at} and {halt_at}")
        self.warn_at = warn_at
        self.halt_at = halt_at
        self._seen: Counter[tuple[str, str, str]] = Counter()

    def observe(self, name: str, args: Mapping[str, Any], result: str) -> RepeatCheck:
        """Record one finished call; say whether to warn the model or halt the turn."""
        key = _fingerprint(name, args, result)
        self._seen[key] += 1
        count = self._seen[key]
        if count >= self.halt_at:
            return RepeatCheck(
                Verdict.HALT,
                count,
                f"Turn halted: {name} was called {count} times with the same arguments "
                "and got the same result each time.",
            )
        if count >= self.warn_at:
            return RepeatCheck(
                Verdict.WARN,
                count,
                f"[Warning: this is call {count} of {name} with identical arguments and an "
                f"identical result. Change approach; at {self.halt_at} the turn stops.]",
            )
        return RepeatCheck(Verdict.OK, count)


class UnknownToolStreak:
    """Ends the turn after ``limit`` batches in a row that name only unknown tools."""

    def __init__(self, limit: int = UNKNOWN_BATCHES_LIMIT) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self.streak = 0

    def observe(self, names: Iterable[str], known: Iterable[str]) -> bool:
        """Record one batch; True when the turn must end."""
        batch = list(names)
        known_names = set(known)
        if batch and all(name not in known_names for name in batch):
            self.streak += 1
        else:
            self.streak = 0
        return self.streak >= self.limit
