"""``<user skills>/.usage.json``: per-skill records the person and the agent keep.

``{"skill-name": {"locked": true, "created_by": "agent", "last_used": 1.7e9,
"uses": 3}}``. ``locked`` is set only by the person (``hermes curator lock``);
a locked skill refuses the agent's changes through ``skill_manage`` (seed
#151) and the curator skips it. ``created_by: agent`` marks the skills the
agent wrote (the ones the curator manages, seed #269); ``last_used`` and
``uses`` are written when ``skill_view`` or ``/name`` loads the skill. An
unreadable file reads as empty (no locks), and is logged. Every
read-modify-write holds ``skills_lock`` (an ``flock`` on ``.lock``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes.files import replace_file

log = logging.getLogger(__name__)

USAGE_FILE = ".usage.json"
LOCK_FILE = ".lock"


def read_usage(user_dir: Path) -> dict[str, dict[str, Any]]:
    path = user_dir / USAGE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is unreadable (%s): no skill counts as locked", path, exc)
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}


def write_usage(user_dir: Path, usage: dict[str, dict[str, Any]]) -> None:
    """Replace the file atomically (callers hold the skills lock)."""
    user_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(user_dir / USAGE_FILE, json.dumps(usage, indent=2, sort_keys=True) + "\n")


def is_locked(user_dir: Path, name: str) -> bool:
    return bool(read_usage(user_dir).get(name, {}).get("locked"))


@contextmanager
def skills_lock(user_dir: Path) -> Iterator[None]:
    """Hold the ``flock`` on ``<user_dir>/.lock`` (every writer of the folder takes it)."""
    user_dir.mkdir(parents=True, exist_ok=True)
    with open(user_dir / LOCK_FILE, "a") as file:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX)
        yield


def record_use(user_dir: Path, name: str, now: float | None = None) -> None:
    """Note that ``name`` was loaded now (the curator's activity date, seed #269).

    Never raises: a use that cannot be recorded is logged (the skill still loads).
    """
    try:
        with skills_lock(user_dir):
            usage = read_usage(user_dir)
            record = usage.setdefault(name, {})
            record["last_used"] = time.time() if now is None else now
            record["uses"] = int(record.get("uses", 0)) + 1
            record.pop("state", None)  # used again: no longer stale
            write_usage(user_dir, usage)
    except (OSError, ValueError, TypeError) as exc:
        log.warning("use of skill %s not recorded: %s", name, exc)


def set_locked(user_dir: Path, name: str, locked: bool) -> None:
    """Lock or unlock ``name`` (the person's ``hermes curator lock|unlock``)."""
    with skills_lock(user_dir):
        _set_locked(user_dir, name, locked)


def _set_locked(user_dir: Path, name: str, locked: bool) -> None:
    usage = read_usage(user_dir)
    record = usage.setdefault(name, {})
    if locked:
        record["locked"] = True
    else:
        record.pop("locked", None)
        if not record:
            usage.pop(name)
    write_usage(user_dir, usage)


def write_atomic(path: Path, text: str) -> None:
    """``text`` to ``path`` atomically and durably (``hermes.files.replace_file``), 0600."""
    replace_file(path, text, mode=0o600)
