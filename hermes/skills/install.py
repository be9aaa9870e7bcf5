"""Installing a skill folder into the user's skills, and removing one (seeds #133, #134, #151).

``install(path)`` copies a skill folder (it must parse) into ``<data_dir>/skills``
after a threat scan of its ``SKILL.md`` and supporting text files. The install
policy is the seed's table: the scan's worst finding sets the verdict (critical
is ``dangerous``, high ``caution``, else ``safe``) and where the folder lies
sets the trust level: inside the bundled skills ``builtin``, inside a project
in ``[skills] trusted_projects`` ``trusted``, anywhere else ``community``.
Builtin always installs, trusted unless dangerous, community only when safe.
``force`` (the person's own choice, never the agent's) lifts a block except a
dangerous verdict from a community or trusted source. No skill is locked at
install (seed #151). The copy is made beside the target and renamed into
place, under the skills lock; a name already present is refused.

``remove(name)`` moves a user skill to ``.archive/`` (recoverable); a locked
skill is refused until the person unlocks it.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Literal

import attrs

from .format import SKILL_FILE, Skill, parse_skill
from .library import BUNDLED_DIR, SkillLibrary, project_root, scan_skill
from .manage import SkillWriteError, archive_folder
from .scan import ScanResult, Verdict
from .usage import read_usage, skills_lock, write_usage

Trust = Literal["builtin", "trusted", "community"]

INSTALL_POLICY: dict[Trust, dict[Verdict, bool]] = {
    "builtin": {"safe": True, "caution": True, "dangerous": True},
    "trusted": {"safe": True, "caution": True, "dangerous": False},
    "community": {"safe": True, "caution": False, "dangerous": False},
}
"""Whether a verdict installs without ``force``, by trust level (seed #133)."""
MAX_FILES = 500
MAX_TOTAL_BYTES = 5_000_000
"""Bounds on a skill folder copied in (a skill is text, not a data set)."""


@attrs.frozen(slots=True, kw_only=True)
class Installed:
    """A skill copied into the user's folder, and what the scan said."""

    name: str
    path: Path
    source: Path
    trust: Trust
    scan: ScanResult
    forced: bool


def should_allow(verdict: Verdict, trust: Trust, force: bool) -> bool:
    """The seed's table; ``force`` never lifts a dangerous verdict below builtin."""
    if INSTALL_POLICY[trust][verdict]:
        return True
    return force and not (verdict == "dangerous" and trust != "builtin")


def trust_of(folder: Path, library: SkillLibrary) -> Trust:
    """``builtin`` inside the bundled skills, ``trusted`` inside a trusted project, else
    ``community``."""
    folder = folder.resolve()
    bundled = (library.bundled_dir or BUNDLED_DIR).resolve()
    if folder.is_relative_to(bundled):
        return "builtin"
    return "trusted" if library.is_trusted(project_root(folder)) else "community"


def install(library: SkillLibrary, path: Path, *, force: bool = False) -> Installed:
    """Copy the skill folder at ``path`` into the user's skills (blocking; see the module)."""
    source = Path(os.path.expanduser(path))
    if not (source / SKILL_FILE).is_file():
        raise SkillWriteError(f"{source} is not a skill folder (no {SKILL_FILE} in it)", "invalid")
    source = source.resolve()
    try:
        _check_tree(source)
    except OSError as exc:
        raise SkillWriteError(f"not installed: {exc.strerror or exc}", "io") from None
    parsed = parse_skill(source, "user")
    if not isinstance(parsed, Skill):
        raise SkillWriteError(f"not installed: {parsed}", "invalid")
    scan = scan_skill(parsed) or ScanResult()
    trust = trust_of(source, library)
    if not should_allow(scan.verdict, trust, force):
        can_force = should_allow(scan.verdict, trust, True)
        hint = " (--force installs it anyway)" if can_force else ""
        raise SkillWriteError(
            f"not installed: the threat scan calls {parsed.name} {scan.verdict} "
            f"({scan.reason()}) and a {trust} skill installs only when "
            f"{'not dangerous' if trust == 'trusted' else 'safe'}{hint}",
            "needs_force" if can_force else "threat",
        )
    user_dir = library.user_dir
    with skills_lock(user_dir):
        target = user_dir / parsed.name
        if target.exists():
            raise SkillWriteError(
                f"a skill '{parsed.name}' is already in {user_dir}; remove it first "
                f"(hermes skills remove {parsed.name})",
                "exists",
            )
        staging = user_dir / f".install-{parsed.name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            shutil.copytree(source, staging, symlinks=True)
            os.rename(staging, target)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise SkillWriteError(f"not installed: {exc.strerror or exc}", "io") from None
        usage = read_usage(user_dir)
        record = usage.setdefault(parsed.name, {})
        record.update(installed_from=str(source), installed_at=time.time())
        write_usage(user_dir, usage)
    return Installed(
        name=parsed.name, path=target, source=source, trust=trust, scan=scan, forced=force
    )


def remove(user_dir: Path, name: str) -> Path:
    """Archive the user skill ``name`` (recoverable); returns where it went (blocking)."""
    with skills_lock(user_dir):
        folder = user_dir / name
        if name.startswith(".") or "/" in name or not (folder / SKILL_FILE).is_file():
            raise SkillWriteError(
                f"no skill '{name}' in {user_dir} (only your own skills can be removed; "
                "bundled and project skills are read-only)",
                "unknown_skill",
            )
        usage = read_usage(user_dir)
        if usage.get(name, {}).get("locked"):
            raise SkillWriteError(
                f"skill '{name}' is locked; unlock it first (hermes curator unlock {name})",
                "locked",
            )
        target = archive_folder(user_dir, folder)
        usage.pop(name, None)
        write_usage(user_dir, usage)
        return target


def _check_tree(source: Path) -> None:
    """No symlinks (a skill holds its own files), and bounded in files and bytes."""
    count = total = 0
    for root, dirs, files in os.walk(source):
        for entry in (*dirs, *files):
            path = Path(root) / entry
            if path.is_symlink():
                raise SkillWriteError(
                    f"not installed: {path} is a symlink (a skill must hold its files)", "invalid"
                )
        for entry in files:
            count += 1
            total += (Path(root) / entry).stat().st_size
        if count > MAX_FILES or total > MAX_TOTAL_BYTES:
            raise SkillWriteError(
                f"not installed: {source} is over {MAX_FILES} files or {MAX_TOTAL_BYTES:,} bytes",
                "too_large",
            )
