"""Writing skills: create, edit, patch, delete and supporting files, in the user's folder.

Every change lands in the user skills folder only; bundled and project skills
are read-only (a user skill of the same name overrides them). A change is
refused, with a message the agent can act on, when the skill is locked by
the person (except create, seed #151), when the resulting ``SKILL.md`` does
not parse, or when the threat scan calls it dangerous (the file is left as it
was, seed #267). ``delete`` moves the folder to ``.archive/`` (recoverable).
All writes are atomic and serialised by an ``flock`` on ``.lock``.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from contextlib import AbstractContextManager
from pathlib import Path

import attrs

from .curator_state import note_rename
from .format import NAME_RE, SKILL_FILE, SUPPORT_DIRS, Skill, parse_skill
from .scan import scan_text
from .usage import is_locked, read_usage, skills_lock, write_atomic, write_usage

ARCHIVE_DIR = ".archive"
_NAME_LINE = re.compile(r"^name:[ \t]*\S+[ \t]*$", re.MULTILINE)
MAX_FILE_BYTES = 200_000


class SkillWriteError(Exception):
    """A refused change; the message says why and what to do instead."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@attrs.frozen(slots=True)
class SkillWriter:
    """The write side of one user skills folder."""

    user_dir: Path

    def create(self, name: str, content: str) -> Skill:
        with self._locked():
            folder = self.folder(name)
            if folder.exists():
                raise SkillWriteError(
                    f"skill '{name}' already exists; use edit or patch to change it", "exists"
                )
            skill = self.checked(folder, content)
            folder.mkdir(parents=True)
            write_atomic(folder / SKILL_FILE, content)
            usage = read_usage(self.user_dir)
            usage.setdefault(name, {}).update(created_by="agent", created_at=time.time())
            write_usage(self.user_dir, usage)
            return skill

    def edit(self, name: str, content: str) -> Skill:
        with self._locked():
            folder = self.existing(name)
            skill = self.checked(folder, content)
            write_atomic(folder / SKILL_FILE, content)
            return skill

    def patch(self, name: str, old_text: str, new_text: str) -> Skill:
        with self._locked():
            folder = self.existing(name)
            text = (folder / SKILL_FILE).read_text(encoding="utf-8")
            content = patched(name, text, old_text, new_text)
            skill = self.checked(folder, content)
            write_atomic(folder / SKILL_FILE, content)
            return skill

    def delete(self, name: str) -> Path:
        """Move the skill to ``.archive/<name>-<unix time>``; returns where it went."""
        with self._locked():
            return archive_folder(self.user_dir, self.existing(name))

    def rename(self, name: str, new_name: str) -> Skill:
        """Move the skill to ``new_name`` (folder and front matter); the curator's next pass
        rewrites the other skills' references to the old name (seed #271)."""
        with self._locked():
            folder = self.existing(name)
            target = self.folder(new_name)
            if target.exists():
                raise SkillWriteError(f"skill '{new_name}' already exists", "exists")
            text = (folder / SKILL_FILE).read_text(encoding="utf-8")
            content, count = _NAME_LINE.subn(f"name: {new_name}", text, count=1)
            if count != 1:
                raise SkillWriteError(f"{name}/SKILL.md has no 'name: {name}' line", "invalid")
            skill = self.checked(target, content)
            os.rename(folder, target)
            write_atomic(target / SKILL_FILE, content)
            usage = read_usage(self.user_dir)
            if name in usage:
                usage[new_name] = usage.pop(name)
                write_usage(self.user_dir, usage)
            note_rename(self.user_dir, name, new_name)
            return skill

    def write_file(self, name: str, file_path: str, content: str) -> Path:
        with self._locked():
            folder = self.existing(name)
            rel = self.checked_file(file_path, content)
            target = folder / rel
            for parent in reversed(target.relative_to(folder).parents[:-1]):
                if (folder / parent).is_symlink():
                    raise SkillWriteError(f"{parent} is a symlink; refused", "bad_path")
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, content)
            return target

    # -- checks (a review's ``SkillDraft`` makes the same ones) ---------------------------

    def folder(self, name: str) -> Path:
        """Where skill ``name`` lives (it need not exist); a bad name is refused."""
        if not NAME_RE.fullmatch(name):
            raise SkillWriteError(
                f"'{name}' is not a skill name: lower-case letters, digits and hyphens",
                "bad_name",
            )
        return self.user_dir / name

    def existing(self, name: str) -> Path:
        """The folder of user skill ``name``: refused if there is none or it is locked."""
        folder = self.folder(name)
        if not (folder / SKILL_FILE).is_file():
            raise SkillWriteError(
                f"no skill '{name}' in your skills folder (bundled and project skills cannot "
                "be changed; create a skill of the same name to override one)",
                "unknown_skill",
            )
        if is_locked(self.user_dir, name):
            raise SkillWriteError(
                f"skill '{name}' is locked by the person; it cannot be changed", "locked"
            )
        return folder

    def checked_file(self, file_path: str, content: str) -> Path:
        """``file_path`` as a path inside a skill folder, once it and ``content`` pass."""
        rel = Path(file_path)
        if rel.is_absolute() or ".." in rel.parts or len(rel.parts) < 2:
            rel = Path()
        if not rel.parts or rel.parts[0] not in SUPPORT_DIRS:
            raise SkillWriteError(
                f"file_path must be under {', '.join(SUPPORT_DIRS)} (e.g. references/x.md), "
                f"without '..'; got {file_path!r}",
                "bad_path",
            )
        if len(content.encode("utf-8")) > MAX_FILE_BYTES:
            raise SkillWriteError(
                f"the file is over {MAX_FILE_BYTES:,} bytes; split it", "too_large"
            )
        self._scan(content, file_path)
        return rel

    def checked(self, folder: Path, content: str) -> Skill:
        """``content`` parsed as ``folder``'s SKILL.md, once it parses and the scan passes."""
        parsed = parse_skill(folder, "user", content)
        if not isinstance(parsed, Skill):
            raise SkillWriteError(
                f"SKILL.md line {parsed.line}: {parsed.message}; nothing was written",
                "invalid",
            )
        self._scan(content, SKILL_FILE)
        return parsed

    @staticmethod
    def _scan(content: str, label: str) -> None:
        result = scan_text(content)
        if result.blocked:
            raise SkillWriteError(
                f"{label} was refused by the threat scan: {result.reason()}; nothing was "
                "written. Remove that text and try again.",
                "threat",
            )

    def _locked(self) -> AbstractContextManager[None]:
        return skills_lock(self.user_dir)


def archive_folder(user_dir: Path, folder: Path) -> Path:
    """Move ``folder`` to ``.archive/<name>-<unix time>`` (callers hold the lock)."""
    archive = user_dir / ARCHIVE_DIR
    archive.mkdir(exist_ok=True)
    target = archive / f"{folder.name}-{int(time.time())}"
    suffix = 1
    while target.exists():
        target = archive / f"{folder.name}-{int(time.time())}-{suffix}"
        suffix += 1
    shutil.move(str(folder), str(target))
    return target


def patched(name: str, text: str, old_text: str, new_text: str) -> str:
    """``text`` with its one occurrence of ``old_text`` replaced; refused unless exactly one."""
    count = text.count(old_text) if old_text else 0
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise SkillWriteError(
            f"old_text {where} in {name}/SKILL.md; give a part that occurs exactly once",
            "no_unique_match",
        )
    return text.replace(old_text, new_text, 1)
