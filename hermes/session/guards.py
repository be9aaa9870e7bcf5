"""Turn-loop guardrails: repeated identical calls, spawning calls, unknown tools.

Hermes' numbers (seeds #170, #190): from the 2nd identical call in a turn
(same tool, arguments and result) a result of 512 characters or more that is
not an error is replaced by a short stub naming the first call; from the 3rd a
warning is appended to the result; at the 5th a *scheduled* turn (a cron job,
a kanban worker: runs nobody watches by design) halts with a clear reason,
while any other (the CLI, the WebSocket and HTTP API, a subagent) only keeps
being warned (``loop_halts``; ``[tools] loop_halt`` can widen it to every turn
nobody is attached to approve in, or turn halts off). A poll of a
background process (``process`` poll, log, wait, list) is expected to repeat:
it is stubbed but never warned or halted. At most ``SPAWN_CAP`` (50)
subagent-spawning calls a turn, on every surface (seed #191, ``SpawnCap``).
Three batches in a row that name only unknown tools end the turn.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

STUB_AT = 2
STUB_MIN_CHARS = 512
WARN_AT = 3
HALT_AT = 5
UNKNOWN_BATCHES_LIMIT = 3
POLLS: Mapping[str, frozenset[str]] = {"process": frozenset({"poll", "log", "wait", "list"})}
"""Tool and actions whose identical repeats are waiting, not a loop."""


class Verdict(enum.Enum):
    OK = "ok"
    WARN = "warn"
    HALT = "halt"


@attrs.frozen(slots=True)
class RepeatCheck:
    verdict: Verdict
    count: int
    message: str = ""
    stub: str | None = None
    """What the model sees instead of the repeated result, when it is replaced."""


def _fingerprint(name: str, args: Mapping[str, Any], result: str) -> tuple[str, str, str]:
    return name, json.dumps(args, sort_keys=True, default=str), result


def _polls(name: str, args: Mapping[str, Any]) -> bool:
    return args.get("action") in POLLS.get(name, ())


class RepeatGuard:
    """Counts identical (tool, arguments, result) triples within one turn."""

    def __init__(self, warn_at: int = WARN_AT, halt_at: int = HALT_AT) -> None:
        if not 1 <= warn_at < halt_at:
            raise ValueError(f"need 1 <= warn_at < halt_at, got {warn_at} and {halt_at}")
        self.warn_at = warn_at
        self.halt_at = halt_at
        self._seen: Counter[tuple[str, str, str]] = Counter()
        self._first: dict[tuple[str, str, str], str] = {}

    def observe(
        self,
        name: str,
        args: Mapping[str, Any],
        result: str,
        *,
        call_id: str = "",
        is_error: bool = False,
        halts: bool = True,
    ) -> RepeatCheck:
        """Record one finished call; say whether to stub, warn the model or halt the turn.

        ``halts``: the turn is unattended, so a loop ends it (else only warnings).
        """
        key = _fingerprint(name, args, result)
        self._seen[key] += 1
        count = self._seen[key]
        first = self._first.setdefault(key, call_id)
        stub = None
        if count >= STUB_AT and not is_error and len(result) >= STUB_MIN_CHARS:
            stub = (
                f"[Identical to the result of call {first or 'earlier'} in this turn "
                f"({len(result):,} characters, same tool and arguments): not repeated here.]"
            )
        if _polls(name, args):
            return RepeatCheck(Verdict.OK, count, stub=stub)
        if count >= self.halt_at and halts:
            return RepeatCheck(
                Verdict.HALT,
                count,
                f"Turn halted: {name} was called {count} times with the same arguments "
                "and got the same result each time.",
                stub,
            )
        if count >= self.warn_at:
            then = f"at {self.halt_at} the turn stops" if halts else "repeating it changes nothing"
            return RepeatCheck(
                Verdict.WARN,
                count,
                f"[Warning: this is call {count} of {name} with identical arguments and an "
                f"identical result. Change approach; {then}.]",
                stub,
            )
        return RepeatCheck(Verdict.OK, count, stub=stub)


LOOP_HALTS = ("scheduled", "unattended", "never")
"""``SessionConfig.loop_halt``'s choices: which looping turns ``halt_at`` ends."""


def loop_halts(mode: str, *, scheduled: bool, attended: bool) -> bool:
    """Whether a looping turn halts (seed #190: runs nobody watches by design, such as
    cron jobs; the CLI, the API and subagents only get warnings)."""
    match mode:
        case "scheduled":
            return scheduled
        case "unattended":
            return scheduled or not attended
        case "never":
            return False
    raise ValueError(f"loop_halt: expected one of {', '.join(LOOP_HALTS)}, got {mode!r}")


SPAWN_CAP = 50
"""Subagent-spawning calls a turn may make (Hermes' ``loop_caps``, seed #191)."""


class SpawnCap:
    """Hermes' loop cap (seed #191): at most ``cap`` subagent-spawning calls a turn (0:
    no cap); a batch whose spawning calls would pass it does not run, and halts the turn."""

    def __init__(self, cap: int = SPAWN_CAP) -> None:
        if cap < 0:
            raise ValueError(f"cap must be >= 0, got {cap}")
        self.cap = cap
        self.made = 0

    def observe(self, asked: int) -> str | None:
        """Record a batch's ``asked`` spawning calls; why it may not run (None: it runs)."""
        if self.cap and self.made + asked > self.cap:
            return (
                f"the turn reached its cap of {self.cap} subagent-spawning calls "
                f"({self.made} made, {asked} more asked)"
            )
        self.made += asked
        return None


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
