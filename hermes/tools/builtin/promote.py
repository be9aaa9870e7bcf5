"""Foreground ``terminal`` calls that run in the background instead, and the note saying so.

Two cases, as Hermes decides them (seeds #148 and #178):

- the command would detach (``detach.py``: ``nohup``, a trailing ``&``, a
  known dev server): in the foreground it would be killed when the line
  returns, so it starts as a background process (the trailing ``&`` removed)
  with the model's own watch and notify choices;
- its ``timeout`` is over the foreground cap: it starts as a background
  process at once, with a completion notice (its watch patterns dropped),
  instead of being refused.

Either way the answer is the background start's (process id, how to use the
``process`` tool) with a note that says what happened and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..base import ToolOutcome
from ..detach import Detach


@attrs.frozen(slots=True)
class Promotion:
    """A foreground call moved to the background: what runs, and what the model is told."""

    command: str
    reason: str
    """``detach`` or ``timeout``."""
    note: str
    notify: bool = False
    """Ask for a completion notice whatever the model asked."""

    def args(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments as a ``background=true`` call."""
        args = {**given, "background": True}
        if self.notify:
            args["notify_on_complete"] = True
            args.pop("watch_patterns", None)
        return args

    def noted(self, outcome: ToolOutcome) -> ToolOutcome:
        """The background start's answer with the note (and ``promoted`` in its details)."""
        return attrs.evolve(
            outcome,
            content=f"{outcome.content}\n{self.note}",
            details={**outcome.details, "promoted": self.reason},
        )


def promotion(
    command: str, detach: Detach | None, timeout: int, max_timeout: int
) -> Promotion | None:
    """How a foreground call is moved to the background, or ``None`` to run it as asked."""
    if detach is not None:
        if detach.kind == "trailing_ampersand":
            why = "it ends with '&'; the '&' was removed and the command itself runs"
        elif detach.kind == "detacher":
            why = f"it uses {detach.what}"
        else:
            why = f"{detach.what} is a server or watcher that keeps running"
        return Promotion(
            detach.command,
            "detach",
            f"[Note: this command would keep running after the line returns ({why}), and a "
            "foreground command's leftovers are stopped when it ends, so it was started in the "
            "background instead. Next time pass background=true for long-lived processes.]",
        )
    if timeout > max_timeout:
        return Promotion(
            command,
            "timeout",
            f"[Note: timeout={timeout} s is over the foreground limit of {max_timeout} s, so the "
            "command was started in the background instead; you will be notified when it "
            "finishes.]",
            notify=True,
        )
    return None
