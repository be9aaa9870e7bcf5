"""``HeldFile``: the notices an emergency stop holds, kept in the data directory.

The stop's state is its file, so it outlives the daemon; the notices it holds
must too, or a restart during the stop loses them (a finished build's news
never reaches its session). ``NoticeHold`` writes its held notices here after
each one it keeps (``held-notices/<session id>.json`` beside the ``ESTOP``
file, replaced atomically: at most ``MAX_HELD`` notices, a few kilobytes) and
reads them back when the session's registry starts again; releasing them
removes the file. A file that cannot be read or written is logged and
skipped: holding never fails a registry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .notices import NoticeKind, ProcessNotice

log = logging.getLogger(__name__)

DIRECTORY = "held-notices"
_SAFE = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def _name(session_id: str) -> str:
    if _SAFE.fullmatch(session_id) and not session_id.startswith("."):
        return f"{session_id}.json"
    return hashlib.sha256(session_id.encode()).hexdigest()[:32] + ".json"


def _dump(notice: ProcessNotice) -> dict[str, Any]:
    data = attrs.asdict(notice)
    data["kind"] = notice.kind.value
    data["lines"] = list(notice.lines)
    return data


def _load(data: Any) -> ProcessNotice:
    fields = {a.name for a in attrs.fields(ProcessNotice)}
    values = {k: v for k, v in data.items() if k in fields}
    values["kind"] = NoticeKind(values["kind"])
    values["lines"] = tuple(values.get("lines") or ())
    return ProcessNotice(**values)


class HeldFile:
    """One session's held notices on disk."""

    def __init__(self, estop: Path, session_id: str) -> None:
        self.path = estop.parent / DIRECTORY / _name(session_id)

    def load(self) -> tuple[list[ProcessNotice], int]:
        """The notices held before a restart, and how many more were dropped."""
        try:
            raw = self.path.read_text()
        except FileNotFoundError:
            return [], 0
        except OSError as error:
            log.warning("held notices %s could not be read: %s", self.path, error)
            return [], 0
        try:
            data = json.loads(raw)
            notices = [_load(item) for item in data["notices"]]
            dropped = int(data.get("dropped", 0))
        except (ValueError, KeyError, TypeError) as error:
            log.warning("held notices %s are unreadable, skipped: %s", self.path, error)
            return [], 0
        return notices, dropped

    def save(self, notices: Sequence[ProcessNotice], dropped: int) -> None:
        body = json.dumps({"notices": [_dump(n) for n in notices], "dropped": dropped})
        temp = self.path.with_suffix(".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_text(body)
            os.replace(temp, self.path)
        except OSError as error:
            log.warning("held notices %s could not be saved: %s", self.path, error)

    def clear(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError as error:
            log.warning("held notices %s could not be removed: %s", self.path, error)
