"""Skill changes staged for the person (``[skills] write_approval``, seed #265).

With ``write_approval`` on, a skill change the agent or a background review
makes is not written: it waits as ``<user skills>/.pending/<id>.json`` until
the person approves it (``hermes skills approve ID``: written then, with every
check of ``SkillWriter`` made again) or rejects it (``hermes skills reject
ID``: the record goes). A ``SkillChange`` is one skill as the writer left it:
its whole ``SKILL.md`` and the supporting files it wrote.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .format import SKILL_FILE
from .manage import SkillWriteError, SkillWriter
from .usage import skills_lock, write_atomic

log = logging.getLogger(__name__)

PENDING_DIR = ".pending"


@attrs.frozen(slots=True, kw_only=True)
class SkillChange:
    """One skill's new ``SKILL.md`` (None: unchanged) and supporting files (path -> text)."""

    name: str
    new: bool
    """A skill that did not exist: applied with ``create`` (refused if it exists by then)."""
    content: str | None = None
    files: Mapping[str, str] = attrs.field(factory=dict)

    def describe(self) -> str:
        what = "create" if self.new else ("rewrite" if self.content is not None else "add files to")
        files = f" (+ {', '.join(sorted(self.files))})" if self.files else ""
        return f"{what} {self.name}{files}"

    def plain(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "new": self.new,
            "content": self.content,
            "files": dict(self.files),
        }

    @classmethod
    def from_plain(cls, data: Mapping[str, Any]) -> SkillChange:
        files = data.get("files") or {}
        content = data.get("content")
        if (
            not isinstance(data.get("name"), str)
            or not isinstance(files, dict)
            or not (content is None or isinstance(content, str))
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
        ):
            raise ValueError("not a staged skill change")
        return cls(name=data["name"], new=bool(data.get("new")), content=content, files=files)


def apply_change(writer: SkillWriter, change: SkillChange) -> str:
    """Write ``change`` through ``writer`` (every check again); what was done."""
    if change.new:
        if change.content is None:
            raise SkillWriteError(f"the new skill {change.name} has no SKILL.md", "invalid")
        writer.create(change.name, change.content)
    elif change.content is not None:
        writer.edit(change.name, change.content)
    for path, text in sorted(change.files.items()):
        writer.write_file(change.name, path, text)
    return change.describe()


def stage(user_dir: Path, change: SkillChange, origin: str) -> str:
    """Keep ``change`` for the person; its id."""
    change_id = uuid.uuid4().hex[:8]
    record = {"id": change_id, "origin": origin, "at": time.time(), **change.plain()}
    with skills_lock(user_dir):
        folder = user_dir / PENDING_DIR
        folder.mkdir(exist_ok=True)
        write_atomic(folder / f"{change_id}.json", json.dumps(record, indent=2) + "\n")
    return change_id


def pending(user_dir: Path) -> list[dict[str, Any]]:
    """The staged changes, oldest first (an unreadable record is logged and left out)."""
    folder = user_dir / PENDING_DIR
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            SkillChange.from_plain(record)
        except (OSError, ValueError) as exc:
            log.warning("staged skill change %s is unreadable: %s", path, exc)
            continue
        records.append(record)
    return sorted(records, key=lambda r: (r.get("at", 0), r.get("id", "")))


def _take(user_dir: Path, change_id: str) -> tuple[Path, SkillChange]:
    path = user_dir / PENDING_DIR / f"{change_id}.json"
    if not change_id.isalnum() or not path.is_file():
        known = ", ".join(r["id"] for r in pending(user_dir)) or "none"
        raise SkillWriteError(
            f"no staged skill change {change_id!r} (staged: {known})", "unknown_change"
        )
    try:
        return path, SkillChange.from_plain(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise SkillWriteError(f"{path} is unreadable: {exc}", "unreadable") from exc


def approve(user_dir: Path, change_id: str) -> str:
    """Write staged change ``change_id`` and drop its record; what was done.

    A change that no longer passes (the skill was locked, created meanwhile, or
    the text no longer parses) is refused and stays staged.
    """
    path, change = _take(user_dir, change_id)
    done = apply_change(SkillWriter(user_dir), change)
    os.unlink(path)
    return done


def reject(user_dir: Path, change_id: str) -> str:
    """Drop staged change ``change_id`` unwritten; what it was."""
    path, change = _take(user_dir, change_id)
    os.unlink(path)
    return change.describe()


def skill_text(user_dir: Path, name: str) -> str | None:
    """The user skill's SKILL.md as it is on disk, or None."""
    try:
        return (user_dir / name / SKILL_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
