"""``SkillDraft``: skill writes held until they are committed (a background review's, seed #265).

It answers ``skill_manage``'s create, edit, patch and write_file with the same
checks as ``SkillWriter`` (name, front matter, threat scan, locks, paths),
against the user folder as amended by the draft's own earlier writes, and
writes nothing. ``commit`` then writes each touched skill as the draft left it
(its whole ``SKILL.md``, then its files, every check made again), or, with
``stage``, keeps each one for the person (``pending.py``). A review that is
cancelled never commits, so it leaves no partial writes. delete and rename are
refused here: an unattended writer does not remove know-how (the curator
archives unused skills, the person removes them).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from .format import SKILL_FILE, Skill
from .manage import SkillWriteError, SkillWriter, patched
from .pending import SkillChange, apply_change, skill_text, stage

_NOT_HERE = (
    "skills are not {what} by a background review or while [skills] write_approval holds "
    "changes for the person; the curator archives unused skills and the person removes "
    "them (hermes skills remove). Nothing changed."
)


@attrs.frozen(slots=True)
class SkillDraftReport:
    """What a commit did: changes written, staged (ids), and refused (with why)."""

    written: tuple[str, ...] = ()
    staged: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()

    def summary(self) -> str:
        lines = [f"Skill written: {w}." for w in self.written]
        lines += [f"Skill change staged for approval: {s}." for s in self.staged]
        lines += [f"Skill change not written: {f}" for f in self.failed]
        return "\n".join(lines) or "No skill changes."


@attrs.define(slots=True)
class _Touched:
    new: bool
    content: str | None = None
    files: dict[str, str] = attrs.field(factory=dict)


class SkillDraft:
    """An in-memory overlay over one user skills folder (see the module docstring)."""

    def __init__(self, writer: SkillWriter, *, stage: bool = False) -> None:
        self.writer = writer
        self.stage = stage
        self._touched: dict[str, _Touched] = {}
        self._committed = False

    @property
    def user_dir(self) -> Path:
        return self.writer.user_dir

    @property
    def changes(self) -> list[SkillChange]:
        return [
            SkillChange(name=name, new=t.new, content=t.content, files=dict(t.files))
            for name, t in self._touched.items()
        ]

    def _open(self) -> None:
        if self._committed:
            raise SkillWriteError("this draft was already committed", "committed")

    def _current(self, name: str) -> tuple[Path, str]:
        """The skill's folder and its SKILL.md as the draft sees it (refused if none)."""
        self._open()
        folder = self.writer.folder(name)
        touched = self._touched.get(name)
        if touched is not None and touched.content is not None:
            return folder, touched.content
        folder = self.writer.existing(name)
        text = skill_text(self.user_dir, name)
        if text is None:
            raise SkillWriteError(f"{name}/SKILL.md cannot be read", "unknown_skill")
        return folder, text

    def create(self, name: str, content: str) -> Skill:
        self._open()
        folder = self.writer.folder(name)
        if name in self._touched or (folder / SKILL_FILE).exists() or folder.exists():
            raise SkillWriteError(
                f"skill '{name}' already exists; use edit or patch to change it", "exists"
            )
        skill = self.writer.checked(folder, content)
        self._touched[name] = _Touched(new=True, content=content)
        return skill

    def edit(self, name: str, content: str) -> Skill:
        folder, _ = self._current(name)
        skill = self.writer.checked(folder, content)
        self._touch(name).content = content
        return skill

    def patch(self, name: str, old_text: str, new_text: str) -> Skill:
        folder, text = self._current(name)
        content = patched(name, text, old_text, new_text)
        skill = self.writer.checked(folder, content)
        self._touch(name).content = content
        return skill

    def write_file(self, name: str, file_path: str, content: str) -> Path:
        folder, _ = self._current(name)
        rel = self.writer.checked_file(file_path, content)
        self._touch(name).files[rel.as_posix()] = content
        return folder / rel

    def delete(self, name: str) -> Path:
        raise SkillWriteError(_NOT_HERE.format(what="deleted"), "not_in_draft")

    def rename(self, name: str, new_name: str) -> Skill:
        raise SkillWriteError(_NOT_HERE.format(what="renamed"), "not_in_draft")

    def _touch(self, name: str) -> _Touched:
        return self._touched.setdefault(name, _Touched(new=False))

    def commit(self, origin: str) -> SkillDraftReport:
        """Write (or stage) each touched skill; blocking (run it in a thread)."""
        self._open()
        self._committed = True
        written: list[str] = []
        staged: list[str] = []
        failed: list[str] = []
        for change in self.changes:
            try:
                if self.stage:
                    staged.append(f"{change.describe()} [{stage(self.user_dir, change, origin)}]")
                else:
                    written.append(apply_change(self.writer, change))
            except (SkillWriteError, OSError) as exc:
                failed.append(f"{change.describe()}: {exc}")
        return SkillDraftReport(tuple(written), tuple(staged), tuple(failed))
