"""What ``hermes skills scan`` looks at: the text a session's prompt would take in, scanned.

The same threat scan (``hermes.skills.scan``) the session, memory and skill
library run, over the same things, so a person sees why something is
``[BLOCKED]`` (the session only logs it): ``SOUL.md`` (a hit is only
reported: it is the person's own file), the project context file for the
working directory, each memory entry, the trusted project's skills; or any
files and skill folders given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes.skills import SKILL_FILE, ScanResult, Skill, SkillLibrary, parse_skill, scan_text
from hermes.skills.library import scan_skill


def _item(what: str, path: Path | str, result: ScanResult, blocked: str) -> dict[str, Any]:
    effect = (
        blocked if result.blocked else ("loaded" if not result.findings else "loaded (caution)")
    )
    return {
        "what": what,
        "path": str(path),
        "verdict": result.verdict,
        "effect": effect,
        "findings": [f.describe() for f in result.findings],
    }


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def prompt_items(
    library: SkillLibrary, cwd: Path, data_dir: Path, *, memory: bool
) -> list[dict[str, Any]]:
    """Each thing a session in ``cwd`` would put in its prompt, with its scan."""
    from hermes.memory import FILE_NAMES, MemoryStore
    from hermes.session.prompt import find_context_file

    items: list[dict[str, Any]] = []
    soul = data_dir / "SOUL.md"
    text = _text(soul)
    if text is not None and text.strip():
        items.append(_item("identity", soul, scan_text(text), "loaded anyway: your own file"))
    found = find_context_file(cwd)
    if found is not None:
        path, text = found
        items.append(_item("context file", path, scan_text(text), "BLOCKED"))
    if memory:
        store = MemoryStore(data_dir / "memories")
        for kind, name in FILE_NAMES.items():
            for number, entry in enumerate(store.entries(kind), start=1):
                items.append(
                    _item(
                        f"memory entry {number} of {name}",
                        store.path(kind),
                        scan_text(entry),
                        "BLOCKED in the prompt, kept in the file",
                    )
                )
    seen = library.look(cwd)
    for skill in seen.sorted():
        if skill.source == "project":
            result = scan_skill(skill) or ScanResult()
            items.append(
                _item(f"project skill {skill.name}", skill.directory, result, "quarantined")
            )
    for quarantined in seen.quarantined:
        items.append(
            _item(
                f"project skill {quarantined.name}",
                quarantined.directory,
                quarantined.scan,
                "quarantined",
            )
        )
    return items


def scan_paths(paths: tuple[Path, ...]) -> list[dict[str, Any]]:
    """Each file, or skill folder (SKILL.md and its supporting text files), scanned."""
    items = []
    for path in paths:
        if path.is_dir():
            parsed = parse_skill(path, "project")
            if not isinstance(parsed, Skill):
                body = _text(path / SKILL_FILE) or ""
                items.append(_item("folder", path, scan_text(body), "BLOCKED"))
            else:
                items.append(
                    _item(
                        f"skill {parsed.name}",
                        path,
                        scan_skill(parsed) or ScanResult(),
                        "quarantined or refused",
                    )
                )
        else:
            items.append(_item("file", path, scan_text(_text(path) or ""), "BLOCKED"))
    return items
