"""The skill format: a folder with ``SKILL.md`` (YAML front matter, Markdown body).

::

    my-skill/
        SKILL.md        ---\\nname: my-skill\\ndescription: one line\\n---\\nbody
        references/     optional: documents skill_view can load one at a time
        scripts/        optional: helpers the body tells the agent to run
        assets/         optional: templates and other files

Front matter keys: ``name`` (lower-case letters, digits and hyphens, at most 64,
the folder's name), ``description`` (one line, at most 1,024 characters),
optional ``version``, ``platforms`` (``linux``, ``macos``, ``windows``) and
``requires`` (tool names the skill needs). A file that breaks a rule is a
``SkillProblem`` naming the file and line; it is skipped, never fatal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

SKILL_FILE = "SKILL.md"
SUPPORT_DIRS = ("references", "scripts", "assets")
MAX_SKILL_BYTES = 100_000
"""A SKILL.md larger than this is refused (the body would crowd out the context)."""
MAX_DESCRIPTION = 1024
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
PLATFORMS = ("linux", "macos", "windows")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (several times faster), else PyYAML's."""
KNOWN_KEYS = frozenset({"name", "description", "version", "platforms", "requires", "license"})


@attrs.frozen(slots=True, kw_only=True)
class Skill:
    """One parsed skill: its front matter, body and where it came from."""

    name: str
    description: str
    body: str
    directory: Path
    source: str
    """``project``, ``user`` or ``bundled``."""
    version: str | None = None
    platforms: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    body_line: int = 1
    """Line of SKILL.md where the body starts."""

    @property
    def path(self) -> Path:
        return self.directory / SKILL_FILE

    def supporting_files(self) -> tuple[str, ...]:
        """Paths (relative to the folder) of the files under references/, scripts/, assets/."""
        found: list[str] = []
        for sub in SUPPORT_DIRS:
            root = self.directory / sub
            if root.is_dir() and not root.is_symlink():
                found.extend(
                    str(p.relative_to(self.directory))
                    for p in sorted(root.rglob("*"))
                    if p.is_file() and not p.is_symlink()
                )
        return tuple(found)


@attrs.frozen(slots=True)
class SkillProblem:
    """Why a skill was skipped: the file, the line (1-based, 0 when unknown), what is wrong."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


def parse_skill(directory: Path, source: str, text: str | None = None) -> Skill | SkillProblem:
    """The skill in ``directory`` (its SKILL.md read unless ``text`` is given), or the problem."""
    path = directory / SKILL_FILE
    if text is None:
        try:
            if path.is_symlink():
                return SkillProblem(path, 0, "SKILL.md is a symlink; skills must hold their files")
            size = path.stat().st_size
            if size > MAX_SKILL_BYTES:
                return SkillProblem(
                    path, 0, f"too large: {size:,} bytes (at most {MAX_SKILL_BYTES:,})"
                )
            raw = path.read_bytes()
        except OSError as exc:
            return SkillProblem(path, 0, f"cannot be read: {exc.strerror or exc}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            return SkillProblem(path, line, "not UTF-8 text")
    elif len(text.encode("utf-8")) > MAX_SKILL_BYTES:
        return SkillProblem(path, 0, f"too large (at most {MAX_SKILL_BYTES:,} bytes)")
    return _parse_text(path, directory, source, text)


def _parse_text(path: Path, directory: Path, source: str, text: str) -> Skill | SkillProblem:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return SkillProblem(path, 1, "must start with a '---' line opening the YAML front matter")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return SkillProblem(path, 1, "the front matter is never closed by a '---' line")
    try:
        meta = yaml.load("\n".join(lines[1:end]), Loader=_LOADER)  # a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1 for '---', +1 for 1-based
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return SkillProblem(path, line, f"front matter is not valid YAML: {problem}")
    if not isinstance(meta, Mapping):
        return SkillProblem(path, 2, "front matter must be a mapping of keys to values")
    checked = _check_meta(meta, directory)
    if isinstance(checked, str):
        return SkillProblem(path, _key_line(lines[1:end], checked), checked)
    body = "\n".join(lines[end + 1 :]).strip("\n")
    if not body.strip():
        return SkillProblem(path, end + 1, "the body (after the front matter) is empty")
    return Skill(source=source, directory=directory, body=body, body_line=end + 2, **checked)


def _key_line(meta_lines: list[str], message: str) -> int:
    """The line of the key a message names (``'name' ...``), else the front matter's first."""
    found = re.match(r"'(\w+)'", message)
    if found:
        for i, line in enumerate(meta_lines):
            if line.startswith(found.group(1) + ":"):
                return i + 2
    return 2


def _strings(meta: Mapping[str, Any], key: str) -> tuple[str, ...] | str:
    value = meta.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return f"'{key}' must be a list of strings"
    return tuple(value)


def _check_meta(meta: Mapping[str, Any], directory: Path) -> dict[str, Any] | str:
    """The Skill fields from front matter, or what is wrong (naming the key first)."""
    unknown = sorted(str(k) for k in meta if k not in KNOWN_KEYS)
    if unknown:
        return f"'{unknown[0]}' is not a front matter key (known: {', '.join(sorted(KNOWN_KEYS))})"
    name = meta.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        return "'name' must be lower-case letters, digits and hyphens (at most 64)"
    if name != directory.name:
        return f"'name' is {name!r} but the folder is {directory.name!r}: they must match"
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return "'description' is missing: one line saying when to use the skill"
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        return f"'description' is {len(description)} characters (at most {MAX_DESCRIPTION})"
    version = meta.get("version")
    if version is not None and not isinstance(version, str | int | float):
        return "'version' must be a string"
    platforms = _strings(meta, "platforms")
    if isinstance(platforms, str):
        return platforms
    bad = [p for p in platforms if p not in PLATFORMS]
    if bad:
        return f"'platforms' has {bad[0]!r}; use {', '.join(PLATFORMS)}"
    requires = _strings(meta, "requires")
    if isinstance(requires, str):
        return requires
    return {
        "name": name,
        "description": description,
        "version": None if version is None else str(version),
        "platforms": platforms,
        "requires": requires,
    }
