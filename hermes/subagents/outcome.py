"""``RunOutcome``: how one child's work ended, the value its driver reports."""

from __future__ import annotations

import attrs

from hermes.model.types import Usage
from hermes.session import TurnEnd


@attrs.frozen(slots=True)
class RunOutcome:
    """How the child's work ended, as its driver saw it (a value: built once, never changed)."""

    end: TurnEnd | None
    """The last turn's end (None: the child never ran a turn, or its driver failed)."""
    text: str = ""
    detail: str = ""
    usage: Usage = attrs.field(factory=Usage)
    iterations: int = 0
    output: object = None
    output_error: str | None = None
