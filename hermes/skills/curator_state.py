"""``<user skills>/.curator.json``: what the curator keeps between passes.

``{"last_run": unix time, "runs": [report, ...] (the latest 10), "proposals":
[consolidation, ...], "dismissed": [[name, name], ...], "renames": {"old":
"new", ...}}``. ``renames`` are the skills renamed since the last pass
(``skill_manage rename``); the next pass rewrites the references to them and
clears them. ``proposals`` are consolidations staged for the person: the
curator never merges skills itself. ``dismissed`` are the pairs the person
dismissed (``hermes curator dismiss ID``): never proposed again while both
skills exist. An unreadable file reads as empty (logged). Writers hold the
skills lock (``usage.skills_lock``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .usage import skills_lock, write_atomic

log = logging.getLogger(__name__)

STATE_FILE = ".curator.json"
KEPT_RUNS = 10


class UnknownProposal(LookupError):
    """No staged curator proposal has that id (the message names the staged ones)."""


def read_state(user_dir: Path) -> dict[str, Any]:
    """The curator's record (empty without a file, or when it cannot be read)."""
    path = user_dir / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is unreadable (%s): the curator starts afresh", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def write_state(user_dir: Path, state: dict[str, Any]) -> None:
    """Replace the record atomically (callers hold the skills lock)."""
    user_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(user_dir / STATE_FILE, json.dumps(state, indent=2, sort_keys=True) + "\n")


def last_run(user_dir: Path) -> float | None:
    """When the latest pass ran (or the first check recorded the time), else None."""
    value = read_state(user_dir).get("last_run")
    return float(value) if isinstance(value, int | float) else None


def note_rename(user_dir: Path, old: str, new: str) -> None:
    """Record that ``old`` is now ``new`` (callers hold the skills lock); a chain
    ``a -> b -> c`` is kept as ``a -> c``."""
    state = read_state(user_dir)
    renames: dict[str, str] = {
        k: v for k, v in state.get("renames", {}).items() if isinstance(v, str)
    }
    for key, value in list(renames.items()):
        if value == old:
            renames[key] = new
    renames[old] = new
    renames.pop(new, None)
    state["renames"] = renames
    write_state(user_dir, state)


def dismissed_pairs(state: dict[str, Any]) -> set[frozenset[str]]:
    """The pairs of skill names the person dismissed (malformed items are left out)."""
    pairs = state.get("dismissed")
    if not isinstance(pairs, list):
        return set()
    return {
        frozenset(p)
        for p in pairs
        if isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p)
    }


def dismiss(user_dir: Path, proposal_id: str) -> dict[str, Any]:
    """Drop the staged consolidation ``proposal_id`` and remember its pair, so later passes
    do not propose it again; the proposal. ``UnknownProposal`` names the staged ids."""
    with skills_lock(user_dir):
        state = read_state(user_dir)
        proposals = [p for p in state.get("proposals", []) if isinstance(p, dict)]
        found = next((p for p in proposals if p.get("id") == proposal_id), None)
        if found is None:
            known = ", ".join(str(p.get("id")) for p in proposals) or "none"
            raise UnknownProposal(f"no curator proposal {proposal_id[:100]!r} (proposed: {known})")
        state["proposals"] = [p for p in proposals if p is not found]
        pair = frozenset((str(found.get("keep")), str(found.get("merge"))))
        pairs = dismissed_pairs(state) | {pair}
        state["dismissed"] = sorted(sorted(p) for p in pairs)
        write_state(user_dir, state)
    return found
