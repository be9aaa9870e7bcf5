"""Where skills live and which one a name means.

Three places, highest precedence first (seed #25: project over local):

- **project**: ``.hermes/skills`` at the project root (the git root above the
  working directory, else the directory itself), read only when that root is
  in ``[skills] trusted_projects`` (seed #26: none is, on a fresh install);
  each project skill is threat-scanned and a dangerous one is quarantined;
- **user**: ``<data dir>/skills``, the person's own and the agent's;
- **bundled**: the skills shipped inside this package.

Parsed skills are cached by (path, mtime, size), so the per-turn look that
spots a changed set (seed #27) stats files and parses only what changed.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from .format import SKILL_FILE, Skill, SkillProblem, parse_skill
from .scan import ScanResult, scan_text

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
SOURCES = ("project", "user", "bundled")


def current_platform() -> str:
    """``linux``, ``macos`` or ``windows`` (the names front matter ``platforms`` uses)."""
    if sys.platform.startswith("darwin"):
        return "macos"
    return "windows" if sys.platform.startswith("win") else "linux"


def project_root(cwd: Path) -> Path:
    """The git root above ``cwd`` (inclusive), else ``cwd`` itself; resolved."""
    cwd = cwd.resolve()
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


@attrs.frozen(slots=True)
class Quarantined:
    """A project skill kept out of the index: its folder and the scan that blocked it."""

    name: str
    directory: Path
    scan: ScanResult


@attrs.frozen(slots=True, kw_only=True)
class SkillSet:
    """What one look at the skill places found: usable skills by name, and what was not."""

    skills: Mapping[str, Skill]
    problems: tuple[SkillProblem, ...] = ()
    quarantined: tuple[Quarantined, ...] = ()
    shadowed: tuple[Skill, ...] = ()
    """Skills hidden by a same-named one of higher precedence."""
    untrusted_project: Path | None = None
    """The project root whose .hermes/skills exist but were not read (not trusted)."""

    def get(self, name: str) -> Skill | None:
        """The skill called ``name`` (``_`` and ``-`` are the same), or None."""
        return self.skills.get(name.replace("_", "-").lower())

    def sorted(self) -> list[Skill]:
        return [self.skills[name] for name in sorted(self.skills)]


@attrs.define(slots=True)
class SkillLibrary:
    """The skill places of one daemon; ``look(cwd)`` gives the set a session in ``cwd`` sees."""

    user_dir: Path
    trusted_projects: tuple[Path, ...] = ()
    bundled_dir: Path | None = BUNDLED_DIR
    pinned: tuple[str, ...] = ()
    """Names loaded in full at session start (``[skills] pinned``, seed #29)."""
    write_approval: bool = False
    """The agent's skill changes wait for the person (``[skills] write_approval``, seed #265)."""
    _cache: dict[Path, tuple[tuple[int, int], Skill | SkillProblem, ScanResult | None]] = (
        attrs.field(factory=dict, init=False, repr=False)
    )
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False)

    def is_trusted(self, root: Path) -> bool:
        root = root.resolve()
        return any(root == Path(os.path.expanduser(p)).resolve() for p in self.trusted_projects)

    def places(self, cwd: Path | None) -> list[tuple[str, Path]]:
        """(source, directory) of each place to read for ``cwd``, highest precedence first."""
        places: list[tuple[str, Path]] = []
        if cwd is not None:
            root = project_root(cwd)
            if self.is_trusted(root):
                places.append(("project", root / ".hermes" / "skills"))
        places.append(("user", self.user_dir))
        if self.bundled_dir is not None:
            places.append(("bundled", self.bundled_dir))
        return places

    def look(self, cwd: Path | None = None, *, tools: Iterable[str] | None = None) -> SkillSet:
        """The skills seen from ``cwd`` (blocking: reads files; call in a thread when many).

        ``tools``, when given, hides skills whose ``requires`` names a tool not in it.
        Skills for another platform are hidden.
        """
        available = None if tools is None else frozenset(tools)
        platform = current_platform()
        chosen: dict[str, Skill] = {}
        problems: list[SkillProblem] = []
        quarantined: list[Quarantined] = []
        shadowed: list[Skill] = []
        with self._lock:
            for source, directory in self.places(cwd):
                for item, scan in self._read_place(source, directory):
                    if isinstance(item, SkillProblem):
                        problems.append(item)
                        continue
                    if scan is not None and scan.blocked:
                        quarantined.append(Quarantined(item.name, item.directory, scan))
                        continue
                    if item.platforms and platform not in item.platforms:
                        continue
                    if available is not None and not set(item.requires) <= available:
                        continue
                    if item.name in chosen:
                        shadowed.append(item)
                    else:
                        chosen[item.name] = item
        untrusted = None
        if cwd is not None:
            root = project_root(cwd)
            if not self.is_trusted(root) and (root / ".hermes" / "skills").is_dir():
                untrusted = root
        for problem in problems:
            log.warning("skill skipped: %s", problem)
        return SkillSet(
            skills=chosen,
            problems=tuple(problems),
            quarantined=tuple(quarantined),
            shadowed=tuple(shadowed),
            untrusted_project=untrusted,
        )

    def _read_place(
        self, source: str, directory: Path
    ) -> list[tuple[Skill | SkillProblem, ScanResult | None]]:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return []
        found = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            skill_dir = Path(entry.path)
            try:
                info = os.stat(skill_dir / SKILL_FILE, follow_symlinks=False)
            except OSError:
                continue  # not a skill folder
            key = (info.st_mtime_ns, info.st_size)
            cached = self._cache.get(skill_dir)
            if cached is not None and cached[0] == key:
                found.append((cached[1], cached[2]))
                continue
            try:
                item: Skill | SkillProblem = parse_skill(skill_dir, source)
                scan = scan_skill(item) if source == "project" else None
            except Exception as exc:  # a skill never fails a turn: report it, skip it
                log.exception("skill %s could not be read", skill_dir)
                item, scan = SkillProblem(skill_dir / SKILL_FILE, 0, f"unreadable: {exc}"), None
            self._cache[skill_dir] = (key, item, scan)
            found.append((item, scan))
        return found


def scan_skill(item: Skill | SkillProblem) -> ScanResult | None:
    """The threat scan of a project skill: SKILL.md and its supporting text files."""
    if isinstance(item, SkillProblem):
        return None
    try:
        findings = list(scan_text(item.path.read_text(encoding="utf-8")).findings)
    except (OSError, UnicodeDecodeError):
        findings = list(scan_text(item.description + "\n" + item.body).findings)
    for rel in item.supporting_files():
        try:
            text = (item.directory / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # binary assets are not prompt text
        findings.extend(scan_text(text).findings)
    findings.sort(key=lambda f: f.severity != "critical")
    return ScanResult(tuple(findings))
