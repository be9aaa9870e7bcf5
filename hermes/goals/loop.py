"""``/loop``: a recurring wakeup in a session, until the agent or a judge says stop.

``/loop [every] [INTERVAL] PROMPT [--times N] [--until CONDITION]``: INTERVAL
is ``30s``, ``5m``, ``2h`` or ``1h30m`` (at least ``min_interval``); without one
the loop paces itself: 60 s, doubled while the replies stay the same, up to
15 minutes. The first wakeup runs at once. After each wakeup turn (#226, #227):
a line that is only ``LOOP_COMPLETE`` ends the loop; else with ``--until`` the
goal judge reads the reply against the condition (done ends it, blocked
pauses it, anything else loops on); ``--times N`` ends it after N wakeups; the
``max_ticks`` backstop (100) pauses it.
"""

from __future__ import annotations

import hashlib
import re

import attrs

from .record import TEXT_LIMIT, GoalError

LOOP_COMPLETE = "LOOP_COMPLETE"
_COMPLETE = re.compile(r"(?im)^\s*" + LOOP_COMPLETE + r"\s*[.!]?\s*$")
_INTERVAL = re.compile(r"^(?=\d)(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$", re.IGNORECASE)
SELF_PACED_FLOOR = 60.0
SELF_PACED_CEILING = 900.0

WAKEUP = (
    "[/loop wakeup #{tick}, {cadence}]\nRecurring task: {prompt}\n\n{until}"
    "This is an automatic wakeup from the loop the user set. Do the task now against the "
    "current state (check files, processes and services afresh) and report briefly what you "
    "found or did. If the task is complete, no longer applies, or what you were watching has "
    f"finished, say so and end your reply with {LOOP_COMPLETE} on a line of its own: that "
    "stops the loop."
)


@attrs.frozen(slots=True, kw_only=True)
class LoopSpec:
    """What the person asked for."""

    prompt: str
    interval: float | None = None
    """Seconds between wakeups; None: self-paced."""
    times: int = 0
    until: str = ""


def parse_interval(token: str) -> float | None:
    """Seconds of ``30s`` / ``5m`` / ``2h`` / ``1h30m``; None for anything else."""
    match = _INTERVAL.match(token)
    if match is None:
        return None
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    return float(total) if total > 0 else None


def parse_loop(text: str) -> LoopSpec:
    """The loop a ``/loop`` line's arguments describe."""
    raw, times, until = text.strip(), 0, ""
    found = re.search(r"(?:^|\s)--times\s+(\S+)", raw)
    if found is not None:
        if not found.group(1).isdigit() or not 1 <= int(found.group(1)) <= 10_000:
            raise GoalError(
                f"/loop --times N: N must be a number from 1 to 10000, got {found.group(1)[:40]!r}"
            )
        times = int(found.group(1))
        raw = (raw[: found.start()] + raw[found.end() :]).strip()
    found = re.search(r"(?:^|\s)--until\s+(.+)$", raw, re.DOTALL)
    if found is not None:
        until = found.group(1).strip()
        raw = raw[: found.start()].strip()
    elif re.search(r"(?:^|\s)--until\s*$", raw):
        raise GoalError("/loop --until: the stop condition is empty")
    words = raw.split(None, 1)
    if words and words[0].lower() == "every" and len(words) > 1:
        raw = words[1]
        words = raw.split(None, 1)
    interval = parse_interval(words[0]) if words else None
    if interval is not None:
        raw = words[1].strip() if len(words) > 1 else ""
    if not raw:
        raise GoalError(
            "/loop: the prompt is empty (usage: /loop [INTERVAL] PROMPT "
            "[--times N] [--until CONDITION])"
        )
    for what, value in (("prompt", raw), ("--until condition", until)):
        if len(value) > TEXT_LIMIT:
            raise GoalError(f"/loop: the {what} is {len(value)} characters, over {TEXT_LIMIT}")
    return LoopSpec(prompt=raw, interval=interval, times=times, until=until)


def signals_complete(reply: str) -> bool:
    """A line of the reply is only ``LOOP_COMPLETE`` (with an optional . or !)."""
    return bool(_COMPLETE.search(reply))


def digest(reply: str) -> str:
    """A reply's fingerprint for self-pacing: times, dates and durations left out."""
    text = reply.strip().lower()
    text = re.sub(r"\d{1,2}:\d{2}(:\d{2})?|\d{4}-\d{2}-\d{2}", "", text)
    text = re.sub(r"\b\d+(\.\d+)?\s*(s|sec|seconds?|m|min|minutes?|h|hours?)\b", "", text)
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "replace")).hexdigest()


def format_interval(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h"] if hours else []
    parts += [f"{minutes}m"] if minutes else []
    return "".join(parts + ([f"{secs}s"] if secs or not parts else []))


@attrs.frozen(slots=True, kw_only=True)
class Loop:
    """A session's loop as it runs."""

    spec: LoopSpec
    status: str = "active"
    """active, paused or done."""
    interval: float
    """The cadence now (self-paced: the current delay)."""
    max_ticks: int = 100
    ticks: int = 0
    awaiting_turn: int | None = None
    """The turn a wakeup went into (its end is judged); None between wakeups."""
    last_digest: str = ""
    reason: str | None = None
    """Why it paused or ended."""

    @property
    def cadence(self) -> str:
        if self.spec.interval is None:
            return f"self-paced, now {format_interval(self.interval)}"
        return f"every {format_interval(self.interval)}"

    def wakeup(self) -> str:
        until = f"Stop condition: {self.spec.until}\n\n" if self.spec.until else ""
        return WAKEUP.format(
            tick=self.ticks, cadence=self.cadence, prompt=self.spec.prompt, until=until
        )

    def paced(self, reply: str) -> Loop:
        """The loop with its next delay chosen after ``reply``."""
        if self.spec.interval is not None:
            return self
        fingerprint = digest(reply)
        same = fingerprint == self.last_digest
        delay = min(self.interval * 2, SELF_PACED_CEILING) if same else SELF_PACED_FLOOR
        return attrs.evolve(self, interval=delay, last_digest=fingerprint)

    def status_line(self) -> str:
        caps = [f"{self.ticks}/{self.spec.times or self.max_ticks} wakeups"]
        if self.spec.until:
            caps.append(f"until: {self.spec.until}")
        why = f" ({self.reason})" if self.reason else ""
        return f"loop {self.status}{why}, {self.cadence}, {', '.join(caps)}: {self.spec.prompt}"

    def view(self) -> dict[str, object]:
        return {
            "prompt": self.spec.prompt,
            "status": self.status,
            "interval": self.interval,
            "self_paced": self.spec.interval is None,
            "times": self.spec.times,
            "until": self.spec.until,
            "ticks": self.ticks,
            "max_ticks": self.max_ticks,
            "reason": self.reason,
        }
