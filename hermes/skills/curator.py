"""One curator pass over the user's skills folder (seeds #268-#271).

``curate(user_dir, now, policy)`` (blocking, under the skills lock):

1. **Stale and archived** (seed #269): each skill the agent created
   (``created_by: agent``), neither pinned nor locked, is judged by its
   activity date (``last_used``, else ``created_at``, else its SKILL.md's
   modification time): unused for ``stale_after_days`` it is marked
   ``stale`` in ``.usage.json`` (a later use clears it); unused for
   ``archive_after_days`` it moves to ``.archive/`` (recoverable). The
   person's own and installed skills are never archived.
2. **Consolidations** (seed #270): pairs of user skills whose words overlap at
   ``similarity`` or more are staged as proposals in ``.curator.json`` for the
   person; nothing is merged. A proposal keeps the more used skill.
3. **Renamed skills** (seed #271): each rename recorded since the last pass
   (``old -> new``) is applied to the other user skills: ``old`` as a whole
   word in their SKILL.md becomes ``new`` (a locked skill, or a rewrite that
   would not parse, is left alone and reported). A failure here is reported,
   never raised: the rest of the pass stands.

The pass records ``last_run`` and a report of what it did.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from .curator_state import KEPT_RUNS, dismissed_pairs, read_state, write_state
from .format import SKILL_FILE, Skill, parse_skill
from .manage import archive_folder
from .scan import scan_text
from .similar import near_duplicates
from .usage import read_usage, skills_lock, write_atomic, write_usage

log = logging.getLogger(__name__)

DAY = 86_400.0


@attrs.frozen(slots=True, kw_only=True)
class CuratorPolicy:
    """``[curator]``: how often a pass runs and what it calls stale (Hermes' defaults)."""

    enabled: bool = True
    interval_hours: float = 168.0
    stale_after_days: float = 14.0
    archive_after_days: float = 30.0
    similarity: float = 0.7
    pinned: tuple[str, ...] = ()
    """``[skills] pinned``: never stale."""

    @property
    def interval(self) -> float:
        """Seconds between two passes."""
        return self.interval_hours * 3600.0

    @classmethod
    def from_config(cls, get: Callable[[str, str], Any]) -> CuratorPolicy:
        """From the daemon's configuration (``get(section, key)``: ``Config.get``)."""
        return cls(
            enabled=bool(get("curator", "enabled")),
            interval_hours=float(get("curator", "interval_hours")),
            stale_after_days=float(get("curator", "stale_after_days")),
            archive_after_days=float(get("curator", "archive_after_days")),
            similarity=float(get("curator", "similarity")),
            pinned=tuple(get("skills", "pinned")),
        )


@attrs.frozen(slots=True, kw_only=True)
class CuratorReport:
    """What one pass did."""

    ran_at: float
    stale: tuple[str, ...] = ()
    archived: tuple[tuple[str, str], ...] = ()
    """(name, where it went)."""
    proposals: tuple[dict[str, Any], ...] = ()
    """The consolidations staged by this pass (new ones only)."""
    rewritten: tuple[tuple[str, str, str], ...] = ()
    """(the skill changed, old name, new name)."""
    skipped: tuple[str, ...] = ()
    """Why a skill or a rewrite was left alone (locked, pinned, would not parse)."""

    def plain(self) -> dict[str, Any]:
        return {
            "ran_at": self.ran_at,
            "stale": list(self.stale),
            "archived": [{"name": n, "to": t} for n, t in self.archived],
            "proposals": list(self.proposals),
            "rewritten": [{"skill": s, "old": o, "new": n} for s, o, n in self.rewritten],
            "skipped": list(self.skipped),
        }

    def summary(self) -> str:
        parts = [
            f"{len(self.stale)} stale",
            f"{len(self.archived)} archived",
            f"{len(self.proposals)} consolidation(s) proposed",
            f"{len(self.rewritten)} reference rewrite(s)",
        ]
        return ", ".join(parts)


def curate(user_dir: Path, policy: CuratorPolicy, now: float | None = None) -> CuratorReport:
    """Run one pass (see the module docstring); records it in ``.curator.json``."""
    now = time.time() if now is None else now
    with skills_lock(user_dir):
        usage = read_usage(user_dir)
        state = read_state(user_dir)
        skills = _user_skills(user_dir)
        stale, archived, skipped = _age(user_dir, skills, usage, policy, now)
        for name, _ in archived:
            skills.pop(name, None)
        write_usage(user_dir, usage)
        rewritten, rename_skips = _rewrite(user_dir, skills, usage, state)
        skipped.extend(rename_skips)
        proposals = _propose(skills, usage, state, policy, now)
        report = CuratorReport(
            ran_at=now,
            stale=tuple(stale),
            archived=tuple(archived),
            proposals=tuple(proposals),
            rewritten=tuple(rewritten),
            skipped=tuple(skipped),
        )
        state["last_run"] = now
        state["runs"] = [*state.get("runs", [])[-(KEPT_RUNS - 1) :], report.plain()]
        write_state(user_dir, state)
    log.info("curator pass: %s", report.summary())
    return report


def _user_skills(user_dir: Path) -> dict[str, Skill]:
    found: dict[str, Skill] = {}
    try:
        entries = sorted(user_dir.iterdir())
    except OSError:
        return found
    for folder in entries:
        if folder.name.startswith(".") or not (folder / SKILL_FILE).is_file():
            continue
        parsed = parse_skill(folder, "user")
        if isinstance(parsed, Skill):
            found[parsed.name] = parsed
    return found


def activity(skill: Skill, record: dict[str, Any]) -> float:
    """When ``skill`` was last used: ``last_used``, else ``created_at``, else SKILL.md's mtime."""
    for key in ("last_used", "created_at"):
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    try:
        return skill.path.stat().st_mtime
    except OSError:
        return time.time()


def _age(
    user_dir: Path,
    skills: dict[str, Skill],
    usage: dict[str, dict[str, Any]],
    policy: CuratorPolicy,
    now: float,
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    stale: list[str] = []
    archived: list[tuple[str, str]] = []
    skipped: list[str] = []
    for name, skill in skills.items():
        record = usage.get(name, {})
        if record.get("created_by") != "agent":
            continue  # the person's own and installed skills are theirs to keep
        if record.get("locked") or name in policy.pinned:
            if now - activity(skill, record) >= policy.stale_after_days * DAY:
                skipped.append(f"{name}: {'locked' if record.get('locked') else 'pinned'}")
            continue
        idle = now - activity(skill, record)
        if idle >= policy.archive_after_days * DAY:
            try:
                target = archive_folder(user_dir, skill.directory)
            except OSError as exc:
                skipped.append(f"{name}: not archived ({exc.strerror or exc})")
                continue
            archived.append((name, str(target)))
            usage.pop(name, None)
        elif idle >= policy.stale_after_days * DAY:
            record["state"] = "stale"
            usage[name] = record
            stale.append(name)
        elif record.pop("state", None) is not None:
            usage[name] = record
    return stale, archived, skipped


def _rewrite(
    user_dir: Path,
    skills: dict[str, Skill],
    usage: dict[str, dict[str, Any]],
    state: dict[str, Any],
) -> tuple[list[tuple[str, str, str]], list[str]]:
    renames = {k: v for k, v in state.get("renames", {}).items() if isinstance(v, str)}
    done: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    for old, new in renames.items():
        pattern = re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(old)}(?![A-Za-z0-9_-])")
        for name, skill in skills.items():
            if name == new:
                continue
            try:
                text = skill.path.read_text(encoding="utf-8")
                changed = pattern.sub(new, text)
                if changed == text:
                    continue
                if usage.get(name, {}).get("locked"):
                    skipped.append(f"{name}: locked, still names {old} (now {new})")
                    continue
                parsed = parse_skill(skill.directory, "user", changed)
                if not isinstance(parsed, Skill) or scan_text(changed).blocked:
                    skipped.append(f"{name}: rewriting {old} -> {new} would not parse")
                    continue
                write_atomic(skill.path, changed)
                skills[name] = parsed
                done.append((name, old, new))
            except (OSError, UnicodeDecodeError) as exc:  # never stops the pass (seed #271)
                log.warning("curator: references in %s not rewritten: %s", name, exc)
                skipped.append(f"{name}: not rewritten ({exc})")
    state["renames"] = {}
    return done, skipped


def _propose(
    skills: dict[str, Skill],
    usage: dict[str, dict[str, Any]],
    state: dict[str, Any],
    policy: CuratorPolicy,
    now: float,
) -> list[dict[str, Any]]:
    live = [p for p in state.get("proposals", []) if isinstance(p, dict)]
    live = [p for p in live if p.get("keep") in skills and p.get("merge") in skills]
    dismissed = {pair for pair in dismissed_pairs(state) if pair <= skills.keys()}
    state["dismissed"] = sorted(sorted(pair) for pair in dismissed)  # gone skills: forgotten
    known = {frozenset((p["keep"], p["merge"])) for p in live} | dismissed
    new: list[dict[str, Any]] = []
    for first, second, score in near_duplicates(list(skills.values()), policy.similarity):
        if frozenset((first.name, second.name)) in known:
            continue
        uses = {s.name: int(usage.get(s.name, {}).get("uses", 0)) for s in (first, second)}
        keep, merge = (first, second) if uses[first.name] >= uses[second.name] else (second, first)
        proposal = {
            "id": f"merge-{merge.name}-into-{keep.name}",
            "keep": keep.name,
            "merge": merge.name,
            "similarity": score,
            "staged_at": now,
            "why": f"{round(score * 100)}% of their words are shared",
        }
        new.append(proposal)
        known.add(frozenset((first.name, second.name)))
    state["proposals"] = [*live, *new]
    return new
