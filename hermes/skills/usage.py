"""``<user skills>/.usage.json``: per-skill records the person and the agent keep.

``{"skill-name": {"locked": true, "created_by": "agent"}}``. ``locked`` is set
only by the person (``hermes curator lock``); a locked skill refuses the
agent's changes through ``skill_manage`` (seed #151). ``created_by: agent``
marks the skills the agent wrote. An unreadable file reads as empty (no
locks), and is logged.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from hermes.files import replace_file

log = logging.getLogger(__name__)

USAGE_FILE = ".usage.json"


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


def set_locked(user_dir: Path, name: str, locked: bool) -> None:
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
