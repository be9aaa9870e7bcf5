"""Plain-data views of the skills, shared by ``hermes skills`` and the daemon's ``skills.*``.

Each function is blocking (it reads the skill folders) and returns JSON-ready
data; a refusal is a ``SkillWriteError`` whose ``reason`` is the wire code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .install import Installed, install, remove
from .library import SkillLibrary
from .manage import SkillWriteError
from .pending import SkillChange, approve, pending, reject
from .tool import view
from .usage import read_usage


def listing(library: SkillLibrary, cwd: Path | None) -> dict[str, Any]:
    """The skills a session in ``cwd`` sees, and what was skipped or quarantined, with why."""
    seen = library.look(cwd)
    usage = read_usage(library.user_dir)
    return {
        "skills": [
            {
                "name": s.name,
                "description": s.description,
                "source": s.source,
                "path": str(s.directory),
                "locked": s.source == "user" and bool(usage.get(s.name, {}).get("locked")),
            }
            for s in seen.sorted()
        ],
        "problems": [str(p) for p in seen.problems],
        "quarantined": [
            {"name": q.name, "path": str(q.directory), "reason": q.scan.reason()}
            for q in seen.quarantined
        ],
        "untrusted_project": None
        if seen.untrusted_project is None
        else str(seen.untrusted_project),
        "user_dir": str(library.user_dir),
    }


def shown(library: SkillLibrary, cwd: Path | None, name: str) -> dict[str, Any]:
    """One skill as ``skill_view`` gives it: its body and supporting files."""
    seen = library.look(cwd)
    outcome = view(seen, name, None)
    if outcome.is_error:
        reason = str(outcome.details.get("reason", "unknown_skill"))
        raise SkillWriteError(outcome.content, reason)
    skill = seen.get(name)
    assert skill is not None
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source,
        "path": str(skill.directory),
        "version": skill.version,
        "files": list(skill.supporting_files()),
        "text": outcome.content,
    }


def installed(library: SkillLibrary, path: Path, *, force: bool) -> dict[str, Any]:
    """Install the folder at ``path`` (``install.install``) and describe the result."""
    done: Installed = install(library, path, force=force)
    return {
        "name": done.name,
        "path": str(done.path),
        "source": str(done.source),
        "trust": done.trust,
        "verdict": done.scan.verdict,
        "findings": [f.describe() for f in done.scan.findings],
        "forced": done.forced,
    }


def removed(library: SkillLibrary, name: str) -> dict[str, Any]:
    """Archive the user skill ``name`` and say where it went."""
    return {"name": name, "archived_to": str(remove(library.user_dir, name))}


def staged(library: SkillLibrary) -> dict[str, Any]:
    """The skill changes waiting for the person (``[skills] write_approval``), oldest first."""
    changes = []
    for record in pending(library.user_dir):
        change = SkillChange.from_plain(record)
        changes.append(
            {
                "id": record["id"],
                "name": change.name,
                "what": change.describe(),
                "origin": record.get("origin", ""),
                "at": record.get("at"),
                "new": change.new,
                "content": change.content,
                "files": dict(change.files),
            }
        )
    return {"changes": changes, "user_dir": str(library.user_dir)}


def decided(library: SkillLibrary, change_id: str, *, approved: bool) -> dict[str, Any]:
    """Approve (write, every check made again) or reject the staged change ``change_id``."""
    done = (approve if approved else reject)(library.user_dir, change_id)
    return {"id": change_id, "approved": approved, "done": done}
