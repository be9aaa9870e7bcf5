"""A standing goal as values: its status, budget, contract, quality gates and subgoals.

The records are frozen; the session's ``GoalKeeper`` holds the current one and
replaces it with ``attrs.evolve``. Hermes' numbers (seeds #221, #223, #233): a
20-turn budget, a gate times out after 300 s and may fail 3 times in a row
before the goal pauses, 3 unreadable judge replies or 5 failed judge calls in a
row pause it too.
"""

from __future__ import annotations

import enum

import attrs

DEFAULT_MAX_TURNS = 20
MAX_PARSE_FAILURES = 3
"""Judge replies in a row that were not a verdict before the goal pauses."""
MAX_TRANSPORT_FAILURES = 5
"""Judge calls in a row that failed (unreachable, refused) before the goal pauses."""
TEXT_LIMIT = 8000
"""Most characters of a goal, subgoal, gate command or loop prompt."""


class GoalError(ValueError):
    """A goal or loop command that cannot be applied; the message says why."""


class GoalStatus(enum.Enum):
    ACTIVE = "active"
    PAUSED = "paused"
    DONE = "done"


CONTRACT_FIELDS = ("outcome", "verification", "constraints", "boundaries", "stop_when")
_LABELS = {
    "outcome": "Outcome",
    "verification": "Verification",
    "constraints": "Constraints",
    "boundaries": "Boundaries",
    "stop_when": "Stop when blocked",
}
_ALIASES = {
    "outcome": "outcome",
    "done when": "outcome",
    "verification": "verification",
    "verify": "verification",
    "verified by": "verification",
    "evidence": "verification",
    "constraints": "constraints",
    "constraint": "constraints",
    "must not": "constraints",
    "boundaries": "boundaries",
    "scope": "boundaries",
    "files": "boundaries",
    "stop when": "stop_when",
    "stop_when": "stop_when",
    "give up when": "stop_when",
}


@attrs.frozen(slots=True, kw_only=True)
class Contract:
    """What done means, how to prove it, what must not change, what is in scope, when to ask."""

    outcome: str = ""
    verification: str = ""
    constraints: str = ""
    boundaries: str = ""
    stop_when: str = ""

    @property
    def empty(self) -> bool:
        return not any(getattr(self, name).strip() for name in CONTRACT_FIELDS)

    def render(self) -> str:
        """The fields that are set, one ``- Label: value`` line each ('' when empty)."""
        return "\n".join(
            f"- {_LABELS[name]}: {getattr(self, name).strip()}"
            for name in CONTRACT_FIELDS
            if getattr(self, name).strip()
        )

    @classmethod
    def from_mapping(cls, data: object) -> Contract:
        """The known string fields of a JSON object (anything else is ignored)."""
        if not isinstance(data, dict):
            return cls()
        return cls(**{n: str(data.get(n) or "").strip()[:TEXT_LIMIT] for n in CONTRACT_FIELDS})


def parse_contract(text: str) -> tuple[str, Contract]:
    """Split typed goal text into its headline and the contract of its ``field: value`` lines
    (``verify: make test``, ``scope: src/``, ...); other lines are the headline."""
    headline: list[str] = []
    fields: dict[str, list[str]] = {name: [] for name in CONTRACT_FIELDS}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        prefix, colon, value = line.partition(":")
        key = _ALIASES.get(prefix.strip().lower()) if colon else None
        if key is not None and value.strip():
            fields[key].append(value.strip())
        else:
            headline.append(line)
    contract = Contract(**{name: " ".join(parts) for name, parts in fields.items()})
    return " ".join(headline), contract


@attrs.frozen(slots=True, kw_only=True)
class Gate:
    """A shell command that must exit 0 before the judge may rule the goal done (#223)."""

    command: str
    timeout: float = 300.0
    max_retries: int = 3
    attempts: int = 0
    """Failures in a row; past ``max_retries`` the goal pauses."""
    last_exit: int | None = None


@attrs.frozen(slots=True, kw_only=True)
class Goal:
    """The session's standing objective."""

    text: str
    status: GoalStatus = GoalStatus.ACTIVE
    max_turns: int = DEFAULT_MAX_TURNS
    turns_used: int = 0
    since_turn: int = 0
    """Turns numbered above this one count toward the goal (those running before it don't)."""
    contract: Contract = attrs.field(factory=Contract)
    subgoals: tuple[str, ...] = ()
    gates: tuple[Gate, ...] = ()
    drafting: bool = False
    """``/goal draft``: the judge model is writing the contract."""
    last_verdict: str | None = None
    last_reason: str | None = None
    paused_reason: str | None = None
    parse_failures: int = 0
    transport_failures: int = 0

    def paused(self, reason: str) -> Goal:
        return attrs.evolve(self, status=GoalStatus.PAUSED, paused_reason=reason)

    def status_line(self) -> str:
        """One line: status, turns, what it carries, the goal."""
        meta = [f"{self.turns_used}/{self.max_turns} turns"]
        if self.subgoals:
            meta.append(f"{len(self.subgoals)} subgoal{'s' if len(self.subgoals) != 1 else ''}")
        if not self.contract.empty:
            meta.append("contract")
        if self.gates:
            meta.append(f"{len(self.gates)} gate{'s' if len(self.gates) != 1 else ''}")
        why = f" ({self.paused_reason})" if self.status is GoalStatus.PAUSED else ""
        return f"goal {self.status.value}{why}, {', '.join(meta)}: {self.text}"

    def view(self) -> dict[str, object]:
        """Plain data for the surfaces."""
        return {
            "text": self.text,
            "status": self.status.value,
            "turns_used": self.turns_used,
            "max_turns": self.max_turns,
            "contract": {n: getattr(self.contract, n) for n in CONTRACT_FIELDS},
            "subgoals": list(self.subgoals),
            "gates": [
                {"command": g.command, "attempts": g.attempts, "last_exit": g.last_exit}
                for g in self.gates
            ],
            "drafting": self.drafting,
            "last_verdict": self.last_verdict,
            "last_reason": self.last_reason,
            "paused_reason": self.paused_reason,
        }
